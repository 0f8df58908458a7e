//! The provider interface: a request (system prompt, conversation, optional
//! output schema) in, one reply text out, with token counts, latency and
//! the retries it took.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::ProviderError;
use crate::cancel::CancelToken;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What the agent loop asks a provider for.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRequest {
    pub system: String,
    pub messages: Vec<Message>,
    /// The JSON Schema replies must follow, for providers that can enforce
    /// it.
    pub schema: Option<serde_json::Value>,
    /// 1-based attempt number of the job.
    pub attempt: u32,
}

/// One reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderReply {
    pub text: String,
    /// Input tokens, those served from the provider's prompt cache included.
    pub input_tokens: u64,
    /// Of `input_tokens`, those served from the cache (priced apart).
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// From the first request sent to the reply, retries and waits included.
    pub latency: Duration,
    /// Requests that failed transiently and were retried before this reply,
    /// in order, for the loop to record as events.
    pub retries: Vec<ProviderRetry>,
}

/// Tokens a response reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Usage {
    /// Input tokens, cached ones included.
    pub input: u64,
    /// Of `input`, those served from the provider's prompt cache.
    pub cached: u64,
    pub output: u64,
}

/// One retry of a request that failed transiently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderRetry {
    /// 1-based number of the retry (1 = the second request).
    pub attempt: u32,
    /// Why the previous request failed, short: "http 503",
    /// "connection refused", "timeout".
    pub reason: String,
    /// How long the provider waited before this retry.
    pub wait_ms: u64,
}

/// A model, or something that stands in for one.
pub trait Provider: Send {
    /// A short name for reports (e.g. the provider file's name).
    fn name(&self) -> &str;

    /// Asks for the next reply. Returns promptly with
    /// [`ProviderError::Cancelled`] once `cancel` is set.
    fn complete(
        &mut self,
        request: &ProviderRequest,
        cancel: &CancelToken,
    ) -> Result<ProviderReply, ProviderError>;

    /// As [`Provider::complete`], telling `watch` of each retry as its
    /// wait begins, so a wait (an outage) is on record while it lasts. A
    /// provider that does not retry reports nothing.
    fn complete_watched(
        &mut self,
        request: &ProviderRequest,
        cancel: &CancelToken,
        watch: &mut dyn FnMut(&ProviderRetry),
    ) -> Result<ProviderReply, ProviderError> {
        let _ = watch;
        self.complete(request, cancel)
    }
}
