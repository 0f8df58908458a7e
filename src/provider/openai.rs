//! The `openai` provider: chat completions (`POST {base_url}/chat/completions`)
//! on OpenAI or any compatible server (llama.cpp, Ollama, vLLM).
//!
//! Output modes:
//! - `json_schema`: `response_format = {"type": "json_schema", "json_schema":
//!   {"name": "decision", "schema": ..., "strict": false}}`. Not strict: the
//!   decision union uses `oneOf` and optional fields, which OpenAI's strict
//!   subset refuses; local servers enforce the schema as a grammar anyway.
//! - `json_object`: `response_format = {"type": "json_object", "schema": ...}`,
//!   the form llama.cpp servers accept (others ignore `schema` and only
//!   force JSON).
//! - `tools`: one function per decision kind, `tool_choice = "required"`,
//!   no parallel calls; see `tools` for how calls map to decisions.
//! - `text`: nothing constrained; the decision is parsed from prose.
//!
//! The key, when configured, goes in `Authorization: Bearer`; it is never
//! logged and never part of an error.

use crate::protocol::{Conversation, DialectError, Reply};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{ProviderRequest, Role, Usage};
use super::dialect::{Dialect, HttpProvider};
use super::http::{HttpClient, Secret};
use super::reply::{ChatCompletion, ChatUsage, ContentPart, ReplyError, WithUsage, read};
use super::retry::RetryPolicy;
use super::tools::{
    as_tool_call, call_id, call_text_to_text, call_to_text, calls_to_text, openai_tools,
};
use super::usage::UsageError;
use crate::decision::decision_schema;
use crate::manifest::{OpenAiConfig, OpenAiMode};

/// Chat completions over HTTP.
pub(crate) type OpenAiProvider = HttpProvider<OpenAi>;

/// The chat-completions dialect.
#[derive(Debug)]
pub(crate) struct OpenAi {
    config: OpenAiConfig,
    key: Option<Secret>,
}

impl OpenAiProvider {
    /// A provider for `config`, with the key already read from its
    /// variable (`None` for servers that need none).
    pub(crate) fn new(config: OpenAiConfig, key: Option<Secret>) -> OpenAiProvider {
        let client = HttpClient::new("openai", &config.base_url, config.timeout, key.clone());
        let policy = RetryPolicy::new(config.max_retries).with_retry_for(config.retry_for);
        HttpProvider::with_dialect(OpenAi { config, key }, client, policy)
    }
}

impl Dialect for OpenAi {
    fn api(&self) -> &'static str {
        "openai"
    }

    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.config.base_url)
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        self.key
            .iter()
            .map(|key| ("authorization", format!("Bearer {}", key.expose())))
            .collect()
    }

    /// The JSON body sent for `request`.
    fn request_body(&self, request: &ProviderRequest) -> Value {
        let tools = self.config.mode == OpenAiMode::Tools;
        let mut body = json!({
            "model": self.config.model,
            "messages": chat_messages(request, tools),
        });
        let schema = || request.schema.clone().unwrap_or_else(decision_schema);
        match self.config.mode {
            OpenAiMode::JsonSchema => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": { "name": "decision", "schema": schema(), "strict": false },
                });
            }
            OpenAiMode::JsonObject => {
                body["response_format"] = json!({ "type": "json_object", "schema": schema() });
            }
            OpenAiMode::Tools => {
                body["tools"] = openai_tools();
                body["tool_choice"] = json!("required");
                body["parallel_tool_calls"] = json!(false);
            }
            OpenAiMode::Text => {}
        }
        if let Some(temperature) = self.config.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(max_tokens) = self.config.max_tokens {
            body["max_tokens"] = json!(max_tokens);
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
        let mut body = crate::wire::openai::chat_request(conversation);
        body["model"] = Value::String(self.config.model.clone());
        if let Some(temperature) = self.config.temperature {
            body["temperature"] = temperature.into();
        }
        if let Some(max_tokens) = self.config.max_tokens {
            body["max_tokens"] = max_tokens.into();
        }
        body
    }

    fn conversation_reply(&self, response: &Value) -> Result<Reply, DialectError> {
        crate::wire::openai::read_chat_reply(response)
    }
}

/// The conversation as chat messages; with `tools`, earlier decisions as
/// tool calls and the observations after them as tool results.
pub(crate) fn chat_messages(request: &ProviderRequest, tools: bool) -> Vec<Value> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    let mut pending: Option<String> = None;
    for (index, message) in request.messages.iter().enumerate() {
        match message.role {
            Role::Assistant => {
                pending = None;
                let call = if tools {
                    as_tool_call(&message.content)
                } else {
                    None
                };
                match call {
                    Some((kind, arguments)) => {
                        let id = call_id(index);
                        messages.push(json!({
                            "role": "assistant",
                            "content": null,
                            "tool_calls": [{
                                "id": id,
                                "type": "function",
                                "function": { "name": kind, "arguments": Value::Object(arguments).to_string() },
                            }],
                        }));
                        pending = Some(id);
                    }
                    None => {
                        messages.push(json!({ "role": "assistant", "content": message.content }))
                    }
                }
            }
            Role::User => match pending.take() {
                Some(id) => messages.push(json!({
                    "role": "tool",
                    "tool_call_id": id,
                    "content": message.content,
                })),
                None => messages.push(json!({ "role": "user", "content": message.content })),
            },
        }
    }
    messages
}

/// The reply text of a chat completion: its tool calls as decision text,
/// else its content.
pub(super) fn reply_text(response: &Value) -> Result<String, ReplyError> {
    let completion: ChatCompletion = read(response, "a chat completion")?;
    let Some(message) = completion.choices.into_iter().next().map(|c| c.message) else {
        return Err(ReplyError::NoChoices);
    };
    if !message.tool_calls.is_empty() {
        let mut texts = Vec::with_capacity(message.tool_calls.len());
        for call in &message.tool_calls {
            let Some(name) = call.function.name.as_deref() else {
                return Err(ReplyError::NoFunctionName);
            };
            texts.push(match &call.function.arguments {
                Value::String(arguments) => call_text_to_text(name, arguments),
                other => call_to_text(name, other),
            });
        }
        return Ok(calls_to_text(texts));
    }
    match message.content {
        Value::String(text) => Ok(text),
        Value::Null => Ok(String::new()),
        // Some servers send content parts: keep the text ones.
        parts @ Value::Array(_) => {
            let parts: Vec<ContentPart> =
                read(&parts, "a chat completion").map_err(|_| ReplyError::ContentNotText)?;
            Ok(parts.into_iter().filter_map(|part| part.text).collect())
        }
        _ => Err(ReplyError::ContentNotText),
    }
}

/// `usage.prompt_tokens` (of which `prompt_tokens_details.cached_tokens`
/// came from the cache) and `usage.completion_tokens`, when reported.
/// A count that is negative or beyond what one reply can use is an error.
fn usage(response: &Value) -> Result<Option<Usage>, UsageError> {
    let usage = WithUsage::<ChatUsage>::deserialize(response)
        .unwrap_or_default()
        .usage;
    let input = usage.prompt_tokens.get("prompt_tokens")?;
    let output = usage.completion_tokens.get("completion_tokens")?;
    let cached = usage
        .prompt_tokens_details
        .cached_tokens
        .get("cached_tokens")?;
    let (Some(input), Some(output)) = (input, output) else {
        return Ok(None);
    };
    Usage {
        input,
        cached: cached.unwrap_or(0),
        output,
    }
    .checked()
    .map(Some)
}
