//! What can go wrong asking a provider for a reply.

use std::path::PathBuf;
use std::time::Duration;

/// A provider failure. [`ProviderError::is_retryable`] says whether asking
/// again may help.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("{}: cannot read script: {source}", path.display())]
    ScriptRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: {message}", path.display())]
    ScriptParse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("script {} exhausted after {replies} replies", path.display())]
    ScriptExhausted { path: PathBuf, replies: usize },
    /// Worth retrying: a timeout, a connection reset, HTTP 429 or 5xx.
    #[error("transient provider error: {message}")]
    Transient {
        message: String,
        /// How long the provider asked us to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// Not worth retrying: bad credentials, a refused request, bad config.
    #[error("provider error: {message}")]
    Fatal { message: String },
    #[error("cancelled while waiting for the provider")]
    Cancelled,
}

impl ProviderError {
    pub fn is_retryable(&self) -> bool {
        matches!(self, ProviderError::Transient { .. })
    }

    /// Retries made before the call failed for good.
    pub fn retries(&self) -> Vec<super::api::ProviderRetry> {
        Vec::new()
    }
}
