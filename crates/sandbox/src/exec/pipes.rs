//! Draining a child's stdout and stderr without threads: non-blocking
//! reads driven by poll(2), each stream fed into a bounded [`Capture`].

use std::io::{ErrorKind, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::output::{Capture, Captured};

/// Bytes read per system call.
const CHUNK: usize = 64 * 1024;
/// Reads per stream before the caller gets control back, so a child that
/// floods its output cannot delay a timeout or a cancel.
const READS_PER_PUMP: usize = 64;

struct Stream<R> {
    reader: Option<R>,
    capture: Capture,
}

/// Both output pipes of one child.
pub(crate) struct Pipes<O, E> {
    out: Stream<O>,
    err: Stream<E>,
    buf: Vec<u8>,
}

impl<O: Read + AsFd, E: Read + AsFd> Pipes<O, E> {
    pub(crate) fn new(out: Option<O>, err: Option<E>, cap: usize) -> std::io::Result<Self> {
        for fd in out
            .iter()
            .map(|o| o.as_fd())
            .chain(err.iter().map(|e| e.as_fd()))
        {
            fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(std::io::Error::from)?;
        }
        Ok(Pipes {
            out: Stream {
                reader: out,
                capture: Capture::new(cap),
            },
            err: Stream {
                reader: err,
                capture: Capture::new(cap),
            },
            buf: vec![0; CHUNK],
        })
    }

    /// Whether both pipes have reached end of file.
    pub(crate) fn closed(&self) -> bool {
        self.out.reader.is_none() && self.err.reader.is_none()
    }

    /// Waits up to `wait` for output, then reads what is there. Returns
    /// false without waiting when both pipes are closed.
    pub(crate) fn pump(&mut self, wait: Duration) -> bool {
        self.pump_with(wait, None)
    }

    /// Like [`pump`](Self::pump), but also wakes when `also` becomes
    /// readable (a pidfd: the child exited). Returns false without waiting
    /// when both pipes are closed and there is nothing else to wait on.
    pub(crate) fn pump_with(&mut self, wait: Duration, also: Option<BorrowedFd<'_>>) -> bool {
        if self.closed() && also.is_none() {
            return false;
        }
        let millis = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
        let flags = PollFlags::POLLIN;
        let mut which = Vec::with_capacity(3);
        let mut fds = Vec::with_capacity(3);
        if let Some(fd) = also {
            which.push(2);
            fds.push(PollFd::new(fd, flags));
        }
        if let Some(r) = &self.out.reader {
            which.push(0);
            fds.push(PollFd::new(r.as_fd(), flags));
        }
        if let Some(r) = &self.err.reader {
            which.push(1);
            fds.push(PollFd::new(r.as_fd(), flags));
        }
        if poll(&mut fds, PollTimeout::from(millis)).is_err() {
            // EINTR: report nothing ready; the caller loops.
            return true;
        }
        let ready = |stream: usize| {
            which
                .iter()
                .zip(&fds)
                .any(|(w, fd)| *w == stream && fd.revents().is_some_and(|r| !r.is_empty()))
        };
        let (out_ready, err_ready) = (ready(0), ready(1));
        drop(fds);
        if out_ready {
            read_some(&mut self.out, &mut self.buf);
        }
        if err_ready {
            read_some(&mut self.err, &mut self.buf);
        }
        true
    }

    /// Reads until both pipes close or `deadline` passes; returns whether
    /// the deadline cut the drain short.
    pub(crate) fn drain_until(&mut self, deadline: Instant) -> bool {
        loop {
            let now = Instant::now();
            if self.closed() {
                return false;
            }
            if now >= deadline {
                return true;
            }
            self.pump((deadline - now).min(Duration::from_millis(50)));
        }
    }

    pub(crate) fn finish(self) -> (Captured, Captured) {
        (self.out.capture.finish(), self.err.capture.finish())
    }
}

fn read_some<R: Read>(stream: &mut Stream<R>, buf: &mut [u8]) {
    let Some(reader) = stream.reader.as_mut() else {
        return;
    };
    for _ in 0..READS_PER_PUMP {
        match reader.read(buf) {
            Ok(0) => {
                stream.reader = None;
                return;
            }
            Ok(n) => stream.capture.push(&buf[..n]),
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(err) if err.kind() == ErrorKind::WouldBlock => return,
            Err(_) => {
                stream.reader = None;
                return;
            }
        }
    }
}
