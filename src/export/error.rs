//! What can go wrong exporting: reading a log, writing a file (as a
//! report file fails, naming its path), making a zip.

use std::path::PathBuf;

/// Failure exporting a data dir's runs.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error(transparent)]
    Log(#[from] crate::log::LogError),
    #[error(transparent)]
    Write(#[from] crate::report::ReportError),
    #[error("failed to write the Inspect log {}: {source}", .path.display())]
    Zip {
        path: PathBuf,
        #[source]
        source: zip::result::ZipError,
    },
}
