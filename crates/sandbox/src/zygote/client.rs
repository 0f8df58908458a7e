//! The runner's handle on a zygote: start it, send it commands, and end
//! it when the handle is dropped.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread::JoinHandle;

use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
use nix::unistd::Pid;

use super::wire::{self, ARG, Request, SpawnReply};
use crate::exec::{Image, Spawned, Streams};
use crate::sandbox::{Prepared, ReuseKey};

/// Set by [`serve_if_asked`](super::serve_if_asked) in a binary that can
/// be its own zygote.
pub(super) static SERVES: AtomicBool = AtomicBool::new(false);

/// Whether this process's binary serves as a zygote (its `main` called
/// [`serve_if_asked`](super::serve_if_asked)).
pub fn available() -> bool {
    SERVES.load(Ordering::Relaxed)
}

/// A zygote of this runner. Commands are started through it one at a time
/// (the exchange is short: it ends once the command has exec'd).
#[derive(Debug)]
pub struct Zygote {
    link: Mutex<Link>,
    pid: i32,
    /// Dropped to end the keeper thread.
    stop: Option<mpsc::Sender<()>>,
    keeper: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Link {
    sock: Option<OwnedFd>,
    /// Why the zygote can no longer be used, once it cannot.
    lost: Option<String>,
    /// A warm init made for the next command (see `warm.rs`).
    slot: Option<Slot>,
    /// A warm init asked for and not answered yet: the slot's socket and
    /// setup (see [`settle`]).
    pending: Option<(OwnedFd, Prepared, ReuseKey)>,
    /// Why the zygote was found gone while a warm init was being made:
    /// the next command is told, as if it had found it gone itself.
    unreported: Option<String>,
    /// The init of the attempt's PID namespace, once made: the runner's
    /// child, killed and reaped when the handle is dropped.
    attempt_init: Option<Pid>,
    /// The zygote, where it rests as `SCHED_IDLE` (see `sched.rs`): lifted
    /// before the runner waits on it.
    resting: Option<Pid>,
}

/// A warm init, the runner's child, and the setup it was made for.
#[derive(Debug)]
struct Slot {
    pid: Pid,
    sock: OwnedFd,
    prepared: Prepared,
    key: ReuseKey,
    /// Made by a resting zygote: lifted before it is sent anything.
    resting: bool,
}

impl Slot {
    /// Kills and reaps the init; nothing was started in it.
    fn discard(self) {
        let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
        let _ = crate::exec::reap_pid(self.pid);
    }

