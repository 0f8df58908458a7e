//! Model providers: the one interface the agent loop asks for a reply, and
//! its implementations (for now the scripted provider, which replays
//! replies from a file for offline runs and tests).
//!
//! Owns talking to a model and nothing else: a provider never parses or
//! executes a decision, never reads a secret from anywhere but the variable
//! its configuration names, and never writes to the log (the loop records
//! what it returns).

mod api;
mod error;
mod script;
mod tokens;

pub use api::{Message, Provider, ProviderReply, ProviderRequest, ProviderRetry, Role};
pub use error::ProviderError;
pub use script::{ScriptProvider, ScriptReplies, load_script};
pub use tokens::estimate_tokens;
