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

use std::os::fd::{AsRawFd, BorrowedFd};

use super::wire::{self, SpawnReply};
use crate::exec::{Image, Placement, reap_pid, start_child};
use crate::sandbox::ChildSetup;

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
