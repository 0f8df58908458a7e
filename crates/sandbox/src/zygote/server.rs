//! The zygote's side: a fresh exec of the runner's binary, small and
//! single-threaded, that starts each command it is sent.
//!
//! Per request it receives the descriptors, rebuilds the handed-over
//! sandbox ([`Handoff::receive`](crate::sandbox::Handoff::receive)) and
//! starts the command with `CLONE_PARENT` (see `exec/child.rs`): the
//! command is the runner's child, not the zygote's, so the runner waits
//! for it, reads its resource usage and signals its group exactly as for
//! a command it started itself, and the command's parent-death signal
//! follows the runner. Between that clone and exec the child does what
//! the runner's own spawn would have: standard streams, working
//! directory, its own process group, then `ChildSetup::apply` (every
//! layer: cgroup, rlimits, namespaces, capabilities, Landlock, keyring,
//! seccomp).
//!
//! Asked for it once per attempt, it makes the attempt's PID namespace
//! (its init, the runner's child: `sandbox/attempt_init.rs`), which every
//! later command whose setup shares it is cloned into; if that init is
//! ever gone, the zygote exits at the next request, and the runner starts
//! its commands itself.
//!
//! The zygote itself dies with the runner (parent-death signal, checked
//! against the runner's pid it was given), is not dumpable (no ptrace, no
//! `/proc/PID/mem` or `environ` for a process without capabilities), holds
//! no environment, and exits when the runner closes its end.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::process::ExitCode;

use nix::unistd::Pid;

use super::wire::{self, Request, SpawnReply};
use crate::exec::{NotStarted, Placement, start_attempt_init, start_child, start_warm};
use crate::sandbox::AttemptNamespace;
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
    // Commands' inits cloned into their PID namespace cannot see the
    // runner's pid; they check it is alive through this.
    let runner_fd = crate::exec::pidfd(parent);
    let runner_raw = runner_fd.as_ref().map(AsRawFd::as_raw_fd);
    // SAFETY: descriptor 0 is the socket the runner passed as stdin; it
    // stays open for the life of this process.
    let sock = unsafe { BorrowedFd::borrow_raw(0) };
    // Rests between requests and while it makes a warm command (see
    // `sched.rs`), where it can leave that again.
    let rests = super::sched::can_leave_idle() && super::sched::rest(0).is_ok();
    // The attempt's PID namespace, once the runner asked for it.
    let mut attempt: Option<AttemptNamespace> = None;
    loop {
        let (body, fds) = match wire::recv(sock) {
            Ok(Some(message)) => message,
            Ok(None) => return ExitCode::SUCCESS,
            Err(_) => return ExitCode::FAILURE,
        };
        // Nothing can start in a namespace whose init is gone: the runner
        // finds this zygote gone and starts its commands itself.
        if attempt.as_ref().is_some_and(AttemptNamespace::gone) {
            return ExitCode::FAILURE;
        }
        let answer = match rmp_serde::from_slice::<Request>(&body) {
            Err(_) => Err((None, libc::EINVAL)),
            Ok(Request::PidNamespace) => match &attempt {
                Some(made) => Ok(made.pid),
                None if rests && super::sched::lift(0).is_err() => Err((None, libc::EPERM)),
                None => match start_attempt_init(runner_raw) {
                    Ok(made) => {
                        let pid = made.pid;
                        attempt = Some(made);
                        Ok(pid)
                    }
                    Err(err) => Err((None, err.raw_os_error().unwrap_or(libc::EIO))),
                },
            },
            Ok(request) => start(
                request,
                fds,
                parent,
                runner_raw,
                attempt.as_ref().map(|made| made.ns.as_raw_fd()),
                rests,
            ),
        };
        if rests && super::sched::rest(0).is_err() {
            return ExitCode::FAILURE;
        }
        let reply = match answer {
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

/// Answers one request: a command started (its pid once it has exec'd),
/// or a warm init made (its pid). `attempt` is the attempt's PID
/// namespace, if made. Where this process `rests`, only a warm command is
/// made while it does; anything else after it left `SCHED_IDLE`.
fn start(
    request: Request,
    mut fds: Vec<OwnedFd>,
    runner: Pid,
    runner_fd: Option<RawFd>,
    attempt: Option<RawFd>,
    rests: bool,
) -> Result<i32, NotStarted> {
    let (image, handoff, own) = match request {
        Request::PidNamespace => return Err((None, libc::EINVAL)),
        Request::Spawn { image, setup } => {
            if fds.len() < 3 {
                return Err((None, libc::EBADF));
            }
            let setup_fds = fds.split_off(3);
            (Some(image), setup, std::mem::replace(&mut fds, setup_fds))
        }
        Request::Warm { setup } => {
            if fds.is_empty() {
                return Err((None, libc::EBADF));
            }
            let setup_fds = fds.split_off(1);
            (None, setup, std::mem::replace(&mut fds, setup_fds))
        }
    };
    let (setup, held) = handoff
        .receive(fds, runner, runner_fd, attempt)
        .map_err(|e| (None, e.raw_os_error().unwrap_or(libc::EIO)))?;
    if rests {
        let warm_command = image.is_none() && setup.shares_pid();
        let policy = if warm_command {
            super::sched::rest(0)
        } else {
            super::sched::lift(0)
        };
        policy.map_err(|e| (None, e.raw_os_error().unwrap_or(libc::EIO)))?;
    }
    // What is cloned below shows nothing of this process from its first
    // instant (a command of the attempt's namespace may be watching).
    let veil = crate::sandbox::runner_image().map(|image| image.veil());
    let started = match image {
        Some(image) => {
            let stdio = [own[0].as_raw_fd(), own[1].as_raw_fd(), own[2].as_raw_fd()];
            // The command is the runner's child, not this process's.
            let place = Placement {
                sibling: true,
                own_group: true,
            };
            start_child(&image, stdio, &setup, place)
        }
        None => {
            let sock = own[0].as_fd();
            start_warm(&setup, &|| {
                if setup.shares_pid() {
                    super::warm::serve_command(sock);
                    None
                } else {
                    super::warm::serve(sock, &setup)
                }
            })
            .map_err(|e| (None, e.raw_os_error().unwrap_or(libc::EIO)))
        }
    };
    drop(veil);
    drop(held);
    started
}
