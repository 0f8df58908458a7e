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

/// A network namespace of its own for one process tree (an agent): its
/// loopback interface up and one TCP listener bound on it, which the
/// runner serves from outside (a socket stays in the namespace it was
/// made in). Nothing else is in it, so nothing else is reachable. Joined
/// through [`SandboxPolicy::join_network`](super::SandboxPolicy); the
/// namespace lives while this handle (or a clone) or the listener does.
#[derive(Debug, Clone)]
pub struct OwnNetwork {
    ns: std::sync::Arc<std::os::fd::OwnedFd>,
}

impl PartialEq for OwnNetwork {
    fn eq(&self, other: &OwnNetwork) -> bool {
        std::sync::Arc::ptr_eq(&self.ns, &other.ns)
    }
}

impl Eq for OwnNetwork {}

impl OwnNetwork {
    /// Makes the namespace and binds `127.0.0.1:0` in it. Root only:
    /// joining a namespace the runner made needs CAP_SYS_ADMIN in the
    /// runner's user namespace.
    pub fn with_listener() -> std::io::Result<(OwnNetwork, std::net::TcpListener)> {
        if !Uid::effective().is_root() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "a network namespace of an agent's own needs the runner to be root",
            ));
        }
        // On a short-lived thread: namespaces are per thread, so the
        // runner's own threads never change namespace.
        std::thread::spawn(|| {
            nix::sched::unshare(CloneFlags::CLONE_NEWNET).map_err(std::io::Error::from)?;
            loopback_up()?;
            let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
            let ns = nix::fcntl::open(
                "/proc/thread-self/ns/net",
                nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            )
            .map_err(std::io::Error::from)?;
            Ok((
                OwnNetwork {
                    ns: std::sync::Arc::new(ns),
                },
                listener,
            ))
        })
        .join()
        .map_err(|_| std::io::Error::other("the namespace thread panicked"))?
    }

    pub(crate) fn raw(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.ns.as_raw_fd()
    }
}

/// Sets the calling thread's loopback interface up (`SIOCSIFFLAGS`).
fn loopback_up() -> std::io::Result<()> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: socket(2) takes no pointers; a negative result is an error.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor this function alone owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: `ifreq` is plain old data; all zeroes is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS reads the name and writes the flags of the
    // `ifreq` it is given, which lives across the call.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the flags member is the one SIOCGIFFLAGS just wrote.
    unsafe { request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: SIOCSIFFLAGS reads the `ifreq` it is given.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &request) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
