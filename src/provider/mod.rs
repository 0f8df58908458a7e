//! Model providers: the one interface the agent loop asks for a reply, and
//! its implementations: `script` (replays replies from a file, for offline
//! runs and tests), `openai` (chat completions, also local servers),
//! `anthropic` (the Messages API) and `command` (a local model CLI run
//! through the executor). [`build_provider`] makes the one a configuration
//! names.
//!
//! Owns talking to a model and nothing else: a provider never parses or
//! executes a decision, never reads a secret from anywhere but the variable
//! its configuration names, never puts a secret in a message, and never
//! writes to the log (the loop records what it returns, retries included).

mod anthropic;
mod api;
mod command;
mod dialect;
mod error;
mod factory;
mod http;
mod openai;
mod preflight;
mod reply;
mod retry;
mod script;
mod tokens;
mod tools;
mod usage;

#[cfg(test)]
mod tests;

pub use anthropic::{ANTHROPIC_VERSION, Anthropic, AnthropicProvider, anthropic_messages};
pub use api::{Message, Provider, ProviderReply, ProviderRequest, ProviderRetry, Role, Usage};
pub use command::{CommandProvider, ParsedOutput, parse_output, prompt};
pub use dialect::{Dialect, HttpProvider};
pub use error::ProviderError;
pub use factory::{build_provider, build_provider_with_env};
pub use http::Secret;
pub use openai::{OpenAi, OpenAiProvider, chat_messages};
pub use preflight::preflight;
pub use retry::{DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, RetryPolicy};
pub use script::{ScriptProvider, ScriptReplies, load_script};
pub use tokens::estimate_tokens;
pub use tools::{ToolSpec, decision_tools};
pub use usage::{MAX_TOKENS_PER_REPLY, UsageError, token_count};
