//! What can go wrong writing reports: only I/O, always naming the path.

use std::path::PathBuf;

/// Failure writing one report file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("failed to {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
