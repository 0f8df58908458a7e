//! The `anthropic` provider: the Messages API (`POST {base_url}/v1/messages`
//! with `x-api-key` and `anthropic-version: 2023-06-01`), decisions as tool
//! use: one tool per decision kind, `tool_choice = {"type": "any"}` with
//! parallel tool use disabled.
//!
//! History is replayed statelessly: an earlier reply that parses as a
//! decision becomes a `tool_use` block (id `call_<turn index>`), and the
//! observation after it a `tool_result` block; consecutive turns of one
//! role are merged, as the API wants roles to alternate.

use crate::protocol::{Conversation, DialectError, Reply};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{ProviderRequest, Role, Usage};
use super::dialect::{Dialect, HttpProvider};
use super::http::{HttpClient, Secret};
use super::reply::{Block, Message, MessageUsage, ReplyError, WithUsage, read};
use super::retry::RetryPolicy;
use super::tools::{anthropic_tools, as_tool_call, call_id, call_to_text, calls_to_text};
use super::usage::UsageError;
use crate::manifest::AnthropicConfig;

/// The API version this provider speaks.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The Messages API over HTTP.
pub(crate) type AnthropicProvider = HttpProvider<Anthropic>;

/// The Messages API dialect.
#[derive(Debug)]
pub(crate) struct Anthropic {
    config: AnthropicConfig,
    key: Secret,
}

impl AnthropicProvider {
    pub(crate) fn new(config: AnthropicConfig, key: Secret) -> AnthropicProvider {
        let client = HttpClient::new(
            "anthropic",
            &config.base_url,
            config.timeout,
            Some(key.clone()),
        );
        let policy = RetryPolicy::new(config.max_retries).with_retry_for(config.retry_for);
        HttpProvider::with_dialect(Anthropic { config, key }, client, policy)
    }
}

impl Dialect for Anthropic {
    fn api(&self) -> &'static str {
        "anthropic"
    }

    fn endpoint(&self) -> String {
        format!("{}/v1/messages", self.config.base_url)
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        vec![
            ("x-api-key", self.key.expose().to_string()),
            ("anthropic-version", ANTHROPIC_VERSION.to_string()),
        ]
    }

    /// The JSON body sent for `request`.
    fn request_body(&self, request: &ProviderRequest) -> Value {
        let mut body = json!({
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "messages": anthropic_messages(request),
            "tools": anthropic_tools(),
            "tool_choice": { "type": "any", "disable_parallel_tool_use": true },
        });
        if !request.system.is_empty() {
            body["system"] = json!(request.system);
        }
        body
    }

    fn reply_text(&self, response: &Value) -> Result<String, ReplyError> {
        reply_text(response)
    }

    fn usage(&self, response: &Value) -> Result<Option<Usage>, UsageError> {
        usage(response)
    }

    fn conversation_body(&self, conversation: &Conversation) -> Value {
        let mut body = crate::wire::anthropic::anthropic_request(
            conversation,
            u64::from(self.config.max_tokens),
        );
        body["model"] = Value::String(self.config.model.clone());
        body
    }

    fn conversation_reply(&self, response: &Value) -> Result<Reply, DialectError> {
        crate::wire::anthropic::read_anthropic_reply(response)
    }
}

/// The conversation as Messages API turns with content blocks.
pub(crate) fn anthropic_messages(request: &ProviderRequest) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut pending: Option<String> = None;
    for (index, message) in request.messages.iter().enumerate() {
        let (role, block) = match message.role {
            Role::Assistant => {
                pending = None;
                match as_tool_call(&message.content) {
                    Some((kind, input)) => {
                        let id = call_id(index);
                        pending = Some(id.clone());
                        (
                            "assistant",
                            json!({ "type": "tool_use", "id": id, "name": kind, "input": input }),
                        )
                    }
                    None => ("assistant", text_block(&message.content)),
                }
            }
            Role::User => match pending.take() {
                Some(id) => (
                    "user",
                    json!({ "type": "tool_result", "tool_use_id": id, "content": non_empty(&message.content) }),
                ),
                None => ("user", text_block(&message.content)),
            },
        };
        match turns.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => turns.push((role, vec![block])),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// The API refuses empty text blocks.
fn non_empty(text: &str) -> &str {
    if text.trim().is_empty() {
        "(empty)"
    } else {
        text
    }
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": non_empty(text) })
}

/// The reply text: the `tool_use` blocks as decision text, else the text
/// blocks joined.
pub(super) fn reply_text(response: &Value) -> Result<String, ReplyError> {
    if response.get("content").is_none_or(|c| !c.is_array()) {
        return Err(ReplyError::NoContent);
    }
    let message: Message = read(response, "an Anthropic message")?;
    let calls: Vec<String> = message
        .content
        .iter()
        .filter_map(|block| match block {
            Block::ToolUse { name, input } => {
                Some(call_to_text(name.as_deref().unwrap_or_default(), input))
            }
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        return Ok(calls_to_text(calls));
    }
    Ok(message
        .content
        .iter()
        .filter_map(|block| match block {
            Block::Text { text } => text.as_deref(),
            _ => None,
        })
        .collect())
}

/// Input tokens (cache reads and writes included) and output tokens; a
/// count that is negative or beyond what one reply can use is an error.
fn usage(response: &Value) -> Result<Option<Usage>, UsageError> {
    let usage = WithUsage::<MessageUsage>::deserialize(response)
        .unwrap_or_default()
        .usage;
    usage.checked()
}
