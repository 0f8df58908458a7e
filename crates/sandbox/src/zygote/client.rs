//! The runner's handle on a zygote: start it, send it commands, and end
//! it when the handle is dropped.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread::JoinHandle;

use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
use nix::unistd::Pid;

use super::wire::{self, ARG, SpawnReply, SpawnRequest};
use crate::exec::{Image, Spawned, Streams};
use crate::sandbox::Prepared;

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
        Ok(Zygote {
            link: Mutex::new(Link {
                sock: Some(ours),
                lost: None,
            }),
            pid: i32::try_from(pid).unwrap_or(-1),
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

    /// Starts `resolved` (as `argv`, in `cwd`, with `env`) inside the
    /// sandbox `prepared`, as the runner's child in a process group of its
    /// own; stdin is a pipe when `stdin_pipe`, else /dev/null.
    pub(crate) fn spawn(
        &self,
        resolved: &Path,
        argv: &[String],
        cwd: &Path,
        env: &std::collections::BTreeMap<String, String>,
        prepared: &Prepared,
        stdin_pipe: bool,
    ) -> Result<Spawned, ZygoteError> {
        let (setup, setup_fds) = prepared.handoff();
        let request = SpawnRequest {
            image: Image::new(resolved, argv, cwd, env).map_err(ZygoteError::Spawn)?,
            setup,
        };
        let streams = Streams::new(stdin_pipe).map_err(ZygoteError::Spawn)?;
        let body = rmp_serde::to_vec(&request)
            .map_err(|e| ZygoteError::Spawn(std::io::Error::other(e.to_string())))?;
        let mut fds = streams.theirs().to_vec();
        fds.extend(setup_fds);

        let mut link = self
            .link
            .lock()
            .map_err(|_| ZygoteError::Lost("poisoned".into()))?;
        if let Some(why) = &link.lost {
            return Err(ZygoteError::Lost(why.clone()));
        }
        let Some(sock) = link.sock.as_ref() else {
            return Err(ZygoteError::Lost("closed".into()));
        };
        let exchanged = wire::send(sock.as_fd(), &body, &fds)
            .map_err(|e| format!("cannot send to the zygote: {e}"))
            .and_then(|()| match wire::recv(sock.as_fd()) {
                Ok(Some((reply, _))) => rmp_serde::from_slice::<SpawnReply>(&reply)
                    .map_err(|e| format!("the zygote's reply does not decode: {e}")),
                Ok(None) => Err("the zygote is gone".to_string()),
                Err(e) => Err(format!("cannot read the zygote's reply: {e}")),
            });
        let reply = match exchanged {
            Ok(reply) => reply,
            Err(why) => {
                link.sock = None;
                link.lost = Some(why.clone());
                return Err(ZygoteError::Lost(why));
            }
        };
        drop(link);
        match reply {
            SpawnReply::Started { pid } => Ok(streams.into_spawned(Pid::from_raw(pid))),
            SpawnReply::Failed { pid, errno } => {
                if let Some(pid) = pid {
                    let _ = crate::exec::reap_pid(Pid::from_raw(pid));
                }
                Err(ZygoteError::Spawn(std::io::Error::from_raw_os_error(errno)))
            }
        }
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        if let Ok(mut link) = self.link.lock() {
            link.sock = None;
        }
        // The keeper kills and reaps the zygote, then ends.
        drop(self.stop.take());
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
    }
}
