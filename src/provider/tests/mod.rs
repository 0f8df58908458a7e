//! Providers against a mock HTTP server and a fake model CLI: every mode,
//! the retry policy, and the ways a server or a program can fail. No test
//! needs a network or a model.

mod anthropic;
mod command;
mod factory;
mod mock;
mod openai;

use std::time::Duration;

use super::{Message, ProviderRequest, RetryPolicy};

/// Retries fast enough for tests; the real defaults stay 0.5 s and 30 s.
pub(super) fn fast(max_retries: u32) -> RetryPolicy {
    RetryPolicy::new(max_retries).with_backoff(Duration::from_millis(1), Duration::from_secs(2))
}

/// A conversation with one earlier decision and its observation.
pub(super) fn request_with_history() -> ProviderRequest {
    ProviderRequest {
        system: "You fix bugs. Reply with one decision.".to_string(),
        messages: vec![
            Message::user("Fix sum_up_to."),
            Message::assistant(r#"{"kind":"read_file","path":"src/lib.rs"}"#),
            Message::user("pub fn sum_up_to(n: u32) -> u32 { (1..n).sum() }"),
        ],
        schema: None,
        attempt: 1,
    }
}
