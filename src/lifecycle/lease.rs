//! Attempt leases: an OS file lock (`flock`) held by the runner for as long as
//! the attempt runs. The kernel drops it when the runner dies, however it dies,
//! so "running without a live lease" means "interrupted".

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The leases this process holds: each transaction asks after every open
/// attempt's runner (`stale_attempts`), and for its own attempts this
/// process need not ask the kernel (an open, a lock, an unlock and a close
/// each time).
static HELD_HERE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn held_here(path: &Path) -> bool {
    HELD_HERE
        .lock()
        .is_ok_and(|held| held.iter().any(|p| p == path))
}

/// A held lease. Dropping it (or the process dying) releases it.
#[derive(Debug)]
pub struct Lease {
    path: PathBuf,
    _file: File,
}

/// Why a lease could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("lease {} is held by another runner", .0.display())]
    Held(PathBuf),
    #[error("failed to take lease {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Lease {
    /// Creates and locks the lease file without waiting.
    pub fn acquire(path: &Path) -> Result<Lease, LeaseError> {
        let io = |source| LeaseError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {
                if let Ok(mut held) = HELD_HERE.lock() {
                    held.push(path.to_path_buf());
                }
                Ok(Lease {
                    path: path.to_path_buf(),
                    _file: file,
                })
            }
            Err(TryLockError::WouldBlock) => Err(LeaseError::Held(path.to_path_buf())),
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Ok(mut held) = HELD_HERE.lock()
            && let Some(at) = held.iter().position(|p| *p == self.path)
        {
            held.swap_remove(at);
        }
    }
}

/// Whether some process holds the lease at `path`. Opens the file read-only
/// and never creates it, so readers can ask too. A missing file is not live.
pub fn is_live(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(TryLockError::WouldBlock) => true,
        // A lock we cannot even ask about: assume a live owner rather than
        // declaring someone's attempt interrupted.
        Err(TryLockError::Error(_)) => true,
    }
}

/// How long a lease may outlive the runner that took it: a child it forked
/// holds the lock until it has exec'd or died of the runner's death, which
/// the kernel delivers but does not wait for.
const ORPHANED_LEASE_GRACE: Duration = Duration::from_secs(5);

/// Whether the attempt whose lease is at `path`, started by process `pid`,
/// still has its runner: the lease is held, and either `pid` is alive or
/// the lock is still held after [`ORPHANED_LEASE_GRACE`] (by something
/// else than a child dying with the runner).
fn has_runner(path: &Path, pid: u32) -> bool {
    if held_here(path) {
        return true;
    }
    if !is_live(path) {
        return false;
    }
    if pid_alive(pid) {
        return true;
    }
    let deadline = Instant::now() + ORPHANED_LEASE_GRACE;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        if !is_live(path) {
            return false;
        }
    }
    true
}

/// Whether a process `pid` exists (a zombie counts; one we may not signal
/// too). Pid 0 is none we can name: alive.
fn pid_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    if raw == 0 {
        return true;
    }
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// The open attempts `open` (`(job, attempt)` as a log names them) whose
/// lease nobody holds (their runner is gone), as `(job, attempt, pid)`.
/// Only asks the OS; writes nothing.
pub fn stale_attempts<'a>(
    dir: &super::DataDir,
    open: impl IntoIterator<Item = (&'a str, crate::state::OpenAttempt)>,
) -> Vec<(String, u32, u32)> {
    open.into_iter()
        .filter(|(id, open)| !has_runner(&dir.lease(id, open.attempt), open.pid))
        .map(|(id, open)| (id.to_string(), open.attempt, open.pid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_held_here_is_known_here_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (path, other) = (dir.path().join("a/1.lock"), dir.path().join("a/2.lock"));
        let lease = Lease::acquire(&path).unwrap();
        assert!(held_here(&path) && has_runner(&path, 0));
        // Taken by nobody here, and held by nobody at all.
        assert!(!held_here(&other) && !has_runner(&other, 0));
        drop(lease);
        assert!(!held_here(&path));
        assert!(!has_runner(&path, std::process::id()));
    }

    #[test]
    fn held_lease_is_live_and_exclusive_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/1.lock");
        assert!(!is_live(&path), "a missing lease is not live");
        let lease = Lease::acquire(&path).unwrap();
        assert!(is_live(&path));
        assert!(matches!(Lease::acquire(&path), Err(LeaseError::Held(_))));
        drop(lease);
        assert!(!is_live(&path));
        Lease::acquire(&path).unwrap();
    }

    #[test]
    fn a_lease_outliving_its_dead_runner_is_waited_for_but_a_live_runner_s_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/1.lock");
        // A dead runner (a reaped child's pid) whose lease something else
        // still holds, for a moment.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        // A lock this process took outside any lease of its own, as the
        // dead runner's child holds it.
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let other = File::create(&path).unwrap();
        other.try_lock().unwrap();
        let holder = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(other);
        });
        let started = Instant::now();
        assert!(!has_runner(&path, dead));
        assert!(started.elapsed() >= Duration::from_millis(250));
        holder.join().unwrap();
        // A live runner holding its lease is live at once.
        let _held = Lease::acquire(&path).unwrap();
        let started = Instant::now();
        assert!(has_runner(&path, std::process::id()));
        assert!(started.elapsed() < Duration::from_millis(250));
    }
}
