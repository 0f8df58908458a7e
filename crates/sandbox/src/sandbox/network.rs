//! The network layer: a fresh network namespace holding only a loopback
//! interface that is down, so no TCP or UDP reaches anything, loopback
//! included. Root can create one directly; other users need a user
//! namespace first.

use nix::sched::CloneFlags;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Uid};

use super::error::{ChildProbeError, USERNS_HINT};

/// How network isolation is obtained on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetIsolation {
    /// `unshare(CLONE_NEWNET)` (the runner is root).
    NetNs,
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNET)` (unprivileged).
    UserNetNs,
}

impl NetIsolation {
    pub fn layer_name(self) -> super::Layer {
        match self {
            NetIsolation::NetNs => super::Layer::Netns,
            NetIsolation::UserNetNs => super::Layer::UserNetns,
        }
    }

    pub(crate) fn flags(self) -> CloneFlags {
        match self {
            NetIsolation::NetNs => CloneFlags::CLONE_NEWNET,
            NetIsolation::UserNetNs => CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET,
        }
    }
}

/// Enters a new namespace in the (child) process. Async-signal-safe.
pub(crate) fn unshare(flags: CloneFlags) -> std::io::Result<()> {
    nix::sched::unshare(flags).map_err(std::io::Error::from)
}

/// Finds out whether a network namespace can be created, by trying in a
/// short-lived forked child (the runner itself never changes namespace).
pub(crate) fn probe() -> Result<NetIsolation, ChildProbeError> {
    let kind = if Uid::effective().is_root() {
        NetIsolation::NetNs
    } else {
        NetIsolation::UserNetNs
    };
    // SAFETY: the child only calls unshare(2) and _exit(2), both
    // async-signal-safe, so forking a multi-threaded process is sound.
    let fork = unsafe { nix::unistd::fork() };
    match fork {
        Err(errno) => Err(ChildProbeError::Fork(errno)),
        Ok(ForkResult::Child) => {
            let code = match nix::sched::unshare(kind.flags()) {
                Ok(()) => 0,
                Err(errno) => errno as i32,
            };
            // SAFETY: _exit ends the child without running the parent's
            // atexit handlers or destructors.
            unsafe { libc::_exit(code) }
        }
        Ok(ForkResult::Parent { child }) => match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, 0)) => Ok(kind),
            Ok(WaitStatus::Exited(_, code)) => Err(ChildProbeError::Unshare {
                what: match kind {
                    NetIsolation::NetNs => "netns",
                    NetIsolation::UserNetNs => "userns+netns",
                },
                errno: nix::errno::Errno::from_raw(code),
                hint: if kind == NetIsolation::UserNetNs {
                    USERNS_HINT
                } else {
                    ""
                },
            }),
            Ok(other) => Err(ChildProbeError::Ended(other)),
            Err(errno) => Err(ChildProbeError::Wait(errno)),
        },
    }
}
