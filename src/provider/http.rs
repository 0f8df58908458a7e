//! The HTTP plumbing shared by the `openai` and `anthropic` providers: one
//! blocking JSON POST with a timeout, classified for the retry loop, and
//! the secret that must never leak into a message.
//!
//! A request runs on its own thread so a cancel is noticed within a tick
//! even while a server is slow; the abandoned request then ends at its
//! timeout. Error messages say what failed and why in one line, with any
//! occurrence of the API key replaced by `[redacted]`.

use std::io::ErrorKind;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::retry::{Failure, SendError, parse_retry_after, response_is_retryable};
use crate::cancel::CancelToken;

/// How often a waiting request looks at the cancel token.
const TICK: Duration = Duration::from_millis(20);
/// Longest response body read (a reply is one decision; 16 MiB is plenty).
const MAX_BODY: u64 = 16 << 20;
/// Longest server error detail kept in a message.
const MAX_DETAIL: usize = 300;

/// An API key. Its `Debug` form never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// A blocking JSON client for one provider.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    agent: ureq::Agent,
    /// "openai" or "anthropic", the first word of every message.
    provider: &'static str,
    timeout: Duration,
    secret: Option<Secret>,
}

/// What the request thread hands back: status, `Retry-After`, body.
type Raw = Result<(u16, Option<String>, String), Failure>;

