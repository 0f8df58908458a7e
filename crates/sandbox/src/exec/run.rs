//! Running one command: check, resolve, sandbox, spawn, watch for timeout
//! and cancel, kill the group, drain, report.

use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::child::Image;
use super::env::command_env;
use super::error::ExecError;
use super::pipes::Pipes;
use super::process::{Spawned, group_members, leader_exited, pidfd, reap, signal_group, spawn};
use super::request::{ExecOutcome, ExecRequest};
use super::scratch::Scratch;
use crate::cancel::CancelToken;
use crate::sandbox::{
    Grants, Layer, NETWORK_READ, PooledCgroup, Prepared, ReuseKey, SCRATCH, SandboxMode, prepare,
    prepare_keyed, private_root_available,
};
use crate::zygote::ZygoteError;

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
    let resolved = match &req.program_path {
        Some(path) => path.clone(),
        None => req.search_path.resolve(&program)?,
    };
    let workspace = canonical(&req.workspace, "workspace")?;
    let cwd = canonical(&req.cwd, "working directory")?;
    if !cwd.starts_with(&workspace) {
        return Err(ExecError::CwdOutsideWorkspace { cwd, workspace });
    }
    // Inside its own root a command gets a fresh tmpfs for HOME and TMPDIR
    // (no host directory to make and remove); otherwise a private host
    // directory.
    let scratch_in_root = req.scratch.is_none() && private_root_available(&req.sandbox);
    let scratch = if scratch_in_root {
        None
    } else {
        Some(Scratch::new(req.scratch.as_deref())?)
    };
    let (home, tmp) = match &scratch {
        Some(scratch) => (scratch.home(), scratch.tmp()),
        None => {
            let dir = Path::new(SCRATCH);
            (dir.join("home"), dir.join("tmp"))
        }
    };
    let env = command_env(
        &req.search_path,
        &req.toolchain,
        &home,
        &tmp,
        &req.extra_env,
    )?;
    // What a sandbox grants: nothing to look up without one.
    let mut read = Vec::new();
    if req.sandbox.mode != SandboxMode::Off {
        read = req.toolchain.readable();
        read.extend(if req.lazy_grants {
            req.search_path.grants_for_program(&resolved)
        } else {
            req.search_path.grants()
        });
        // A toolchain inside a directory the policy makes writable (a
        // venv a setup is filling in its cache) is reached through that
        // grant: a read-only grant of it would shadow the write.
        read.retain(|path| !inside_writable(path, &req.sandbox.writable));
        if req.sandbox.network {
            // Name resolution, for commands that may reach the network.
            read.extend(NETWORK_READ.iter().map(PathBuf::from));
        }
    }
    let mut write = match &scratch {
        Some(scratch) => vec![scratch.home(), scratch.tmp()],
        None => Vec::new(),
    };
    if req.sandbox.workspace_read_only {
        read.push(workspace);
    } else {
        write.insert(0, workspace);
    }
    let grants = Grants {
        read,
        write,
        scratch_in_root,
        cwd: Some(cwd.clone()),
        from_zygote: req.zygote.as_ref().is_some_and(|z| z.lost().is_none()),
    };
    let start = Instant::now();
    // `prepared` is kept until the command is reaped: it owns what the
    // child uses and the page its exit status comes back on.
    let (mut child, prepared, how) =
        start_command(req, &resolved, &cwd, &env, &grants).map_err(|source| match source {
            Started::Refused(err) => err,
            Started::Failed(source) => ExecError::Spawn {
                program: program.clone(),
                why: super::resolve::why_not_started(&resolved, &source)
                    .map(|why| format!(": {why}"))
                    .unwrap_or_default(),
                resolved: resolved.clone(),
                source,
            },
        })?;
    if let (Some(bytes), Some(pipe)) = (&req.stdin, child.stdin.take()) {
        feed_stdin(pipe, bytes.clone());
    }
    let mut sandbox_layers = prepared.layers.clone();
    sandbox_layers.extend(how);
    let watched = watch(&mut child, req, cancel, start, &prepared);
    let (status, watch) = match watched {
        Ok(pair) => pair,
        Err(err) => {
            // Never leave a group behind on an internal error.
            signal_group(child.pid, Signal::SIGKILL);
            let _ = reap(child.pid);
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
        oom: watch.oom,
        sandbox_layers,
        resources: watch.resources,
    })
}

