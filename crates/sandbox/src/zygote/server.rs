//! The zygote's side: a fresh exec of the runner's binary, small and
//! single-threaded, that starts each command it is sent.
//!
//! Per request it receives the descriptors, rebuilds the handed-over
//! sandbox ([`Handoff::receive`](crate::sandbox::Handoff::receive)) and
//! makes the command with `clone(CLONE_PARENT)`: the command is the
//! runner's child, not the zygote's, so the runner waits for it, reads
//! its resource usage and signals its group exactly as for a command it
//! forked itself, and the command's parent-death signal follows the
//! runner. Between that clone and exec the child does what the runner's
//! own fork would have: standard streams, working directory, its own
//! process group, then [`ChildSetup::apply`] (every layer: cgroup,
//! rlimits, namespaces, capabilities, Landlock, keyring, seccomp). A
//! close-on-exec pipe tells the zygote whether exec happened, or the
//! errno of the step that failed.
//!
//! The zygote itself dies with the runner (parent-death signal, checked
//! against the runner's pid it was given), is not dumpable (no ptrace, no
//! `/proc/PID/mem` or `environ` for a process without capabilities), holds
//! no environment, and exits when the runner closes its end.

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::process::ExitCode;

use nix::unistd::Pid;

use super::wire::{self, SpawnReply, SpawnRequest};
use crate::sandbox::ChildSetup;
use crate::sandbox::sys;

/// The zygote's life: serve requests on descriptor 0 until the runner
/// closes it.
pub(crate) fn serve(runner: Option<i32>) -> ExitCode {
    if sys::set_parent_death_signal().is_err() {
        return ExitCode::FAILURE;
    }
    let parent = nix::unistd::getppid();
    if runner != Some(parent.as_raw()) {
        // Not started by the runner it names, or that runner already died.
        return ExitCode::from(2);
    }
    if sys::set_dumpable(false).is_err() {
        return ExitCode::FAILURE;
    }
    // SAFETY: descriptor 0 is the socket the runner passed as stdin; it
    // stays open for the life of this process.
    let sock = unsafe { BorrowedFd::borrow_raw(0) };
    loop {
        let (body, fds) = match wire::recv(sock) {
            Ok(Some(message)) => message,
            Ok(None) => return ExitCode::SUCCESS,
            Err(_) => return ExitCode::FAILURE,
        };
        let reply = match start(&body, fds, parent) {
            Ok(pid) => SpawnReply::Started { pid },
            Err((pid, errno)) => SpawnReply::Failed { pid, errno },
        };
        let Ok(bytes) = rmp_serde::to_vec(&reply) else {
            return ExitCode::FAILURE;
        };
        if wire::send(sock, &bytes, &[]).is_err() {
            return ExitCode::FAILURE;
        }
    }
}

/// Why a request did not start: the child's pid if one was made, and an
/// errno.
type NotStarted = (Option<i32>, i32);

fn errno_of(err: &std::io::Error) -> i32 {
    err.raw_os_error().unwrap_or(libc::EIO)
}

/// Starts one command; its pid once it has exec'd.
fn start(body: &[u8], mut fds: Vec<OwnedFd>, runner: Pid) -> Result<i32, NotStarted> {
    let request: SpawnRequest = rmp_serde::from_slice(body).map_err(|_| (None, libc::EINVAL))?;
    if fds.len() < 3 {
        return Err((None, libc::EBADF));
    }
    let setup_fds = fds.split_off(3);
    let (setup, held) = request
        .setup
        .receive(setup_fds, runner)
        .map_err(|e| (None, errno_of(&e)))?;
    let stdio = [fds[0].as_raw_fd(), fds[1].as_raw_fd(), fds[2].as_raw_fd()];
    let argv = pointers(&request.argv);
    let env = pointers(&request.env);
    let (report_read, report_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| (None, e as i32))?;
    let child = Child {
        stdio,
        cwd: &request.cwd,
        program: &request.program,
        argv: &argv,
        env: &env,
        setup: &setup,
        report: report_write.as_raw_fd(),
    };
    // SAFETY: a fork-like clone (no new stack: the child runs on a
    // copy-on-write copy of this one) of a single-threaded process; the
    // child only makes system calls on data prepared above and then
    // execs or exits (`Child::run`).
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (libc::CLONE_PARENT | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        child.run();
    }
    drop(report_write);
    drop(held);
    drop(fds);
    if pid < 0 {
        return Err((None, errno_of(&std::io::Error::last_os_error())));
    }
    let pid = pid as i32;
    match read_report(report_read.as_raw_fd()) {
        None => Ok(pid),
        Some(errno) => Err((Some(pid), errno)),
    }
}

/// A NULL-terminated array of pointers into `strings`.
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// The errno the child wrote before it exited, or `None` once its exec
/// closed the pipe.
fn read_report(fd: RawFd) -> Option<i32> {
    let mut word = [0u8; 4];
    let mut at = 0;
    while at < word.len() {
        // SAFETY: reads into the rest of a local buffer.
        let got = unsafe { libc::read(fd, word[at..].as_mut_ptr().cast(), word.len() - at) };
        if got < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if got <= 0 {
            break;
        }
        at += got as usize;
    }
    match at {
        0 => None,
        4 => Some(i32::from_ne_bytes(word)),
        _ => Some(libc::EIO),
    }
}

/// What the cloned child needs, all prepared before the clone.
struct Child<'a> {
    stdio: [RawFd; 3],
    cwd: &'a CString,
    program: &'a CString,
    argv: &'a [*const libc::c_char],
    env: &'a [*const libc::c_char],
    setup: &'a ChildSetup,
    report: RawFd,
}

impl Child<'_> {
    /// In the child: as the runner's own spawn would, then exec. System
    /// calls only; never returns.
    fn run(&self) -> ! {
        let errno = match self.prepare() {
            // SAFETY: NUL-terminated program path and NULL-terminated
            // arrays of NUL-terminated strings, all alive in this copy of
            // the zygote's memory.
            Ok(()) => unsafe {
                libc::execve(self.program.as_ptr(), self.argv.as_ptr(), self.env.as_ptr());
                errno_of(&std::io::Error::last_os_error())
            },
            Err(err) => errno_of(&err),
        };
        let word = errno.to_ne_bytes();
        // SAFETY: writes a local buffer to the report pipe.
        unsafe { libc::write(self.report, word.as_ptr().cast(), word.len()) };
        sys::exit(127)
    }

    fn prepare(&self) -> std::io::Result<()> {
        for (target, fd) in self.stdio.iter().enumerate() {
            // SAFETY: dup2 of a received descriptor onto 0, 1 or 2 (the
            // received ones are all above 2).
            if unsafe { libc::dup2(*fd, target as libc::c_int) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        sys::chdir(self.cwd)?;
        // SAFETY: setpgid with integers: a group of its own.
        if unsafe { libc::setpgid(0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        self.setup.apply()
    }
}
