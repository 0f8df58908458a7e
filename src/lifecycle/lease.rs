//! Attempt leases: an OS file lock (`flock`) held by the runner for as long as
//! the attempt runs. The kernel drops it when the runner dies, however it dies,
//! so "running without a live lease" means "interrupted".

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

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
            Ok(()) => Ok(Lease {
                path: path.to_path_buf(),
                _file: file,
            }),
            Err(TryLockError::WouldBlock) => Err(LeaseError::Held(path.to_path_buf())),
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
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

/// Open attempts of `state` whose lease nobody holds (their runner is
/// gone), as `(job, attempt, pid)`. Only asks the OS; writes nothing.
pub fn stale_attempts(
    dir: &super::DataDir,
    state: &crate::state::State,
) -> Vec<(String, u32, u32)> {
    state
        .jobs()
        .iter()
        .filter_map(|job| {
            job.lifecycle
                .open
                .map(|open| (job.id.clone(), open.attempt, open.pid))
        })
        .filter(|(id, attempt, _)| !is_live(&dir.lease(id, *attempt)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
