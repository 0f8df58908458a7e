//! The provider interface: a request (system prompt, conversation, optional
//! output schema) in, one reply text out, with token counts and latency.

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
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency: Duration,
    /// Transient failures retried before this reply, for the log.
    pub retries: Vec<ProviderRetry>,
}

/// One retried provider call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRetry {
    /// 1-based retry number.
    pub attempt: u32,
    /// Why, e.g. `http 503`, `connection refused`, `timeout`.
    pub reason: String,
    /// How long the provider waited before retrying.
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
}