    /// Starts the command in the slot. `None` when the init (or the warm
    /// command) is gone (it is reaped): start the command another way.
    ///
    /// A warm command (the command's own process, in the attempt's PID
    /// namespace) says it is ready first, and its exec closes its socket:
    /// that end of file is its start, a `Failed` reply why it did not. A
    /// warm init answers once the command it forked has exec'd.
    /// `meanwhile` runs once the command is sent, while it execs.
    fn start(
        self,
        image: &Image,
        stdin_pipe: bool,
        meanwhile: impl FnOnce(),
    ) -> Option<Result<(Spawned, Prepared), ZygoteError>> {
        let command = self.prepared.child.shares_pid();
        // Nothing runs idle: a warm command that cannot be lifted is not
        // used (and one still being made is lifted before it is waited on).
        if self.resting && super::sched::lift(self.pid.as_raw()).is_err() {
            self.discard();
            return None;
        }
        if command && !matches!(recv_reply(self.sock.as_fd()), Ok(SpawnReply::Ready)) {
            self.discard();
            return None;
        }
        if command {
            // It execs beside the runner, which then asks for the next
            // warm command (it takes its CPUs back before exec).
            super::sched::keep_off_this_cpu(self.pid);
        }
        let streams = match Streams::new(stdin_pipe) {
            Ok(streams) => streams,
            Err(err) => {
                self.discard();
                return Some(Err(ZygoteError::Spawn(err)));
            }
        };
        let sent = rmp_serde::to_vec(image)
            .ok()
            .and_then(|body| wire::send(self.sock.as_fd(), &body, &streams.theirs()).ok());
        if sent.is_some() {
            meanwhile();
        }
        let reply = match (sent, command) {
            (None, _) => None,
            (Some(()), false) => recv_reply(self.sock.as_fd()).ok(),
            (Some(()), true) => match wire::recv(self.sock.as_fd()) {
                Ok(None) => Some(SpawnReply::Started {
                    pid: self.pid.as_raw(),
                }),
                Ok(Some((reply, _))) => rmp_serde::from_slice(&reply).ok(),
                Err(_) => None,
            },
        };
        match reply {
            Some(SpawnReply::Started { .. }) => {
                Some(Ok((streams.into_spawned(self.pid), self.prepared)))
            }
            Some(SpawnReply::Failed { errno, .. }) => {
                let _ = crate::exec::reap_pid(self.pid);
                Some(Err(ZygoteError::Spawn(std::io::Error::from_raw_os_error(
                    errno,
                ))))
            }
            Some(SpawnReply::Ready) | None => {
                self.discard();
                None
            }
        }
    }
}

/// Why a command was not started through the zygote.
#[derive(Debug)]
pub enum ZygoteError {
    /// The zygote is gone (or answered nonsense): start it another way.
    Lost(String),
    /// The zygote made the attempt and the command did not start: the
    /// error a direct spawn would have met.
    Spawn(std::io::Error),
}

impl Zygote {
    /// Starts a zygote: this binary again, from a thread that lives as
    /// long as the handle. That thread is the parent of the zygote and so
    /// of every command it starts, whose parent-death signal fires when it
    /// ends: it ends only when the handle is dropped.
    pub fn start() -> std::io::Result<Zygote> {
        if !available() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "this binary does not serve as a zygote",
            ));
        }
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let (started_tx, started_rx) = mpsc::channel();
        let (stop, stopped) = mpsc::channel::<()>();
        let keeper = std::thread::Builder::new()
            .name("zygote".into())
            .spawn(move || {
                let spawned = Command::new("/proc/self/exe")
                    .arg0("agent-runtime-zygote")
                    .arg(ARG)
                    .arg(std::process::id().to_string())
                    .env_clear()
                    .current_dir("/")
                    .stdin(Stdio::from(theirs))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn();
                let mut child = match spawned {
                    Ok(child) => child,
                    Err(err) => {
                        let _ = started_tx.send(Err(err));
                        return;
                    }
                };
                let _ = started_tx.send(Ok(child.id()));
                // Until the handle is dropped (or dropped its sender).
                let _ = stopped.recv();
                let _ = child.kill();
                let _ = child.wait();
            })?;
        let pid = match started_rx.recv() {
            Ok(Ok(pid)) => pid,
            Ok(Err(err)) => {
                let _ = keeper.join();
                return Err(err);
            }
            Err(_) => {
                let _ = keeper.join();
                return Err(std::io::Error::other("the zygote's thread ended"));
            }
        };
        let pid = i32::try_from(pid).unwrap_or(-1);
        // The zygote has this process's credentials: it rests where this
        // process could leave `SCHED_IDLE` again.
        let resting = super::sched::can_leave_idle().then_some(Pid::from_raw(pid));
        Ok(Zygote {
            link: Mutex::new(Link {
                sock: Some(ours),
                lost: None,
                slot: None,
                pending: None,
                unreported: None,
                attempt_init: None,
                resting,
            }),
            pid,
            stop: Some(stop),
            keeper: Some(keeper),
        })
    }

    /// The zygote's pid.
    pub fn pid(&self) -> Pid {
        Pid::from_raw(self.pid)
    }

    /// Why the zygote is no longer used, once it is not.
    pub fn lost(&self) -> Option<String> {
        match self.link.lock() {
            Ok(link) => link.lost.clone(),
            Err(_) => Some("poisoned".to_string()),
        }
    }

    /// Starts `image` in the warm init made for `key` ([`warm`](Self::warm)),
    /// if there is one: the command and the init's setup (its cgroup and
    /// exit page are the command's). `None` when there is no such init (or
    /// it is gone): prepare the command's sandbox and [`spawn`](Self::spawn).
    /// `next` prepares the sandbox of the command after it, whose warm
    /// process is asked for as soon as this command is sent its image.
    pub(crate) fn spawn_warm(
        &self,
        key: &ReuseKey,
        image: &Image,
        stdin_pipe: bool,
        next: impl FnOnce() -> Option<Prepared>,
    ) -> Option<Result<(Spawned, Prepared), ZygoteError>> {
        let slot = {
            let mut link = match self.link.lock() {
                Ok(link) => link,
                Err(_) => return Some(Err(ZygoteError::Lost("poisoned".into()))),
            };
            if let Some(why) = check(&mut link) {
                return Some(Err(ZygoteError::Lost(why)));
            }
            let slot = link.slot.take()?;
            if slot.key != *key {
                slot.discard();
                return None;
            }
            slot
        };
        // The warm process for the command after this one is asked for
        // as soon as this one is sent its image: the zygote makes it while
        // this command execs and runs, so it is ready when it is wanted.
        // (Asked for once this command had started, it was not, one time
        // in two; asked for before the image was sent, the zygote's clone
        // held up this command's exec.)
        slot.start(image, stdin_pipe, || {
            if let Some(next) = next() {
                self.warm(next, key.clone());
            }
        })
    }

    /// Starts `image` inside the sandbox `prepared` (made for `key`), as
    /// the runner's child in a process group of its own; stdin is a pipe
    /// when `stdin_pipe`, else /dev/null. Once it has started, the next
    /// command's warm process is asked for, prepared by `next`, where
    /// `prepared` clones its init directly.
    pub(crate) fn spawn(
        &self,
        image: Image,
        prepared: &Prepared,
        stdin_pipe: bool,
        key: &ReuseKey,
        next: impl FnOnce() -> Option<Prepared>,
    ) -> Result<Spawned, ZygoteError> {
        let mut link = self
            .link
            .lock()
            .map_err(|_| ZygoteError::Lost("poisoned".into()))?;
        if let Some(why) = check(&mut link) {
            return Err(ZygoteError::Lost(why));
        }
        if let Some(slot) = link.slot.take() {
            slot.discard();
        }
        if prepared.child.shares_pid() && link.attempt_init.is_none() {
            match exchange(&mut link, &Request::PidNamespace, &[])? {
                SpawnReply::Started { pid } => link.attempt_init = Some(Pid::from_raw(pid)),
                SpawnReply::Failed { errno, .. } => {
                    // Commands that need the namespace cannot start here.
                    let why = format!(
                        "the zygote could not make the attempt's PID namespace: {}",
                        std::io::Error::from_raw_os_error(errno)
                    );
                    return Err(lose(&mut link, why));
                }
                SpawnReply::Ready => return Err(lose(&mut link, NONSENSE.to_string())),
            }
        }
        let (setup, setup_fds) = prepared.handoff();
        let request = Request::Spawn { image, setup };
        let streams = Streams::new(stdin_pipe).map_err(ZygoteError::Spawn)?;
        let mut fds = streams.theirs().to_vec();
        fds.extend(setup_fds);
        let reply = exchange(&mut link, &request, &fds)?;
        match reply {
            SpawnReply::Started { pid } => {
                drop(link);
                if prepared.child.direct().is_some()
                    && let Some(next) = next()
                {
                    self.warm(next, key.clone());
                }
                Ok(streams.into_spawned(Pid::from_raw(pid)))
            }
            SpawnReply::Failed { pid, errno } => {
                drop(link);
                if let Some(pid) = pid {
                    let _ = crate::exec::reap_pid(Pid::from_raw(pid));
                }
                Err(ZygoteError::Spawn(std::io::Error::from_raw_os_error(errno)))
            }
            SpawnReply::Ready => Err(lose(&mut link, NONSENSE.to_string())),
        }
    }

    /// Has the zygote make a warm init for `prepared` (which must clone
    /// its init directly, see `ChildSetup::direct`), for the next command
    /// to start in; an earlier one is killed. Nothing happens when the
    /// zygote cannot make one: the next command starts as usual.
    pub(crate) fn warm(&self, prepared: Prepared, key: ReuseKey) {
        if prepared.child.direct().is_none() {
            return;
        }
        let Ok(mut link) = self.link.lock() else {
            return;
        };
        // A warm command goes into the attempt's namespace, made by the
        // command before it.
        if prepared.child.shares_pid() && link.attempt_init.is_none() {
            return;
        }
        settle(&mut link);
        if let Some(old) = link.slot.take() {
            old.discard();
        }
        if link.lost.is_some() || link.unreported.is_some() {
            return;
        }
        let Ok((ours, theirs)) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        ) else {
            return;
        };
        if !prepared.child.shares_pid() {
            lift_zygote(&link);
        }
        let (setup, setup_fds) = prepared.handoff();
        let mut fds = vec![theirs.as_raw_fd()];
        fds.extend(setup_fds);
        // The answer is read when the slot is next needed: meanwhile the
        // zygote makes the init and the runner goes on.
        match send_request(&mut link, &Request::Warm { setup }, &fds) {
            Ok(()) => link.pending = Some((ours, prepared, key)),
            Err(_) => link.unreported = link.lost.take(),
        }
    }
}

