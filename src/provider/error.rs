//! What can go wrong asking a provider for a reply.
//!
//! Every message is one line saying what failed and why. Secrets never
//! appear in one: providers redact their key from anything a server sends
//! back before it becomes an error.

use std::path::PathBuf;

use super::api::ProviderRetry;

/// A provider failure. [`ProviderError::is_retryable`] says whether asking
/// again may help; [`ProviderError::retries`] lists the retries a provider
/// already made before giving up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProviderError {
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
    /// Not worth retrying: bad credentials, a refused request, bad config.
    #[error("provider error: {message}")]
    Fatal { message: String },
    /// A request to a model service failed: `message` names the provider,
    /// the URL and the cause (e.g. `openai provider: http 401 from
    /// http://127.0.0.1:8080/v1/chat/completions: invalid api key`).
    #[error("{message}{}", retried_suffix(retries))]
    Request {
        message: String,
        /// Whether asking again later may help (it was already retried
        /// `retries.len()` times).
        retryable: bool,
        /// The retries made before this final failure.
        retries: Vec<ProviderRetry>,
        /// Tokens the provider reported for a response it billed but that
        /// could not be used (e.g. no completion in it).
        billed: Option<(u64, u64)>,
    },
    /// The configuration cannot make a provider (e.g. the key variable is
    /// unset).
    #[error("{name}: {message}")]
    Config { name: String, message: String },
    /// Neither the job nor the command line names a provider.
    #[error("the job has no [provider] and none was given with --provider")]
    NoProvider,
    /// The cancel token was set. Retries made before it are not carried:
    /// the attempt ends as cancelled either way.
    #[error("cancelled while waiting for the provider")]
    Cancelled,
}

fn retried_suffix(retries: &[ProviderRetry]) -> String {
    match retries.len() {
        0 => String::new(),
        1 => " (after 1 retry)".to_string(),
        n => format!(" (after {n} retries)"),
    }
}

impl ProviderError {
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Request { retryable, .. } => *retryable,
            _ => false,
        }
    }

    /// `(input, output)` tokens billed for a response that could not be
    /// used.
    pub(crate) fn billed(&self) -> Option<(u64, u64)> {
        match self {
            ProviderError::Request { billed, .. } => *billed,
            _ => None,
        }
    }

    /// The retries made before this error (empty for most errors).
    pub(crate) fn retries(&self) -> &[ProviderRetry] {
        match self {
            ProviderError::Request { retries, .. } => retries,
            _ => &[],
        }
    }
}
