//! Spawning a command in its own process group with the sandbox applied
//! between fork and exec, and signalling that group.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use super::child::Image;
use crate::sandbox::ChildSetup;

/// A descriptor that becomes readable when `pid` exits (pidfd_open), or
/// `None` on kernels without pidfds.
pub(crate) fn pidfd(pid: Pid) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags by value and returns a new
    // descriptor, which is owned from here on.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A started command: the runner's child, leader of its own process group.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub pid: Pid,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
}

/// Starts `resolved` with `argv[1..]`, started as `argv[0]`, in a new
/// process group whose id is the child's pid; stdin is a pipe when
/// `stdin_pipe`, else /dev/null; stdout and stderr are pipes.
///
/// A setup that never forks gets a `CLONE_VM` child (see `child.rs`): its
/// cost does not grow with the runner's heap. One that does (the PID
/// namespace chain) gets a real fork.
pub(crate) fn spawn(
    resolved: &Path,
    argv: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
    setup: Arc<ChildSetup>,
    stdin_pipe: bool,
) -> std::io::Result<Spawned> {
    if setup.forks() {
        return fork_spawn(resolved, argv, cwd, env, setup, stdin_pipe);
    }
    let image = Image::new(resolved, argv, cwd, env)?;
    let streams = Streams::new(stdin_pipe)?;
    let place = super::child::Placement {
        sibling: false,
        own_group: true,
    };
    let pid =
        super::child::start(&image, streams.theirs(), &setup, place).map_err(|(pid, errno)| {
            if let Some(pid) = pid {
                let _ = reap(Pid::from_raw(pid));
            }
            std::io::Error::from_raw_os_error(errno)
        })?;
    Ok(streams.into_spawned(Pid::from_raw(pid)))
}

/// The pipes of a command about to start: the command's ends, and ours.
pub(crate) struct Streams {
    stdin_ours: Option<OwnedFd>,
    stdin_theirs: OwnedFd,
    stdout: (OwnedFd, OwnedFd),
    stderr: (OwnedFd, OwnedFd),
}

impl Streams {
    /// Pipes for stdout and stderr, and for stdin when `stdin_pipe` (else
    /// /dev/null); all close-on-exec.
    pub(crate) fn new(stdin_pipe: bool) -> std::io::Result<Streams> {
        let pipe =
            || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from);
        let (stdin_ours, stdin_theirs) = if stdin_pipe {
            let (read, write) = pipe()?;
            (Some(write), read)
        } else {
            (None, OwnedFd::from(std::fs::File::open("/dev/null")?))
        };
        Ok(Streams {
            stdin_ours,
            stdin_theirs,
            stdout: pipe()?,
            stderr: pipe()?,
        })
    }

    /// The command's ends, as its descriptors 0, 1 and 2.
    pub(crate) fn theirs(&self) -> [RawFd; 3] {
        [
            self.stdin_theirs.as_raw_fd(),
            self.stdout.1.as_raw_fd(),
            self.stderr.1.as_raw_fd(),
        ]
    }

    /// Once the command has started as `pid`: our ends (the command's are
    /// closed here).
    pub(crate) fn into_spawned(self, pid: Pid) -> Spawned {
        Spawned {
            pid,
            stdin: self.stdin_ours.map(ChildStdin::from),
            stdout: Some(ChildStdout::from(self.stdout.0)),
            stderr: Some(ChildStderr::from(self.stderr.0)),
        }
    }
}

/// [`spawn`] by fork, for a setup that forks again.
fn fork_spawn(
    resolved: &Path,
    argv: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
    setup: Arc<ChildSetup>,
    stdin_pipe: bool,
) -> std::io::Result<Spawned> {
    let mut command = Command::new(resolved);
    if let Some((name, args)) = argv.split_first() {
        command.arg0(name).args(args);
    }
    command
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(if stdin_pipe {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the closure runs between fork and exec and only makes
    // async-signal-safe system calls on data prepared before the fork (no
    // allocation, no locks): see `ChildSetup::apply`.
    unsafe {
        command.pre_exec(move || setup.apply());
    }
    let mut child = command.spawn()?;
    let pid = i32::try_from(child.id())
        .map(Pid::from_raw)
        .map_err(|_| std::io::Error::other("pid out of range"))?;
    // Dropping `child` neither waits nor kills: the executor reaps `pid`.
    Ok(Spawned {
        pid,
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    })
}

/// Sends `signal` to every process of the group. Returns whether any
/// process was there to receive it.
pub(crate) fn signal_group(pgid: Pid, signal: Signal) -> bool {
    killpg(pgid, signal).is_ok()
}

/// Whether the group leader has exited, without reaping it: while it is a
/// zombie its pid, and so the group id, cannot be reused, which makes a
/// later group kill safe.
pub(crate) fn leader_exited(pid: Pid) -> std::io::Result<bool> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    match waitid(Id::Pid(pid), flags) {
        Ok(WaitStatus::StillAlive) => Ok(false),
        Ok(_) => Ok(true),
        Err(nix::errno::Errno::EINTR) => Ok(false),
        Err(errno) => Err(std::io::Error::from(errno)),
    }
}

/// Reaps `pid` with wait4(2): its wait status and the user plus system
/// time of it and of every process reaped beneath it (the kernel sums a
/// child's reaped descendants into its rusage).
pub(crate) fn reap(pid: Pid) -> std::io::Result<(std::process::ExitStatus, Duration)> {
    use std::os::unix::process::ExitStatusExt;
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain integers; all zero is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes the status and the rusage into locals.
        let rc = unsafe { libc::wait4(pid.as_raw(), &mut status, 0, &mut usage) };
        if rc == pid.as_raw() {
            return Ok((
                std::process::ExitStatus::from_raw(status),
                super::resources::cpu_time(&usage),
            ));
        }
        let err = std::io::Error::last_os_error();
        if rc >= 0 || err.raw_os_error() != Some(libc::EINTR) {
            return Err(if rc >= 0 {
                std::io::Error::other(format!("wait4 returned pid {rc}, not {pid}"))
            } else {
                err
            });
        }
    }
}

/// Other processes (not the leader) still in group `pgid`, found in /proc.
/// Members were started after the leader, so only pids allocated since are
/// looked at, unless pid numbers wrapped around since (then all are).
pub(crate) fn group_members(pgid: Pid) -> usize {
    let leader = pgid.as_raw();
    let last = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok());
    let in_group = |pid: &i32| *pid != leader && process_group_of(*pid) == Some(leader);
    match last {
        Some(last) if last >= leader => (leader + 1..=last).filter(in_group).count(),
        _ => {
            let Ok(entries) = std::fs::read_dir("/proc") else {
                return 0;
            };
            entries
                .flatten()
                .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
                .filter(in_group)
                .count()
        }
    }
}

/// The process group of `pid` from `/proc/PID/stat` (the fifth field; the
/// second, the command name, is in parentheses and may hold spaces).
fn process_group_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(2)?.parse().ok()
}