/// Whether the zygote can still be used: why not, once it cannot. A
/// loss found while a warm init was being made, or a zygote gone while
/// its warm init waits, is told now (and its init killed), so the command
/// that finds it gone is the one marked.
fn check(link: &mut Link) -> Option<String> {
    if let Some(why) = &link.lost {
        return Some(why.clone());
    }
    settle(link);
    let gone = link.sock.as_ref().is_none_or(|sock| hung_up(sock.as_fd()));
    if gone && link.unreported.is_none() {
        link.unreported = Some("the zygote is gone".to_string());
    }
    let why = link.unreported.take()?;
    if let Some(slot) = link.slot.take() {
        slot.discard();
    }
    link.sock = None;
    link.lost = Some(why.clone());
    Some(why)
}

/// Reads the answer to a warm init asked for, if one is pending: the slot
/// is ready, or there is none.
fn settle(link: &mut Link) {
    let Some((sock, prepared, key)) = link.pending.take() else {
        return;
    };
    if link
        .sock
        .as_ref()
        .is_some_and(|zygote| !readable(zygote.as_fd()))
    {
        // Still being made: not on idle time while the runner waits.
        lift_zygote(link);
    }
    let resting = link.resting.is_some();
    match read_reply(link) {
        Ok(SpawnReply::Started { pid }) => {
            link.slot = Some(Slot {
                pid: Pid::from_raw(pid),
                sock,
                prepared,
                key,
                resting,
            });
        }
        Ok(SpawnReply::Failed { pid, .. }) => {
            if let Some(pid) = pid {
                let _ = crate::exec::reap_pid(Pid::from_raw(pid));
            }
        }
        Ok(SpawnReply::Ready) => {
            let _ = lose(link, NONSENSE.to_string());
            link.unreported = link.lost.take();
        }
        Err(_) => link.unreported = link.lost.take(),
    }
}

