//! The private `HOME` and `TMPDIR` of a command that has no root file
//! system of its own: a fresh host directory per command, removed once
//! it is over.
//!
//! Making and removing directories costs more than starting a small
//! command (three `mkdir`s about 70 us on ext4, removing a tree about
//! 0.3 ms with `discard`), so both happen on a janitor thread, off the
//! command's path: it removes the directories commands are done with
//! (at most [`BACKLOG`] wait for it; beyond that the command that ends
//! removes its own), and it keeps one fresh directory made ahead for the
//! next command, made again each time one is taken. A process that is
//! about to exit calls [`remove_pending_scratch`] to wait for the janitor
//! and remove the directory made ahead; one that does not has it removed
//! as it exits normally.

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
    /// directory of the executor's own (the one made ahead, when there is
    /// one), removed when dropped.
    pub(crate) fn new(given: Option<&Path>) -> Result<Scratch, ExecError> {
        let Some(dir) = given else {
            let (owned, root) = match JANITOR.take_made() {
                Some(made) => made,
                None => make()?,
            };
            return Ok(Scratch {
                root,
                owned: Some(owned),
            });
        };
        std::fs::create_dir_all(dir).map_err(ExecError::io(format!("create {}", dir.display())))?;
        let root = canonical(dir)?;
        home_and_tmp(&root)?;
        Ok(Scratch { root, owned: None })
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub(crate) fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }
}

fn canonical(dir: &Path) -> Result<PathBuf, ExecError> {
    dir.canonicalize().map_err(ExecError::io(format!(
        "resolve the scratch directory {}",
        dir.display()
    )))
}

/// A fresh directory of the executor's own with its `home` and `tmp`, and
/// its canonical path.
fn make() -> Result<(tempfile::TempDir, PathBuf), ExecError> {
    let dir = tempfile::Builder::new()
        .prefix("agent-runtime-exec-")
        .tempdir()
        .map_err(ExecError::io("create a scratch directory"))?;
    let root = canonical(dir.path())?;
    home_and_tmp(&root)?;
    Ok((dir, root))
}

/// Makes `root`'s `home` and `tmp` unless they are there.
fn home_and_tmp(root: &Path) -> Result<(), ExecError> {
    for sub in ["home", "tmp"] {
        let path = root.join(sub);
        std::fs::create_dir_all(&path)
            .map_err(ExecError::io(format!("create {}", path.display())))?;
    }
    Ok(())
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = self.owned.take() {
            JANITOR.discard(dir);
        }
    }
}

/// Most directories waiting for the janitor.
const BACKLOG: usize = 64;

/// The process's janitor.
static JANITOR: Janitor = Janitor::new();

/// A janitor thread and what it is to do.
struct Janitor {
    queue: Mutex<Queue>,
    /// Wakes the janitor when there is work, and waiters when it is done.
    changed: Condvar,
}

/// Directories to remove, the one made ahead, and whether the janitor is
/// busy or runs at all.
struct Queue {
    dirs: Vec<tempfile::TempDir>,
    /// A fresh directory made ahead, and its canonical path.
    made: Option<(tempfile::TempDir, PathBuf)>,
    /// The janitor is to make one ahead.
    make: bool,
    busy: bool,
    running: bool,
}

impl Queue {
    /// No more directories made ahead; the one made, to be dropped (which
    /// removes it) once the lock is let go.
    fn stop_making(&mut self) -> Option<(tempfile::TempDir, PathBuf)> {
        self.make = false;
        self.made.take()
    }
}

