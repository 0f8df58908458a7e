//! Model providers: the one interface the agent loop asks for a reply, and its
//! implementations. [`build_provider`] makes the one a configuration names.
//!
//! - `api.rs`: the `Provider` trait: a request in, one reply text out, with
//!   token counts, latency and retries.
//! - `script.rs`: the scripted provider, replaying replies from a file, for
//!   offline runs and tests.
//! - `dialect.rs`: one HTTP path for model APIs (body, POST with retries, reply
//!   text and usage), spoken in two dialects; `http.rs`: the blocking POST
//!   under it, the key redacted from every message.
//! - `openai.rs`: chat completions (json_schema, json_object, tools, text),
//!   also local servers.
//! - `anthropic.rs`: the Messages API with tools.
//! - `command.rs`: a model CLI under the executor, AGY preset.
//! - `reply.rs`: every reply read as typed structs (a chat completion, an
//!   Anthropic message, a model CLI's envelope, an error body, each field
//!   optional), and why a reply has no text as a `ReplyError`.
//! - `tools.rs`: decision kinds as tools (function calling), both ways.
//! - `retry.rs`: the retry policy with its `retry_for` horizon.
//! - `usage.rs`: the token counts a reply reports, checked: a whole number up
//!   to 10,000,000 per reply, else a provider error naming it; `tokens.rs`:
//!   estimates where a provider reports none.
//! - `factory.rs`: the factory, secrets read once there.
//! - `preflight.rs`: the check made once before a batch or run.
//! - `error.rs`: what can go wrong, one line each.
//! - `tests/`: against a mock HTTP server and a fake model CLI, no network.
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

pub(crate) use api::{
    ConverseTurn, Message, Provider, ProviderReply, ProviderRequest, ProviderRetry,
};
pub(crate) use error::ProviderError;
pub(crate) use factory::build_provider;
pub(crate) use preflight::preflight;
pub(crate) use script::{ScriptProvider, load_script};
pub(crate) use tools::decision_tools;

#[cfg(test)]
pub(crate) use anthropic::{ANTHROPIC_VERSION, AnthropicProvider};
#[cfg(test)]
pub(crate) use api::Role;
#[cfg(test)]
pub(crate) use command::CommandProvider;
#[cfg(test)]
pub(crate) use factory::build_provider_with_env;
#[cfg(test)]
pub(crate) use http::Secret;
#[cfg(test)]
pub(crate) use openai::OpenAiProvider;
#[cfg(test)]
pub(crate) use retry::RetryPolicy;