/// Why a zygote that answered what it never says is no longer used.
const NONSENSE: &str = "the zygote's reply makes no sense";

/// Sends `request` with `fds` to the zygote and reads its reply; a zygote
/// that cannot be talked to is marked lost.
fn exchange(link: &mut Link, request: &Request, fds: &[RawFd]) -> Result<SpawnReply, ZygoteError> {
    // The runner waits for the answer: not on idle time.
    lift_zygote(link);
    send_request(link, request, fds)?;
    read_reply(link)
}

/// Sends `request` with `fds` to the zygote; a zygote that cannot be
/// talked to is marked lost.
fn send_request(link: &mut Link, request: &Request, fds: &[RawFd]) -> Result<(), ZygoteError> {
    let body = rmp_serde::to_vec(request)
        .map_err(|e| ZygoteError::Spawn(std::io::Error::other(e.to_string())))?;
    let Some(sock) = link.sock.as_ref() else {
        return Err(ZygoteError::Lost("closed".into()));
    };
    wire::send(sock.as_fd(), &body, fds)
        .map_err(|e| format!("cannot send to the zygote: {e}"))
        .map_err(|why| lose(link, why))
}

/// Reads the zygote's reply to the request sent last.
fn read_reply(link: &mut Link) -> Result<SpawnReply, ZygoteError> {
    let Some(sock) = link.sock.as_ref() else {
        return Err(ZygoteError::Lost("closed".into()));
    };
    recv_reply(sock.as_fd()).map_err(|why| lose(link, why))
}