impl Janitor {
    const fn new() -> Janitor {
        Janitor {
            queue: Mutex::new(Queue {
                dirs: Vec::new(),
                made: None,
                make: false,
                busy: false,
                running: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        // A panic while the lock was held leaves a queue that is still whole.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The directory made ahead, if there is one; either way the janitor
    /// is asked to make the next (the first command of a process makes its
    /// own).
    fn take_made(&'static self) -> Option<(tempfile::TempDir, PathBuf)> {
        let mut queue = self.queue();
        let made = queue.made.take();
        if self.start(&mut queue) {
            queue.make = true;
            self.changed.notify_all();
        }
        // One made ahead that is gone meanwhile (a cleaner of the temporary
        // directory) is not used; dropping it removes what is left.
        made.filter(|(_, root)| root.join("home").is_dir() && root.join("tmp").is_dir())
    }

    /// Starts the janitor's thread unless it runs; whether it runs.
    fn start(&'static self, queue: &mut Queue) -> bool {
        if !queue.running {
            let started = std::thread::Builder::new()
                .name("exec-scratch".into())
                .spawn(|| self.work());
            if started.is_err() {
                return false;
            }
            queue.running = true;
            static AT_EXIT: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a function without arguments that only
            // takes the process janitor's lock if it is free and drops what
            // it holds.
            AT_EXIT.call_once(|| unsafe {
                libc::atexit(remove_at_exit);
            });
        }
        true
    }

    /// Hands `dir` to the janitor, or removes it here when the janitor is
    /// behind or cannot be started.
    fn discard(&'static self, dir: tempfile::TempDir) {
        let mut queue = self.queue();
        if queue.dirs.len() >= BACKLOG || !self.start(&mut queue) {
            drop(queue);
            drop(dir);
            return;
        }
        queue.dirs.push(dir);
        self.changed.notify_all();
    }

    /// The janitor's life: remove what is queued and make a directory
    /// ahead when asked, for as long as the process lives.
    fn work(&self) {
        let mut queue = self.queue();
        loop {
            while queue.dirs.is_empty() && !(queue.make && queue.made.is_none()) {
                queue = self
                    .changed
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            let dirs = std::mem::take(&mut queue.dirs);
            let make_one = std::mem::take(&mut queue.make) && queue.made.is_none();
            queue.busy = true;
            drop(queue);
            // Dropping a TempDir removes its tree.
            drop(dirs);
            let made = if make_one { make().ok() } else { None };
            queue = self.queue();
            if queue.made.is_none() {
                queue.made = made;
            }
            queue.busy = false;
            self.changed.notify_all();
        }
    }

    /// Waits until every directory handed over is removed, then removes
    /// the one made ahead.
    fn finish(&self) {
        let mut queue = self.queue();
        while !queue.dirs.is_empty() || queue.busy {
            queue = self
                .changed
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let made = queue.stop_making();
        drop(queue);
        drop(made);
    }
}

/// Waits until every scratch directory the executor made and no longer
/// uses is removed, and removes the one made ahead. Call it before the
/// process exits.
pub fn remove_pending_scratch() {
    JANITOR.finish();
}

/// At a normal exit: the directories left to the janitor and the one made
/// ahead go, unless the janitor holds the lock.
extern "C" fn remove_at_exit() {
    let Ok(mut queue) = JANITOR.queue.try_lock() else {
        return;
    };
    let made = queue.stop_making();
    let dirs = std::mem::take(&mut queue.dirs);
    drop(queue);
    drop(made);
    drop(dirs);
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

    /// A janitor of the test's own, so other tests' commands never take
    /// what it makes.
    fn own_janitor() -> &'static Janitor {
        Box::leak(Box::new(Janitor::new()))
    }

    /// The root of the directory `janitor` made ahead, once it has (at
    /// most 10 s).
    fn made_root(janitor: &Janitor) -> PathBuf {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut queue = janitor.queue();
        loop {
            if let Some((_, root)) = &queue.made {
                return root.clone();
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(!left.is_zero(), "nothing was made ahead");
            queue = janitor.changed.wait_timeout(queue, left).unwrap().0;
        }
    }

    #[test]
    fn the_next_command_gets_a_directory_made_ahead_and_the_end_removes_it() {
        let janitor = own_janitor();
        assert!(
            janitor.take_made().is_none(),
            "nothing is made before one is asked for"
        );
        let root = made_root(janitor);
        assert!(root.join("home").is_dir() && root.join("tmp").is_dir());
        let (dir, taken) = janitor.take_made().unwrap();
        assert_eq!(taken, root);
        // Taking it asked for the next one.
        let next = made_root(janitor);
        assert_ne!(next, root);
        janitor.discard(dir);
        janitor.finish();
        assert!(!root.exists(), "{} is still there", root.display());
        assert!(!next.exists(), "{} is still there", next.display());
    }

    #[test]
    fn a_directory_made_ahead_and_emptied_meanwhile_is_not_used() {
        let janitor = own_janitor();
        assert!(janitor.take_made().is_none());
        let root = made_root(janitor);
        std::fs::remove_dir(root.join("home")).unwrap();
        assert!(janitor.take_made().is_none());
        assert!(!root.exists(), "what was left of it is removed");
        janitor.finish();
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
