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
pub(crate) enum Role {
    User,
    Assistant,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Message {
    pub(crate) role: Role,
    pub(crate) content: String,
}

impl Message {
    pub(crate) fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    pub(crate) fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What the agent loop asks a provider for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProviderRequest {
    pub(crate) system: String,
    pub(crate) messages: Vec<Message>,
    /// The JSON Schema replies must follow, for providers that can enforce
    /// it.
    pub(crate) schema: Option<serde_json::Value>,
    /// 1-based attempt number of the job.
    pub(crate) attempt: u32,
}

/// One reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProviderReply {
    pub(crate) text: String,
    /// Input tokens, those served from the provider's prompt cache included.
    pub(crate) input_tokens: u64,
    /// Of `input_tokens`, those served from the cache (priced apart).
    pub(crate) cached_input_tokens: u64,
    pub(crate) output_tokens: u64,
    /// From the first request sent to the reply, retries and waits included.
    pub(crate) latency: Duration,
    /// Requests that failed transiently and were retried before this reply,
    /// in order, for the loop to record as events.
    pub(crate) retries: Vec<ProviderRetry>,
}

/// Tokens a response reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Usage {
    /// Input tokens, cached ones included.
    pub(crate) input: u64,
    /// Of `input`, those served from the provider's prompt cache.
    pub(crate) cached: u64,
    pub(crate) output: u64,
}

/// One retry of a request that failed transiently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ProviderRetry {
    /// 1-based number of the retry (1 = the second request).
    pub(crate) attempt: u32,
    /// Why the previous request failed, short: "http 503",
    /// "connection refused", "timeout".
    pub(crate) reason: String,
    /// How long the provider waited before this retry.
    pub(crate) wait_ms: u64,
}

/// What an agent's model call is, besides its conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConverseTurn {
    /// 1-based attempt number of the job.
    pub(crate) attempt: u32,
    /// A request of the agent's own (a title, a summary) rather than a
    /// step: a scripted provider answers it without using a line.
    pub(crate) side: bool,
}

/// A model's answer to an agent's conversation, and what it cost (the
/// figures of `billed`; its text is the reply as the log hashes it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Conversed {
    pub(crate) reply: crate::protocol::Reply,
    pub(crate) billed: ProviderReply,
}

/// A model, or something that stands in for one.
pub(crate) trait Provider: Send {
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

    /// Answers an agent's model call (through the model bridge): its
    /// conversation as the agent sent it, tools and all. Providers that
    /// cannot say so.
    fn converse(
        &mut self,
        conversation: &crate::protocol::Conversation,
        turn: ConverseTurn,
        cancel: &CancelToken,
    ) -> Result<Conversed, ProviderError> {
        let _ = (conversation, turn, cancel);
        Err(ProviderError::Fatal {
            message: "this provider cannot answer an agent's model calls".to_string(),
        })
    }
}
