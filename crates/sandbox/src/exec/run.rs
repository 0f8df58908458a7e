//! Running one command: check, resolve, sandbox, spawn, watch for timeout
//! and cancel, kill the group, drain, report.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::env::command_env;
use super::error::ExecError;
use super::pipes::Pipes;
use super::process::{group_members, leader_exited, signal_group, spawn};
use super::request::{ExecOutcome, ExecRequest};
use crate::cancel::CancelToken;
use crate::sandbox::{Grants, prepare};

/// Longest wait between looks at the clock and the cancel token.
const TICK: Duration = Duration::from_millis(10);
/// Grace between SIGTERM and SIGKILL after a cancel.
pub const CANCEL_GRACE: Duration = Duration::from_millis(100);
/// How long to keep reading pipes after the group is gone; a process that
/// left the group may hold them open forever.
pub const DRAIN_LIMIT: Duration = Duration::from_millis(500);

/// Runs `req` to completion, timeout or cancel. Refusals, a missing
/// program, a bad cwd and a missing required sandbox layer are errors
/// raised before anything is spawned.
pub fn run(req: &ExecRequest, cancel: &CancelToken) -> Result<ExecOutcome, ExecError> {
    req.allow.check(&req.argv)?;
    let program = req.argv.first().cloned().unwrap_or_default();
    let resolved = req.search_path.resolve(&program)?;
    let workspace = canonical(&req.workspace, "workspace")?;
    let cwd = canonical(&req.cwd, "working directory")?;
    if !cwd.starts_with(&workspace) {
        return Err(ExecError::CwdOutsideWorkspace { cwd, workspace });
    }
    let scratch = Scratch::new(req.scratch.as_deref())?;
    let env = command_env(
        &req.search_path,
        &req.toolchain,
        &scratch.home(),
        &scratch.tmp(),
        &req.extra_env,
    )?;
    let mut read = req.toolchain.readable();
    read.extend(req.search_path.dirs().iter().cloned());
    let grants = Grants {
        read,
        write: vec![workspace, scratch.root().to_path_buf()],
    };
    let prepared = prepare(&req.sandbox, &grants, req.timeout)?;

    let start = Instant::now();
    let mut child = spawn(
        &resolved,
        &req.argv,
        &cwd,
        &env,
        prepared.child,
        req.stdin.is_some(),
    )
    .map_err(|source| ExecError::Spawn {
        program: program.clone(),
        source,
    })?;
    if let (Some(bytes), Some(pipe)) = (&req.stdin, child.stdin.take()) {
        feed_stdin(pipe, bytes.clone());
    }
    let sandbox_layers = prepared.layers.clone();
    drop(prepared); // the child holds its own copy of the ruleset now
    let watched = watch(&mut child, req, cancel, start);
    let (status, watch) = match watched {
        Ok(pair) => pair,
        Err(err) => {
            // Never leave a group behind on an internal error.
            if let Ok(pid) = i32::try_from(child.id()) {
                signal_group(Pid::from_raw(pid), Signal::SIGKILL);
            }
            let _ = child.wait();
            return Err(err);
        }
    };
    Ok(ExecOutcome {
        program,
        resolved,
        argc: req.argv.len(),
        exit_code: status.code(),
        signal: status.signal(),
        duration: start.elapsed(),
        stdout: watch.stdout,
        stderr: watch.stderr,
        timed_out: watch.timed_out,
        cancelled: watch.cancelled,
        leaked: watch.leaked,
        drain_timed_out: watch.drain_timed_out,
        oom: false,
        sandbox_layers,
    })
}

struct Watched {
    stdout: super::output::Captured,
    stderr: super::output::Captured,
    timed_out: bool,
    cancelled: bool,
    leaked: bool,
    drain_timed_out: bool,
}

