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

pub(crate) use api::{Message, Provider, ProviderReply, ProviderRequest, ProviderRetry};
pub(crate) use error::ProviderError;
pub(crate) use factory::build_provider;
pub(crate) use preflight::preflight;
pub(crate) use script::load_script;

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