impl HttpClient {
    /// A client for requests to `base_url`. Proxies come from the usual
    /// variables (`HTTPS_PROXY`, `NO_PROXY`, ...), except that a loopback
    /// server (a local model) is always reached directly.
    pub(crate) fn new(
        provider: &'static str,
        base_url: &str,
        timeout: Duration,
        secret: Option<Secret>,
    ) -> Self {
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout));
        if is_loopback(base_url) {
            config = config.proxy(None);
        }
        let agent = config.build().new_agent();
        HttpClient {
            agent,
            provider,
            timeout,
            secret,
        }
    }

    /// POSTs `body` as JSON to `url` with `headers`; a 2xx response with a
    /// JSON body is the value, anything else a classified failure.
    pub(crate) fn post_json(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: &Value,
        cancel: &CancelToken,
    ) -> Result<Value, SendError> {
        let (sender, receiver) = mpsc::channel::<Raw>();
        let target = url.to_string();
        let headers = headers.to_vec();
        let payload = body.to_string();
        let this = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("{}-request", self.provider))
            .spawn(move || {
                let _ = sender.send(this.send_raw(&target, &headers, payload));
            });
        if let Err(err) = spawned {
            return Err(self
                .failure(
                    "thread",
                    false,
                    format!("cannot start a request thread: {err}"),
                )
                .into());
        }
        let raw = loop {
            match receiver.recv_timeout(TICK) {
                Ok(raw) => break raw,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if cancel.is_cancelled() {
                        return Err(SendError::Cancelled);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(self
                        .failure("thread", false, "the request thread stopped".to_string())
                        .into());
                }
            }
        };
        let (status, retry_after, text) = raw?;
        if !(200..300).contains(&status) {
            let detail = error_detail(&text);
            let message = self.redact(&format!(
                "{} provider: http {status} from {url}: {detail}",
                self.provider
            ));
            return Err(SendError::Failed(Failure {
                reason: format!("http {status}"),
                message,
                retryable: response_is_retryable(status, &text),
                retry_after: retry_after.as_deref().and_then(parse_retry_after),
            }));
        }
        serde_json::from_str(&text).map_err(|err| {
            SendError::Failed(self.failure(
                "invalid response",
                false,
                format!("invalid JSON in the response from {url}: {err}"),
            ))
        })
    }

    /// The request itself, on the request thread.
    fn send_raw(&self, url: &str, headers: &[(&'static str, String)], payload: String) -> Raw {
        let mut request = self
            .agent
            .post(url)
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        let mut response = request
            .send(payload)
            .map_err(|err| self.transport_failure(url, &err, false))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_string()
            .map_err(|err| self.transport_failure(url, &err, true))?;
        Ok((status, retry_after, text))
    }

    /// Classifies a failure below HTTP: refused, timed out, cut off.
    fn transport_failure(&self, url: &str, err: &ureq::Error, reading_body: bool) -> Failure {
        let (reason, retryable) = match err {
            ureq::Error::Timeout(_) => ("timeout".to_string(), true),
            ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => {
                ("connection refused".to_string(), true)
            }
            ureq::Error::Io(io) if io.kind() == ErrorKind::TimedOut => {
                ("timeout".to_string(), true)
            }
            ureq::Error::BodyExceedsLimit(_) => ("response too large".to_string(), false),
            _ if reading_body => ("truncated response body".to_string(), true),
            ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Protocol(_) => ("connection error".to_string(), true),
            _ => ("request error".to_string(), false),
        };
        let message = match reason.as_str() {
            "timeout" => format!(
                "{} provider: no response from {url} within {:?}: timeout",
                self.provider, self.timeout
            ),
            _ => format!("{} provider: {reason} from {url}: {err}", self.provider),
        };
        Failure {
            reason,
            message: self.redact(&one_line(&message)),
            retryable,
            retry_after: None,
        }
    }

    fn failure(&self, reason: &str, retryable: bool, detail: String) -> Failure {
        Failure {
            reason: reason.to_string(),
            message: self.redact(&format!(
                "{} provider: {}",
                self.provider,
                one_line(&detail)
            )),
            retryable,
            retry_after: None,
        }
    }

    /// `text` with the key, if any, replaced.
    pub(crate) fn redact(&self, text: &str) -> String {
        match &self.secret {
            Some(secret) if !secret.expose().is_empty() => {
                text.replace(secret.expose(), "[redacted]")
            }
            _ => text.to_string(),
        }
    }
}

/// Whether `url` names this machine (`localhost`, `127.x.x.x`, `[::1]`).
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// What a server said went wrong: `error.message` (OpenAI and Anthropic),
/// `error` as a string, `message`, or the start of the body.
fn error_detail(body: &str) -> String {
    let parsed: Option<super::reply::ErrorBody> = serde_json::from_str(body).ok();
    let from_json = parsed
        .as_ref()
        .and_then(super::reply::ErrorBody::detail)
        .map(str::to_string);
    let detail = from_json.unwrap_or_else(|| body.to_string());
    let detail = one_line(&detail);
    if detail.is_empty() {
        return "empty response body".to_string();
    }
    cut(&detail, MAX_DETAIL)
}

/// Collapses whitespace runs (newlines included) into single spaces.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` bytes of `text`, on a character boundary, with an
/// ellipsis when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_come_from_the_error_object_or_the_body() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"invalid api key","type":"auth"}}"#),
            "invalid api key"
        );
        assert_eq!(
            error_detail(r#"{"error":"model not loaded"}"#),
            "model not loaded"
        );
        assert_eq!(error_detail("Bad\n  Gateway\n"), "Bad Gateway");
        assert_eq!(error_detail(""), "empty response body");
        assert_eq!(error_detail(&"x".repeat(1000)).len(), MAX_DETAIL + 3);
    }

    #[test]
    fn loopback_servers_are_recognized() {
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://[::1]:8000/v1"));
        assert!(is_loopback("http://user@127.0.0.2/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("http://10.0.0.5:8080"));
    }

    #[test]
    fn secrets_are_redacted_and_never_debug_printed() {
        let secret = Secret::new("sk-very-secret");
        assert_eq!(format!("{secret:?}"), "Secret([redacted])");
        let client = HttpClient::new(
            "openai",
            "https://api.example.com/v1",
            Duration::from_secs(1),
            Some(secret),
        );
        assert_eq!(
            client.redact("bad key sk-very-secret given"),
            "bad key [redacted] given"
        );
        assert!(!format!("{client:?}").contains("sk-very-secret"));
    }
}
