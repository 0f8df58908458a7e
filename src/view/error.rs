//! Why a viewer could not start.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ViewError {
    #[error("failed to draw the viewer's token from the OS random number generator: {0}")]
    Token(getrandom::Error),
    #[error("failed to listen on 127.0.0.1:{port}: {message}")]
    Bind { port: u16, message: String },
    #[error("{} is not a data directory (one that holds events.log, or will)", .0.display())]
    NotADataDir(PathBuf),
}