/// The supervision loop: drain output, and on timeout or cancel send
/// SIGTERM to the group, then SIGKILL after the grace.
fn watch(
    child: &mut Child,
    req: &ExecRequest,
    cancel: &CancelToken,
    start: Instant,
) -> Result<(std::process::ExitStatus, Watched), ExecError> {
    let pid = i32::try_from(child.id())
        .map(Pid::from_raw)
        .map_err(|_| ExecError::Io {
            action: "read the child's pid".into(),
            source: std::io::Error::other("pid out of range"),
        })?;
    let mut pipes = Pipes::new(child.stdout.take(), child.stderr.take(), req.output_cap)
        .map_err(ExecError::io("make the output pipes non-blocking"))?;
    let deadline = start + req.timeout;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut kill_at: Option<Instant> = None;
    let mut killed = false;
    loop {
        if !pipes.pump(TICK) {
            // Both pipes closed: wait on the cancel token instead.
            cancel.wait_timeout(TICK);
        }
        if leader_exited(pid).map_err(ExecError::io("wait for the command"))? {
            break;
        }
        let now = Instant::now();
        match kill_at {
            None if cancel.is_cancelled() => {
                cancelled = true;
                signal_group(pid, Signal::SIGTERM);
                kill_at = Some(now + req.kill_grace.min(CANCEL_GRACE));
            }
            None if now >= deadline => {
                timed_out = true;
                signal_group(pid, Signal::SIGTERM);
                kill_at = Some(now + req.kill_grace);
            }
            Some(at) if !killed && now >= at => {
                signal_group(pid, Signal::SIGKILL);
                killed = true;
            }
            _ => {}
        }
    }
    // The leader is a zombie, so the group id is still reserved: kill
    // whatever is left in it, then reap.
    let leaked = group_members(pid) > 0;
    signal_group(pid, Signal::SIGKILL);
    let status = child.wait().map_err(ExecError::io("reap the command"))?;
    let drain_timed_out = pipes.drain_until(Instant::now() + DRAIN_LIMIT);
    let (stdout, stderr) = pipes.finish();
    Ok((
        status,
        Watched {
            stdout,
            stderr,
            timed_out,
            cancelled,
            leaked,
            drain_timed_out,
        },
    ))
}

/// Writes `bytes` to the child's stdin on a detached thread, then closes
/// it. A child that never reads cannot block the supervision loop: the
/// thread alone waits, and its write fails (EPIPE, SIGPIPE being ignored by
/// the Rust runtime) once the group is killed and the pipe's last reader is
/// gone. If a thread cannot be started, the child gets no input.
fn feed_stdin(mut pipe: std::process::ChildStdin, bytes: Vec<u8>) {
    let _ = std::thread::Builder::new()
        .name("exec-stdin".to_string())
        .spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
            // Dropping the pipe sends end of file.
        });
}

fn canonical(path: &Path, what: &str) -> Result<PathBuf, ExecError> {
    path.canonicalize().map_err(ExecError::io(format!(
        "resolve the {what} {}",
        path.display()
    )))
}

/// The private HOME and TMPDIR of a command.
struct Scratch {
    root: PathBuf,
    _owned: Option<tempfile::TempDir>,
}

impl Scratch {
    fn new(given: Option<&Path>) -> Result<Scratch, ExecError> {
        let (root, owned) = match given {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(ExecError::io(format!("create {}", dir.display())))?;
                (canonical(dir, "scratch directory")?, None)
            }
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("agent-runtime-exec-")
                    .tempdir()
                    .map_err(ExecError::io("create a scratch directory"))?;
                (canonical(dir.path(), "scratch directory")?, Some(dir))
            }
        };
        let scratch = Scratch {
            root,
            _owned: owned,
        };
        for dir in [scratch.home(), scratch.tmp()] {
            std::fs::create_dir_all(&dir)
                .map_err(ExecError::io(format!("create {}", dir.display())))?;
        }
        Ok(scratch)
    }

    fn root(&self) -> &Path {
        &self.root
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }
}
