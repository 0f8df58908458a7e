//! One HTTP path for every model API: a request body, a POST with retries,
//! the reply text and token usage out. What differs between APIs (the
//! endpoint, headers, body and response shapes) is a [`Dialect`].

use std::time::Instant;

use serde_json::Value;

use super::api::{
    ConverseTurn, Conversed, Provider, ProviderReply, ProviderRequest, ProviderRetry, Usage,
};
use super::error::ProviderError;
use super::http::HttpClient;
use super::reply::ReplyError;
use super::retry::{RetryPolicy, run_with_retries};
use super::tokens::{estimate_request, estimate_tokens};
use super::usage::UsageError;
use crate::cancel::CancelToken;
use crate::protocol::{Conversation, DialectError, Reply};

/// What one model API says differently.
pub(crate) trait Dialect: Send + std::fmt::Debug {
    /// The API's name in messages ("openai", "anthropic").
    fn api(&self) -> &'static str;
    /// Where requests go.
    fn endpoint(&self) -> String;
    /// Headers besides the JSON content type (authentication, versions).
    fn headers(&self) -> Vec<(&'static str, String)>;
    /// The JSON body sent for `request`.
    fn request_body(&self, request: &ProviderRequest) -> Value;
    /// The reply text of a response, or why there is none.
    fn reply_text(&self, response: &Value) -> Result<String, ReplyError>;
    /// The tokens the response reports, if it does; an error when a count
    /// is negative or more than one reply can use.
    fn usage(&self, response: &Value) -> Result<Option<Usage>, UsageError>;
    /// The JSON body that asks this API to answer an agent's
    /// conversation (its tools and calls as the API writes them).
    fn conversation_body(&self, conversation: &Conversation) -> Value;
    /// The reply to an agent's conversation in a response.
    fn conversation_reply(&self, response: &Value) -> Result<Reply, DialectError>;
}

/// A model API over HTTP, spoken in dialect `D`.
#[derive(Debug)]
pub(crate) struct HttpProvider<D> {
    dialect: D,
    client: HttpClient,
    policy: RetryPolicy,
}

impl<D: Dialect> HttpProvider<D> {
    pub(super) fn with_dialect(
        dialect: D,
        client: HttpClient,
        policy: RetryPolicy,
    ) -> HttpProvider<D> {
        HttpProvider {
            dialect,
            client,
            policy,
        }
    }

    /// Replaces the retry policy (tests use a tiny backoff).
    #[cfg(test)]
    pub(crate) fn with_retry_policy(mut self, policy: RetryPolicy) -> HttpProvider<D> {
        self.policy = policy;
        self
    }
}

impl<D: Dialect> Provider for HttpProvider<D> {
    fn converse(
        &mut self,
        conversation: &Conversation,
        _turn: ConverseTurn,
        cancel: &CancelToken,
    ) -> Result<Conversed, ProviderError> {
        let started = Instant::now();
        let url = self.dialect.endpoint();
        let body = self.dialect.conversation_body(conversation);
        let headers = self.dialect.headers();
        let (response, retries) = run_with_retries(&self.policy, cancel, &mut |_| {}, || {
            self.client.post_json(&url, &headers, &body, cancel)
        })?;
        let reply =
            self.dialect
                .conversation_reply(&response)
                .map_err(|why| ProviderError::Request {
                    message: self.client.redact(&format!(
                        "{} provider: unusable response from {url}: {why}",
                        self.dialect.api()
                    )),
                    retryable: false,
                    retries: retries.clone(),
                    billed: None,
                })?;
        let billed = ProviderReply {
            text: format!(
                "{}{}",
                reply.text,
                reply
                    .calls
                    .iter()
                    .map(|c| format!("\n{} {}", c.name, c.input))
                    .collect::<String>()
            ),
            input_tokens: reply.input_tokens,
            cached_input_tokens: 0,
            output_tokens: reply.output_tokens,
            latency: started.elapsed(),
            retries,
        };
        Ok(Conversed { reply, billed })
    }

    fn complete(
        &mut self,
        request: &ProviderRequest,
        cancel: &CancelToken,
    ) -> Result<ProviderReply, ProviderError> {
        self.complete_watched(request, cancel, &mut |_| {})
    }

    fn complete_watched(
        &mut self,
        request: &ProviderRequest,
        cancel: &CancelToken,
        watch: &mut dyn FnMut(&ProviderRetry),
    ) -> Result<ProviderReply, ProviderError> {
        let started = Instant::now();
        let url = self.dialect.endpoint();
        let body = self.dialect.request_body(request);
        let headers = self.dialect.headers();
        let (response, retries) = run_with_retries(&self.policy, cancel, watch, || {
            self.client.post_json(&url, &headers, &body, cancel)
        })?;
        // A response the loop cannot use fails the call for good; what it
        // billed is counted when its usage can be trusted.
        let usage = self.dialect.usage(&response);
        let unusable = |why: String, billed: Option<(u64, u64)>| ProviderError::Request {
            message: self.client.redact(&format!(
                "{} provider: unusable response from {url}: {why}",
                self.dialect.api()
            )),
            retryable: false,
            retries: retries.clone(),
            billed,
        };
        let text = match self.dialect.reply_text(&response) {
            Ok(text) => text,
            Err(why) => {
                let billed = usage.ok().flatten().map(|u| (u.input, u.output));
                return Err(unusable(why.to_string(), billed));
            }
        };
        let usage = match usage {
            Ok(Some(usage)) => usage,
            Ok(None) => Usage {
                input: estimate_request(request),
                cached: 0,
                output: estimate_tokens(&text),
            },
            // A count no reply can have: the numbers of this server cannot
            // be trusted, so neither can the reply.
            Err(why) => return Err(unusable(why.to_string(), None)),
        };
        Ok(ProviderReply {
            text,
            input_tokens: usage.input,
            cached_input_tokens: usage.cached,
            output_tokens: usage.output,
            latency: started.elapsed(),
            retries,
        })
    }
}
