//! What the runner and its zygote say to each other over their
//! `SOCK_SEQPACKET` pair: one request (a command to start, with the
//! descriptors it needs) and one reply (its pid, or why it did not start).
//!
//! A message's first packet holds a header (the body's length), the
//! descriptors as `SCM_RIGHTS`, and the first [`INLINE`] bytes of the
//! body, which is every message but one with a large environment: one
//! system call to send it and one to receive it. The rest of a larger body
//! follows in packets of at most [`CHUNK`] bytes, so it never meets the
//! socket's packet limit.

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use serde::{Deserialize, Serialize};

use crate::exec::Image;
use crate::sandbox::Handoff;

/// The argument that makes the runner's binary a zygote.
pub(crate) const ARG: &str = "__agent-runtime-zygote";

/// Most bytes of the body in the first packet.
const INLINE: usize = 4096;
/// Largest packet of the rest of the body.
const CHUNK: usize = 32 * 1024;
/// Most descriptors one message carries.
const MAX_FDS: usize = 16;
/// Largest body accepted (a request is argv, environment and a mount plan).
const MAX_BODY: u64 = 64 << 20;

/// What the runner asks of its zygote.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Request {
    /// Start this command. Descriptors, in order: stdin, stdout, stderr,
    /// then those the setup names.
    Spawn { image: Image, setup: Handoff },
    /// Make a warm init for this setup, to start a later command (see
    /// `warm.rs`). Descriptors: the init's end of its socket, then those
    /// the setup names.
    Warm { setup: Handoff },
    /// Make the attempt's PID namespace (its init, the runner's child; see
    /// `sandbox/attempt_init.rs`), unless made: the reply is its init's
    /// pid. No descriptors.
    PidNamespace,
}

/// The zygote's answer, and a warm init's once its command started.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum SpawnReply {
    /// The command runs (exec succeeded), as the runner's child `pid`.
    Started { pid: i32 },
    /// It did not start: `errno` of the step that failed; `pid` when a
    /// child was made (it has exited and is the runner's to reap).
    Failed { pid: Option<i32>, errno: i32 },
    /// A warm command is ready for its image (see `warm.rs`).
    Ready,
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

/// Sends `body` with `fds` on `sock`.
pub(crate) fn send(sock: BorrowedFd<'_>, body: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    if fds.len() > MAX_FDS {
        return Err(invalid("too many descriptors"));
    }
    let len = (body.len() as u64).to_le_bytes();
    let rights = [ControlMessage::ScmRights(fds)];
    let cmsgs: &[ControlMessage<'_>] = if fds.is_empty() { &[] } else { &rights };
    let (first, rest) = body.split_at(body.len().min(INLINE));
    send_all(sock, &[&len, first], cmsgs)?;
    for chunk in rest.chunks(CHUNK) {
        send_all(sock, &[chunk], &[])?;
    }
    Ok(())
}

/// Sends `parts` as one packet.
fn send_all(
    sock: BorrowedFd<'_>,
    parts: &[&[u8]],
    cmsgs: &[ControlMessage<'_>],
) -> std::io::Result<()> {
    let iov: Vec<IoSlice<'_>> = parts.iter().map(|part| IoSlice::new(part)).collect();
    let total: usize = parts.iter().map(|part| part.len()).sum();
    loop {
        match sendmsg::<()>(sock.as_raw_fd(), &iov, cmsgs, MsgFlags::MSG_NOSIGNAL, None) {
            Ok(n) if n == total => return Ok(()),
            Ok(_) => return Err(invalid("a packet was cut short")),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// Receives one message: `None` when the peer has closed its end.
pub(crate) fn recv(sock: BorrowedFd<'_>) -> std::io::Result<Option<(Vec<u8>, Vec<OwnedFd>)>> {
    let mut header = [0u8; 8];
    let mut inline = [0u8; INLINE];
    let mut space = nix::cmsg_space!([RawFd; MAX_FDS]);
    let (n, fds) = loop {
        let mut iov = [IoSliceMut::new(&mut header), IoSliceMut::new(&mut inline)];
        match recvmsg::<()>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) => {
                let mut fds = Vec::new();
                for cmsg in msg.cmsgs().map_err(std::io::Error::from)? {
                    if let ControlMessageOwned::ScmRights(raw) = cmsg {
                        // SAFETY: the kernel just installed these
                        // descriptors in this process; nothing else owns
                        // them.
                        fds.extend(
                            raw.into_iter()
                                .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                        );
                    }
                }
                if msg.flags.contains(MsgFlags::MSG_CTRUNC) {
                    return Err(invalid("descriptors were cut off"));
                }
                break (msg.bytes, fds);
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(errno) => return Err(errno.into()),
        }
    };
    if n == 0 {
        return Ok(None);
    }
    let len = u64::from_le_bytes(header);
    if len > MAX_BODY {
        return Err(invalid("an oversized body"));
    }
    let len = usize::try_from(len).map_err(|_| invalid("an oversized body"))?;
    let first = len.min(INLINE);
    if n != header.len() + first {
        return Err(invalid("a short first packet"));
    }
    let mut body = vec![0u8; len];
    body[..first].copy_from_slice(&inline[..first]);
    let mut at = first;
    while at < len {
        let end = (at + CHUNK).min(len);
        // SAFETY: reads into the part of `body` not yet filled, of the
        // given length.
        let got = unsafe {
            libc::recv(
                sock.as_raw_fd(),
                body[at..end].as_mut_ptr().cast(),
                end - at,
                0,
            )
        };
        if got < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(err);
        }
        if got == 0 {
            return Err(invalid("the peer left in the middle of a message"));
        }
        at += got as usize;
    }
    Ok(Some((body, fds)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn pair() -> (OwnedFd, OwnedFd) {
        nix::sys::socket::socketpair(
            nix::sys::socket::AddressFamily::Unix,
            nix::sys::socket::SockType::SeqPacket,
            None,
            nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        )
        .unwrap()
    }

    #[test]
    fn a_small_message_and_its_descriptors_are_one_packet() {
        let (a, b) = pair();
        let file = tempfile::tempfile().unwrap();
        send(a.as_fd(), b"ready", &[file.as_raw_fd()]).unwrap();
        drop(a);
        // One packet: a plain read of the socket takes the whole message
        // (and closes the descriptor it carried, which nobody took).
        let mut packet = [0u8; 64];
        // SAFETY: reads into `packet`, of its length.
        let n = unsafe { libc::recv(b.as_raw_fd(), packet.as_mut_ptr().cast(), packet.len(), 0) };
        assert_eq!(usize::try_from(n).unwrap(), 8 + 5);
        assert_eq!(&packet[8..13], b"ready");
        assert!(recv(b.as_fd()).unwrap().is_none(), "nothing follows");
    }

    #[test]
    fn a_body_larger_than_a_packet_and_its_descriptors_arrive_whole() {
        let (a, b) = pair();
        let body: Vec<u8> = (0..CHUNK * 3 + 17).map(|i| (i % 251) as u8).collect();
        let file = tempfile::tempfile().unwrap();
        let sender = std::thread::spawn({
            let body = body.clone();
            move || send(a.as_fd(), &body, &[file.as_raw_fd(), file.as_raw_fd()]).unwrap()
        });
        let (got, fds) = recv(b.as_fd()).unwrap().unwrap();
        sender.join().unwrap();
        assert_eq!(got, body);
        assert_eq!(fds.len(), 2);
        assert!(
            recv(b.as_fd()).unwrap().is_none(),
            "the sender's end is closed"
        );
    }
}
