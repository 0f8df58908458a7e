//! The child's step: move itself into the command's cgroup(s) between fork
//! and exec, through descriptors the runner opened (v1 `tasks`, v2
//! `cgroup.procs`).

use std::io;
use std::os::fd::RawFd;

/// At most one descriptor per v1 hierarchy used (memory, pids, freezer).
const MAX: usize = 3;

/// The raw entry descriptors of one command cgroup, copied into the
/// child. Plain data: the child never allocates. They stay open (and so
/// valid) as long as the [`super::CommandCgroup`] they came from; they are
/// close-on-exec, so the command itself never holds them.
#[derive(Debug, Clone, Copy)]
pub struct EnterFds {
    fds: [RawFd; MAX],
    len: usize,
}

impl EnterFds {
    pub(crate) fn new(raw: impl Iterator<Item = RawFd>) -> EnterFds {
        let mut fds = [-1; MAX];
        let mut len = 0;
        for (slot, fd) in fds.iter_mut().zip(raw) {
            *slot = fd;
            len += 1;
        }
        EnterFds { fds, len }
    }

    /// The descriptors, to hand to a zygote.
    pub(crate) fn raw(&self) -> &[RawFd] {
        &self.fds[..self.len]
    }
}

/// Moves the calling process into the cgroup(s) by writing `0` (which
/// means "the writer") to each descriptor. Runs in the child after fork:
/// async-signal-safe, only write(2) on copied data, no allocation.
pub fn enter_from_child(fds: &EnterFds) -> io::Result<()> {
    const SELF: &[u8] = b"0";
    for fd in fds.fds.iter().take(fds.len) {
        loop {
            // SAFETY: `fd` was opened by the runner for writing and stays
            // open while its `CommandCgroup` lives (the caller's contract);
            // the buffer is a static byte string of the given length.
            let written = unsafe { libc::write(*fd, SELF.as_ptr().cast(), SELF.len()) };
            if written == 1 {
                break;
            }
            let err = io::Error::last_os_error();
            if written < 0 && err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(if written < 0 {
                err
            } else {
                io::Error::from_raw_os_error(libc::EIO)
            });
        }
    }
    Ok(())
}