/// One reply on `sock` (the zygote's, or a warm init's), or why there is
/// none.
fn recv_reply(sock: std::os::fd::BorrowedFd<'_>) -> Result<SpawnReply, String> {
    match wire::recv(sock) {
        Ok(Some((reply, _))) => rmp_serde::from_slice::<SpawnReply>(&reply)
            .map_err(|e| format!("the reply does not decode: {e}")),
        Ok(None) => Err("the zygote is gone".to_string()),
        Err(e) => Err(format!("cannot read the reply: {e}")),
    }
}

fn lose(link: &mut Link, why: String) -> ZygoteError {
    link.sock = None;
    link.lost = Some(why.clone());
    ZygoteError::Lost(why)
}

/// Lifts a resting zygote out of `SCHED_IDLE` (see `sched.rs`); it rests
/// again once it has answered.
fn lift_zygote(link: &Link) {
    if let Some(zygote) = link.resting {
        let _ = super::sched::lift(zygote.as_raw());
    }
}

/// What `sock` has now: something to read, its other end gone (none when
/// it cannot be polled).
fn events_now(sock: std::os::fd::BorrowedFd<'_>) -> nix::poll::PollFlags {
    let mut fds = [nix::poll::PollFd::new(sock, nix::poll::PollFlags::POLLIN)];
    match nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO) {
        Ok(n) if n > 0 => fds[0].revents().unwrap_or(nix::poll::PollFlags::empty()),
        _ => nix::poll::PollFlags::empty(),
    }
}

/// Whether `sock` has something to read (or its other end has gone).
fn readable(sock: std::os::fd::BorrowedFd<'_>) -> bool {
    !events_now(sock).is_empty()
}

/// Whether the other end of `sock` has gone.
fn hung_up(sock: std::os::fd::BorrowedFd<'_>) -> bool {
    events_now(sock).intersects(nix::poll::PollFlags::POLLHUP | nix::poll::PollFlags::POLLERR)
}

impl Drop for Zygote {
    fn drop(&mut self) {
        let mut attempt_init = None;
        if let Ok(mut link) = self.link.lock() {
            settle(&mut link);
            if let Some(slot) = link.slot.take() {
                slot.discard();
            }
            link.sock = None;
            attempt_init = link.attempt_init.take();
        }
        // The keeper kills and reaps the zygote, then ends.
        drop(self.stop.take());
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        // Then the attempt's PID namespace, with whatever is left in it.
        if let Some(init) = attempt_init {
            let _ = nix::sys::signal::kill(init, nix::sys::signal::Signal::SIGKILL);
            let _ = crate::exec::reap_pid(init);
        }
    }
}
