//! Model APIs on the wire: each dialect's request read into one
//! [`Conversation`](crate::protocol::Conversation) and a reply written
//! back in it (whole, or as the events of its stream), and the other way
//! round, a conversation written as that API's request and its answer
//! read. The model bridge serves an agent through them; providers speak
//! an agent's conversation to a model through them.
//!
//! - `anthropic.rs`: the Anthropic Messages API (`POST /v1/messages`).
//! - `openai.rs`: the OpenAI Responses API (`POST /v1/responses`, what
//!   Codex CLI speaks, its MCP tools as namespaces) and Chat Completions
//!   (`POST /v1/chat/completions`).
//!
//! Pure: JSON in, JSON out (the clock aside, for `created` times).

pub(crate) mod anthropic;
pub(crate) mod openai;