/// Why a command did not start.
enum Started {
    /// Its sandbox could not be built.
    Refused(ExecError),
    /// The spawn itself failed.
    Failed(std::io::Error),
}

/// Prepares the command's sandbox and starts it: through the request's
/// zygote while it lives (in the warm init made for it when there is one,
/// then a warm init is made for the next command), else directly. Says
/// how, for the outcome's layers: `zygote`, or `zygote-lost` for the
/// command that found it gone (it and the later ones are started
/// directly).
fn start_command(
    req: &ExecRequest,
    resolved: &Path,
    cwd: &Path,
    env: &std::collections::BTreeMap<String, String>,
    grants: &Grants,
) -> Result<(Spawned, Prepared, Option<Layer>), Started> {
    let stdin = req.stdin.is_some();
    let refused = |e: crate::sandbox::SandboxError| Started::Refused(e.into());
    let mut how = None;
    if let Some(zygote) = req.zygote.as_ref().filter(|z| z.lost().is_none()) {
        let image = Image::new(resolved, &req.argv, cwd, env).map_err(Started::Failed)?;
        let key = ReuseKey::new(&req.sandbox, grants, req.timeout);
        // The next command's process is made ahead (in the attempt's PID
        // namespace, its very process; else its init), while this one
        // runs; not for commands with host scratch directories, each their
        // own: no next command's grants would match.
        let next = || {
            grants
                .scratch_in_root
                .then(|| prepare_keyed(&req.sandbox, grants, req.timeout, &key).ok())
                .flatten()
        };
        let started = match zygote.spawn_warm(&key, &image, stdin, next) {
            Some(started) => started,
            None => {
                let prepared =
                    prepare_keyed(&req.sandbox, grants, req.timeout, &key).map_err(refused)?;
                match zygote.spawn(image, &prepared, stdin, &key, next) {
                    Ok(spawned) => Ok((spawned, prepared)),
                    Err(err) => {
                        if let (ZygoteError::Lost(_), Some(cgroup)) = (&err, &prepared.cgroup) {
                            // The zygote may have made a child before it
                            // died: nothing of it may stay in the
                            // command's cgroup, so the command gets a
                            // sandbox built afresh.
                            cgroup.kill_all();
                        }
                        Err(err)
                    }
                }
            }
        };
        match started {
            Ok((spawned, prepared)) => return Ok((spawned, prepared, Some(Layer::Zygote))),
            Err(ZygoteError::Spawn(err)) => return Err(Started::Failed(err)),
            Err(ZygoteError::Lost(_)) => how = Some(Layer::ZygoteLost),
        }
    }
    // Started by the runner itself: its init is forked by a waiter.
    let grants = Grants {
        from_zygote: false,
        ..grants.clone()
    };
    let prepared = prepare(&req.sandbox, &grants, req.timeout).map_err(refused)?;
    let spawned = spawn(resolved, &req.argv, cwd, env, prepared.child.clone(), stdin)
        .map_err(Started::Failed)?;
    Ok((spawned, prepared, how))
}

struct Watched {
    stdout: super::output::Captured,
    stderr: super::output::Captured,
    timed_out: bool,
    cancelled: bool,
    leaked: bool,
    drain_timed_out: bool,
    oom: bool,
    resources: super::resources::Resources,
}

