//! The model bridge's dialects: what an agent sends its model API and
//! what it expects back, read into one conversation and written back in
//! the agent's own API, so any agent can be answered from any provider.
//!
//! - `anthropic.rs`: the Anthropic Messages API (`POST /v1/messages`):
//!   a request read, a reply written whole or as the stream of events its
//!   SDKs read.
//!
//! Pure: JSON in, JSON out; serving it is the caller's.

pub(crate) mod anthropic;
