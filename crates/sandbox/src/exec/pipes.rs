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
/// How long, in milliseconds, a child whose output pipe has just closed
/// is given to exit before its other pipe is read again.
const EXITING: u8 = 1;

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
        self.open_count() == 0
    }

    /// Waits up to `wait` for output, then reads what is there. Returns
    /// false without waiting when both pipes are closed.
    pub(crate) fn pump(&mut self, wait: Duration) -> bool {
        self.pump_with(wait, None)
    }

    /// Like [`pump`](Self::pump), but also wakes when `also` becomes
    /// readable (a pidfd: the child exited). Returns false without waiting
    /// when both pipes are closed and there is nothing else to wait on.
    ///
    /// A pipe that closes now usually means the child is exiting: its
    /// other pipe closes and its pidfd turns readable within microseconds,
    /// each of which would wake the caller again. So it then waits for
    /// `also` alone, for at most [`EXITING`], before it returns.
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
        let (out_ready, err_ready, also_ready) = (ready(0), ready(1), ready(2));
        drop(fds);
        let open = self.open_count();
        if out_ready {
            read_some(&mut self.out, &mut self.buf);
        }
        if err_ready {
            read_some(&mut self.err, &mut self.buf);
        }
        if let Some(fd) = also.filter(|_| !also_ready && self.open_count() < open) {
            let mut exited = [PollFd::new(fd, flags)];
            let _ = poll(&mut exited, PollTimeout::from(EXITING));
        }
        true
    }

    /// How many of the two pipes are still open.
    fn open_count(&self) -> usize {
        usize::from(self.out.reader.is_some()) + usize::from(self.err.reader.is_some())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::process::{Command, Stdio};

    #[test]
    fn a_child_that_closes_one_pipe_and_goes_on_is_still_read_whole() {
        let mut child = Command::new("sh")
            .args([
                "-c",
                "exec 1>&-; for i in 1 2 3 4 5; do echo err$i >&2; sleep 0.01; done",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pidfd = crate::exec::pidfd(nix::unistd::Pid::from_raw(
            i32::try_from(child.id()).unwrap(),
        ))
        .unwrap();
        let mut pipes = Pipes::new(child.stdout.take(), child.stderr.take(), 4096).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        // Until the child is gone and both pipes are read to their end.
        while !(pipes.closed() && crate::sandbox::sys::process_exited(pidfd.as_raw_fd())) {
            assert!(Instant::now() < deadline, "the child never ended");
            pipes.pump_with(Duration::from_millis(100), Some(pidfd.as_fd()));
        }
        child.wait().unwrap();
        let (out, err) = pipes.finish();
        assert!(out.head.is_empty(), "{out:?}");
        let text = String::from_utf8_lossy(&err.head).into_owned();
        assert_eq!(text, "err1\nerr2\nerr3\nerr4\nerr5\n");
    }
}