/// The supervision loop: drain output, and on timeout or cancel send
/// SIGTERM to the group, then SIGKILL after the grace.
fn watch(
    child: &mut Spawned,
    req: &ExecRequest,
    cancel: &CancelToken,
    start: Instant,
    prepared: &Prepared,
) -> Result<(std::process::ExitStatus, Watched), ExecError> {
    let exit_page = prepared.exit.as_ref();
    let pid = child.pid;
    let mut pipes = Pipes::new(child.stdout.take(), child.stderr.take(), req.output_cap)
        .map_err(ExecError::io("make the output pipes non-blocking"))?;
    let deadline = start + req.timeout;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut kill_at: Option<Instant> = None;
    let mut killed = false;
    // Wakes the loop the moment the leader exits (kernels without pidfds
    // fall back to the tick).
    let exited = pidfd(pid);
    loop {
        if !pipes.pump_with(TICK, exited.as_ref().map(AsFd::as_fd)) {
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
    // What outlived the leader, before the group is killed: whatever is
    // alive in the command's cgroup (which a process cannot leave, nor
    // leave its group for one the kill would miss), else in its process
    // group. In a PID namespace of the command's own the leader is the
    // waiter, which exits only once the namespace is empty; its init
    // reports the command's own status and whether anything outlived it.
    let left = match (exit_page, &prepared.cgroup) {
        (Some(_), _) => false,
        (None, Some(cgroup)) => cgroup.population() > 0,
        (None, None) => group_members(pid) > 0,
    };
    // The leader is a zombie, so the group id is still reserved: kill
    // whatever is left in it, then reap.
    signal_group(pid, Signal::SIGKILL);
    // The rusage of the leader sums every process reaped beneath it: in a
    // PID namespace the waiter waited for init, which reaped the command
    // and every orphan (the kernel reaps what is left as init exits).
    let (waited, cpu) = reap(pid).map_err(ExecError::io("reap the command"))?;
    let (status, mut leaked, cpu) = match exit_page {
        None => (waited, left, Some(cpu)),
        Some(page) => match page.read() {
            Some(init) => (init.status, init.leaked, Some(cpu)),
            // Init never reported: it was killed (timeout or cancel), and
            // the command with it; the tree was never reaped where its
            // time could be counted.
            None => (
                std::process::ExitStatus::from_raw(libc::SIGKILL),
                false,
                None,
            ),
        },
    };
    // Whatever the group kill could not reach (a process that left the
    // group) dies with the cgroup: what was found in it above (found
    // empty, it stays empty: nothing is left inside to fork), or, with a
    // PID namespace of the command's own, what is in it now.
    let mut oom = false;
    if let Some(cgroup) = &prepared.cgroup {
        let inside = match exit_page {
            None => left,
            Some(_) => cgroup.population() > 0,
        };
        if inside {
            leaked = true;
            cgroup.kill_all();
        }
        oom = cgroup.oom_killed();
    }
    let peaks = prepared
        .cgroup
        .as_ref()
        .map(PooledCgroup::peaks)
        .unwrap_or_default();
    let resources = super::resources::Resources {
        cpu_ms: cpu.map(super::resources::millis),
        peak_memory_bytes: peaks.memory_bytes,
        pids_peak: peaks.pids,
    };
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
            oom,
            resources,
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

/// Whether `path` lies in one of `writable` (both as the kernel resolves
/// them; a path that does not exist is in none).
fn inside_writable(path: &Path, writable: &[PathBuf]) -> bool {
    let Ok(path) = path.canonicalize() else {
        return false;
    };
    writable
        .iter()
        .filter_map(|dir| dir.canonicalize().ok())
        .any(|dir| path.starts_with(dir))
}

fn canonical(path: &Path, what: &str) -> Result<PathBuf, ExecError> {
    path.canonicalize().map_err(ExecError::io(format!(
        "resolve the {what} {}",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_inside_a_writable_grant_as_resolved() {
        let dir = std::env::temp_dir().join(format!("inside-writable-{}", std::process::id()));
        let venv = dir.join("cache/venv/bin");
        std::fs::create_dir_all(&venv).unwrap();
        std::os::unix::fs::symlink(dir.join("cache"), dir.join("link")).unwrap();
        let writable = vec![dir.join("link")];
        assert!(inside_writable(&venv, &writable));
        assert!(inside_writable(&dir.join("cache"), &writable));
        assert!(!inside_writable(&dir, &writable));
        assert!(!inside_writable(&dir.join("missing"), &writable));
        assert!(!inside_writable(&venv, &[]));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
