//! Where things live under a data directory.

use std::path::{Path, PathBuf};

/// The layout of `DATA/`.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        DataDir { root: root.into() }
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

    /// `DATA/runs/<job>/<attempt>/`: the attempt's artifacts.
    pub fn runs(&self, job: &str, attempt: u32) -> PathBuf {
        self.root.join("runs").join(job).join(attempt.to_string())
    }
}
