//! Where things live under a data directory.

use std::path::{Path, PathBuf};

/// The layout of `DATA/`.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// The data dir at `root`, made absolute against the current
    /// directory: paths derived from it (a job cache's `CARGO_HOME`, a
    /// workspace) are handed to commands that run elsewhere.
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        let root = root.into();
        DataDir {
            root: std::path::absolute(&root).unwrap_or(root),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `DATA/events.log`
    pub fn log(&self) -> PathBuf {
        self.root.join("events.log")
    }

    /// `DATA/leases/<job>/<attempt>.lock`: held by the attempt's runner.
    pub fn lease(&self, job: &str, attempt: u32) -> PathBuf {
        self.root
            .join("leases")
            .join(job)
            .join(format!("{attempt}.lock"))
    }

    /// `DATA/work/<job>/<attempt>/`: the attempt's workspace.
    pub fn work(&self, job: &str, attempt: u32) -> PathBuf {
        self.root.join("work").join(job).join(attempt.to_string())
    }

    /// `DATA/work/<job>/<attempt>-<check>/`: the clean copy a baseline or
    /// acceptance check runs in (never the agent's workspace).
    pub fn check_dir(&self, job: &str, attempt: u32, check: &str) -> PathBuf {
        self.root
            .join("work")
            .join(job)
            .join(format!("{attempt}-{check}"))
    }

    /// The root with symlinks resolved, for sandbox rules (which compare
    /// resolved paths); the root as given if it cannot be resolved.
    pub fn canonical_root(&self) -> PathBuf {
        self.root
            .canonicalize()
            .unwrap_or_else(|_| self.root.clone())
    }

    /// `DATA/cache/`: job caches (what `[setup]` brought in, dependency
    /// build layers), one directory per cache key, shared by the attempts,
    /// repeats and providers of a job.
    pub fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// `DATA/runs/<job>/<attempt>/`: the attempt's artifacts.
    pub fn runs(&self, job: &str, attempt: u32) -> PathBuf {
        self.root.join("runs").join(job).join(attempt.to_string())
    }
}
