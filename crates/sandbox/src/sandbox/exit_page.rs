//! How a command's exit travels from its PID namespace back to the runner.
//!
//! With a PID namespace the runner's direct child is a waiter outside the
//! namespace, whose child (the namespace's init) in turn runs the command.
//! The init writes the command's wait status, and whether other processes
//! were still alive when it ended, into one word of memory shared with the
//! runner: a `MAP_SHARED` page of a memfd, which fork keeps shared and
//! whose descriptor a zygote can be handed to map the same page.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};

/// Set once the init has written the word.
const VALID: u64 = 1 << 63;
/// Other processes were alive in the namespace when the command ended.
const LEAKED: u64 = 1 << 32;

/// What the namespace's init reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitExit {
    pub status: ExitStatus,
    pub leaked: bool,
}

/// One shared page, mapped in the runner before spawn (or, in a zygote,
/// from the runner's descriptor).
#[derive(Debug)]
pub struct ExitPage {
    addr: usize,
    fd: OwnedFd,
}

/// The child's handle on the page: a plain address, copied across fork.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageWriter(usize);

const PAGE: usize = 4096;

impl ExitPage {
    pub fn new() -> std::io::Result<ExitPage> {
        // SAFETY: memfd_create reads a NUL-terminated static name and
        // returns a new descriptor, owned from here on.
        let raw = unsafe { libc::memfd_create(c"exit-page".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: ftruncate on the descriptor just made.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), PAGE as libc::off_t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        ExitPage::map(fd)
    }

    /// Maps the page of `fd` (an exit page's descriptor, received).
    pub(crate) fn map(fd: OwnedFd) -> std::io::Result<ExitPage> {
        // SAFETY: a fresh shared mapping of one page of the memfd; no
        // existing memory is touched.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(ExitPage {
            addr: addr as usize,
            fd,
        })
    }

    /// The memfd behind the page, to hand to a zygote.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn word(&self) -> &AtomicU64 {
        // SAFETY: the mapping is page-aligned, zero-filled, and lives as
        // long as `self`; an AtomicU64 has no invalid bit patterns.
        unsafe { &*(self.addr as *const AtomicU64) }
    }

    pub(crate) fn writer(&self) -> PageWriter {
        PageWriter(self.addr)
    }

    /// The init's report, if it made one (it did not when it was killed).
    pub fn read(&self) -> Option<InitExit> {
        let word = self.word().load(Ordering::SeqCst);
        (word & VALID != 0).then(|| InitExit {
            status: ExitStatus::from_raw((word & 0xffff_ffff) as u32 as i32),
            leaked: word & LEAKED != 0,
        })
    }
}

impl Drop for ExitPage {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, once. Children
        // keep their own mapping of the page.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, PAGE) };
    }
}

impl PageWriter {
    /// Stores the report. In the child: one atomic store, no allocation.
    pub(crate) fn store(self, status: libc::c_int, leaked: bool) {
        let word = VALID | if leaked { LEAKED } else { 0 } | u64::from(status as u32);
        // SAFETY: the address is the shared mapping made by ExitPage::new,
        // which fork kept mapped in this process.
        let atomic = unsafe { &*(self.0 as *const AtomicU64) };
        atomic.store(word, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_round_trips_and_an_empty_page_reads_as_none() {
        let page = ExitPage::new().unwrap();
        assert_eq!(page.read(), None);
        page.writer().store(3 << 8, true);
        let exit = page.read().unwrap();
        assert_eq!(exit.status.code(), Some(3));
        assert!(exit.leaked);
        page.writer().store(libc::SIGTERM, false);
        assert_eq!(page.read().unwrap().status.signal(), Some(libc::SIGTERM));
    }
}
