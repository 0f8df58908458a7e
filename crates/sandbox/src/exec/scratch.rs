//! The private `HOME` and `TMPDIR` of a command that has no root file
//! system of its own: a fresh host directory per command, removed once
//! it is over.
//!
//! Removing a directory tree costs more than starting a small command
//! (about 0.3 ms on an ext4 mounted with `discard`), so the executor's own
//! scratch directories are removed on a janitor thread, off the command's
//! path. At most [`BACKLOG`] wait for it; beyond that the command that
//! ends removes its own. A process that is about to exit calls
//! [`remove_pending_scratch`] to wait for the janitor.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::error::ExecError;

/// The private HOME and TMPDIR of a command.
pub(crate) struct Scratch {
    root: PathBuf,
    owned: Option<tempfile::TempDir>,
}

impl Scratch {
    /// `given` (made if missing, kept afterwards), or else a fresh
    /// directory of the executor's own, removed when dropped.
    pub(crate) fn new(given: Option<&Path>) -> Result<Scratch, ExecError> {
        let canonical = |dir: &Path| {
            dir.canonicalize().map_err(ExecError::io(format!(
                "resolve the scratch directory {}",
                dir.display()
            )))
        };
        let (root, owned) = match given {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(ExecError::io(format!("create {}", dir.display())))?;
                (canonical(dir)?, None)
            }
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("agent-runtime-exec-")
                    .tempdir()
                    .map_err(ExecError::io("create a scratch directory"))?;
                (canonical(dir.path())?, Some(dir))
            }
        };
        let scratch = Scratch { root, owned };
        for dir in [scratch.home(), scratch.tmp()] {
            std::fs::create_dir_all(&dir)
                .map_err(ExecError::io(format!("create {}", dir.display())))?;
        }
        Ok(scratch)
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub(crate) fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = self.owned.take() {
            discard(dir);
        }
    }
}

/// Most directories waiting for the janitor.
const BACKLOG: usize = 64;

/// Directories to remove, and whether the janitor is removing some or
/// runs at all.
struct Queue {
    dirs: Vec<tempfile::TempDir>,
    busy: bool,
    janitor: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    dirs: Vec::new(),
    busy: false,
    janitor: false,
});
/// Wakes the janitor when there is work, and waiters when it is done.
static CHANGED: Condvar = Condvar::new();

fn queue() -> MutexGuard<'static, Queue> {
    // A panic while the lock was held leaves a queue that is still whole.
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hands `dir` to the janitor, or removes it here when the janitor is
/// behind or cannot be started.
fn discard(dir: tempfile::TempDir) {
    let mut queue = queue();
    if queue.dirs.len() >= BACKLOG {
        drop(queue);
        drop(dir);
        return;
    }
    if !queue.janitor {
        let started = std::thread::Builder::new()
            .name("exec-scratch".into())
            .spawn(janitor);
        if started.is_err() {
            drop(queue);
            drop(dir);
            return;
        }
        queue.janitor = true;
    }
    queue.dirs.push(dir);
    CHANGED.notify_all();
}

/// The janitor's life: remove what is queued, for as long as the process
/// lives.
fn janitor() {
    let mut queue = queue();
    loop {
        while queue.dirs.is_empty() {
            queue = CHANGED.wait(queue).unwrap_or_else(PoisonError::into_inner);
        }
        let dirs = std::mem::take(&mut queue.dirs);
        queue.busy = true;
        drop(queue);
        // Dropping a TempDir removes its tree.
        drop(dirs);
        queue = self::queue();
        queue.busy = false;
        CHANGED.notify_all();
    }
}

/// Waits until every scratch directory the executor made and no longer
/// uses is removed. Call it before the process exits.
pub fn remove_pending_scratch() {
    let mut queue = queue();
    while !queue.dirs.is_empty() || queue.busy {
        queue = CHANGED.wait(queue).unwrap_or_else(PoisonError::into_inner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_of_the_executors_own_is_gone_once_the_janitor_is_waited_for() {
        let scratch = Scratch::new(None).unwrap();
        let root = scratch.root.clone();
        assert!(scratch.home().is_dir() && scratch.tmp().is_dir());
        std::fs::write(scratch.tmp().join("left"), b"x").unwrap();
        drop(scratch);
        remove_pending_scratch();
        assert!(!root.exists(), "{} is still there", root.display());
    }

    #[test]
    fn a_given_scratch_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let given = dir.path().join("s");
        drop(Scratch::new(Some(&given)).unwrap());
        remove_pending_scratch();
        assert!(given.join("home").is_dir());
    }
}
