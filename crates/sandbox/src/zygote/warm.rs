//! A warm init: the init of a command's namespaces, made by the zygote
//! while the command before it runs, waiting for the command it is for.
//!
//! Everything a direct init does before its command is known is done
//! ahead: the clone into new PID, mount and IPC namespaces, the cgroup
//! joined (on cgroup v1 the costliest step), the rlimits, `/proc` and the
//! scratch mounted, `/proc/1` blanked. The runner keeps it beside the
//! setup it was made for ([`Prepared`](crate::sandbox::Prepared)) and what
//! that setup was made from ([`ReuseKey`](crate::sandbox::ReuseKey): the
//! policy, the grants, the timeout, and the device and inode of every
//! granted path), and starts the next command in it when that command's
//! key is equal, without preparing its sandbox again; otherwise, and when
//! the attempt ends, it kills it. The command is sent over a
//! socket only the runner holds the other end of: its image and standard
//! streams. The init forks it (`CLONE_VM | CLONE_VFORK`), and the command
//! enters its working directory and applies the rest of its layers
//! (capabilities, Landlock, keyring, seccomp) before exec; the init
//! answers, closes every descriptor, and reaps until the command ends, as
//! any init does.
//!
//! In the attempt's PID namespace (`sandbox/attempt_init.rs`) there is no
//! init of the command's own: what is made ahead is the command's process
//! itself, a *warm command*, cloned into the namespace, a copy of its root
//! and an IPC namespace of its own, in its cgroup, with its rlimits, its
//! `/proc` and scratch mounted, and then every layer of its own applied
//! (capabilities, Landlock, keyring, seccomp: none depends on what it
//! will run). It says it is ready ([`SpawnReply::Ready`]); sent its image
//! and standard streams, it enters its working directory and execs, which
//! closes its socket: the runner takes the end of file for the start, and
//! a [`SpawnReply::Failed`] for a command that could not start.

use std::os::fd::{AsRawFd, BorrowedFd};

use super::wire::{self, SpawnReply};
use crate::exec::{Image, Placement, exec_here, reap_pid, start_child};
use crate::sandbox::ChildSetup;

/// In a warm command, once its root is ready: says so on `sock`, waits
/// for its command, and execs it; returns only if it could not (having
/// said why, when it could).
pub(super) fn serve_command(sock: BorrowedFd<'_>) {
    let Ok(ready) = rmp_serde::to_vec(&SpawnReply::Ready) else {
        return;
    };
    // Taken back before exec: the runner may keep this process off its
    // own CPU while it starts (see `sched.rs`). One that cannot tell its
    // CPUs is never ready, so it never runs a command.
    let Some(cpus) = super::sched::own_cpus() else {
        return;
    };
    if wire::send(sock, &ready, &[]).is_err() {
        return;
    }
    let Ok(Some((body, fds))) = wire::recv(sock) else {
        return;
    };
    let errno = match rmp_serde::from_slice::<Image>(&body) {
        Err(_) => libc::EINVAL,
        Ok(_) if fds.len() != 3 => libc::EBADF,
        Ok(image) => {
            super::sched::take_back(&cpus);
            let stdio = [fds[0].as_raw_fd(), fds[1].as_raw_fd(), fds[2].as_raw_fd()];
            exec_here(&image, stdio).raw_os_error().unwrap_or(libc::EIO)
        }
    };
    if let Ok(failed) = rmp_serde::to_vec(&SpawnReply::Failed { pid: None, errno }) {
        let _ = wire::send(sock, &failed, &[]);
    }
}

/// In the warm init, once its namespaces are ready: waits for its
/// command on `sock`, starts it under the rest of `setup`, answers, and
/// returns its pid (`None` if it did not start).
pub(super) fn serve(sock: BorrowedFd<'_>, setup: &ChildSetup) -> Option<libc::pid_t> {
    let (body, fds) = wire::recv(sock).ok()??;
    let started = match rmp_serde::from_slice::<Image>(&body) {
        Err(_) => Err((None, libc::EINVAL)),
        Ok(_) if fds.len() != 3 => Err((None, libc::EBADF)),
        Ok(image) => {
            let stdio = [fds[0].as_raw_fd(), fds[1].as_raw_fd(), fds[2].as_raw_fd()];
            // In the init's group: the runner signals the group it leads.
            let place = Placement {
                sibling: false,
                own_group: false,
            };
            start_child(&image, stdio, &setup.command_part(), place)
        }
    };
    drop(fds);
    let reply = match started {
        Ok(pid) => SpawnReply::Started { pid },
        Err((pid, errno)) => {
            if let Some(pid) = pid {
                let _ = reap_pid(nix::unistd::Pid::from_raw(pid));
            }
            SpawnReply::Failed { pid: None, errno }
        }
    };
    let bytes = rmp_serde::to_vec(&reply).ok()?;
    wire::send(sock, &bytes, &[]).ok()?;
    started.ok()
}
