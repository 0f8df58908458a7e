use std::path::PathBuf;

use super::scan::Corruption;

/// Failures reading or appending to an event log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("no log at {}", .path.display())]
    Missing { path: PathBuf },
    #[error("failed to {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is corrupt at {corruption}; the log is not whole, so nothing after that line is trusted or appended", .path.display())]
    Corrupt {
        path: PathBuf,
        corruption: Corruption,
    },
}

/// Why an event was not appended: the fold refused it, or the log could
/// not be written.
#[derive(Debug, thiserror::Error)]
pub enum AppendError<R> {
    #[error(transparent)]
    Refused(R),
    #[error(transparent)]
    Log(#[from] LogError),
}

impl LogError {
    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> LogError {
        let path = path.to_path_buf();
        move |source| LogError::Io {
            action,
            path,
            source,
        }
    }
}
