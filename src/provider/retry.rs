//! When and how long to wait before asking a model service again.
//!
//! Retried: HTTP 408, 409, 429 and 5xx (529 "overloaded" included),
//! connection failures, timeouts and responses cut off mid-body. Never
//! retried: a 429 whose error code or type is `insufficient_quota` (the
//! account is out of credit; waiting does not help) and every other 4xx.
//!
//! The wait before retry n is exponential with jitter: `d = min(cap, base *
//! 2^(n-1))`, then a uniformly random point in `[d/2, d)`, so runners that
//! failed together do not retry together. A `Retry-After` header (in
//! seconds) replaces the computed wait, capped at `cap`. Defaults: 0.5 s
//! base, 30 s cap. Waiting watches the cancel token, so a cancel never
//! waits out a backoff.

use std::time::Duration;

use super::api::ProviderRetry;
use super::error::ProviderError;
use crate::cancel::CancelToken;

/// Default wait before the first retry (before jitter).
pub(crate) const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
/// Default longest wait between two requests, `Retry-After` included.
pub(crate) const DEFAULT_BACKOFF_CAP: Duration = Duration::from_secs(30);

/// How many times to retry and how long to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    pub(crate) max_retries: u32,
    pub(crate) base: Duration,
    pub(crate) cap: Duration,
    /// Retryable failures go on being retried past `max_retries` while the
    /// first request is younger than this (an outage is waited out).
    pub(crate) retry_for: Duration,
}

impl RetryPolicy {
    /// `max_retries` retries with the default backoff.
    pub(crate) fn new(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            base: DEFAULT_BACKOFF_BASE,
            cap: DEFAULT_BACKOFF_CAP,
            retry_for: Duration::ZERO,
        }
    }

    /// The same policy, retrying for at least `retry_for` in all.
    pub(crate) fn with_retry_for(self, retry_for: Duration) -> RetryPolicy {
        RetryPolicy { retry_for, ..self }
    }

    /// The same policy with another backoff base and cap.
    #[cfg(test)]
    pub(crate) fn with_backoff(self, base: Duration, cap: Duration) -> RetryPolicy {
        RetryPolicy { base, cap, ..self }
    }

    /// The computed wait before retry `retry` (1-based); `jitter` is in
    /// `[0, 1)` and picks a point in `[d/2, d)`.
    pub(crate) fn backoff(&self, retry: u32, jitter: f64) -> Duration {
        let doublings = retry.saturating_sub(1).min(31);
        let full = self.base.saturating_mul(1u32 << doublings).min(self.cap);
        let half = full / 2;
        half + half.mul_f64(jitter.clamp(0.0, 1.0))
    }

    /// The wait before retry `retry`: what the server asked for (capped),
    /// else the backoff.
    pub(crate) fn wait(&self, retry: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        match retry_after {
            Some(asked) => asked.min(self.cap),
            None => self.backoff(retry, jitter),
        }
    }
}

/// Whether an HTTP status is worth retrying (before looking at the body).
pub(super) fn status_is_retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// Whether an error body says the account is out of quota: `error.code` or
/// `error.type` is `insufficient_quota`.
pub(super) fn is_insufficient_quota(body: &str) -> bool {
    serde_json::from_str::<super::reply::ErrorBody>(body)
        .is_ok_and(|error| error.has_code("insufficient_quota"))
}

/// Whether a response with `status` and `body` is worth retrying.
pub(super) fn response_is_retryable(status: u16, body: &str) -> bool {
    status_is_retryable(status) && !(status == 429 && is_insufficient_quota(body))
}

/// A `Retry-After` value in seconds (an integer or a decimal). HTTP dates
/// are not supported and yield `None` (the backoff applies).
pub(super) fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(seconds.min(86_400.0)))
}

/// A random number in `[0, 1)` for jitter: not cryptographic, only
/// different between calls and processes (fastrand seeds each thread's
/// generator afresh).
pub(super) fn jitter() -> f64 {
    fastrand::f64()
}

/// One failed request, as the retry loop sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Failure {
    /// Short cause for the retry record: "http 503", "timeout".
    pub(crate) reason: String,
    /// The full one-line error, should this be the last try.
    pub(crate) message: String,
    pub(crate) retryable: bool,
    pub(crate) retry_after: Option<Duration>,
}

/// Why one request produced no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SendError {
    Failed(Failure),
    Cancelled,
}

impl From<Failure> for SendError {
    fn from(failure: Failure) -> SendError {
        SendError::Failed(failure)
    }
}

/// Calls `send` until it succeeds, fails for good, or `policy.max_retries`
/// retries are spent; returns the value with the retries made. The final
/// error is a [`ProviderError::Request`] carrying the retries. `watch`
/// hears of each retry before its wait begins.
pub(super) fn run_with_retries<T>(
    policy: &RetryPolicy,
    cancel: &CancelToken,
    watch: &mut dyn FnMut(&ProviderRetry),
    mut send: impl FnMut() -> Result<T, SendError>,
) -> Result<(T, Vec<ProviderRetry>), ProviderError> {
    let mut retries: Vec<ProviderRetry> = Vec::new();
    let started = std::time::Instant::now();
    loop {
        if cancel.is_cancelled() {
            return Err(ProviderError::Cancelled);
        }
        let failure = match send() {
            Ok(value) => return Ok((value, retries)),
            Err(SendError::Cancelled) => return Err(ProviderError::Cancelled),
            Err(SendError::Failed(failure)) => failure,
        };
        let made = u32::try_from(retries.len()).unwrap_or(u32::MAX);
        let attempt = made.saturating_add(1);
        let wait = policy.wait(attempt, failure.retry_after, jitter());
        let within_horizon = started.elapsed() + wait <= policy.retry_for;
        if !failure.retryable || (made >= policy.max_retries && !within_horizon) {
            return Err(ProviderError::Request {
                message: failure.message,
                retryable: failure.retryable,
                retries,
                billed: None,
            });
        }
        let retry = ProviderRetry {
            attempt,
            reason: failure.reason,
            wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        };
        watch(&retry);
        retries.push(retry);
        if cancel.wait_timeout(wait) {
            return Err(ProviderError::Cancelled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(reason: &str, retryable: bool, retry_after: Option<Duration>) -> SendError {
        SendError::Failed(Failure {
            reason: reason.to_string(),
            message: format!("test provider: {reason}"),
            retryable,
            retry_after,
        })
    }

    #[test]
    fn backoff_doubles_with_jitter_and_stays_under_the_cap() {
        let policy = RetryPolicy::new(5);
        assert_eq!(policy.backoff(1, 0.0), Duration::from_millis(250));
        assert_eq!(policy.backoff(1, 0.5), Duration::from_millis(375));
        assert_eq!(policy.backoff(2, 0.0), Duration::from_millis(500));
        assert_eq!(policy.backoff(3, 0.5), Duration::from_millis(1500));
        assert_eq!(policy.backoff(10, 0.0), Duration::from_secs(15));
        assert!(policy.backoff(100, 0.999) < Duration::from_secs(30));
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }

    #[test]
    fn retry_after_replaces_the_backoff_and_is_capped() {
        let policy = RetryPolicy::new(3);
        let asked = Some(Duration::from_secs(2));
        assert_eq!(policy.wait(1, asked, 0.3), Duration::from_secs(2));
        let huge = Some(Duration::from_secs(3600));
        assert_eq!(policy.wait(1, huge, 0.3), Duration::from_secs(30));
        assert_eq!(parse_retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn statuses_and_quota_errors_are_classified() {
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(response_is_retryable(status, ""), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!response_is_retryable(status, ""), "{status}");
        }
        let quota = r#"{"error":{"message":"You exceeded your quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        assert!(!response_is_retryable(429, quota));
        let code_only = r#"{"error":{"code":"insufficient_quota"}}"#;
        assert!(is_insufficient_quota(code_only));
        let rate = r#"{"error":{"type":"requests","code":"rate_limit_exceeded"}}"#;
        assert!(response_is_retryable(429, rate));
    }

    #[test]
    fn retries_transient_failures_and_reports_each() {
        let policy =
            RetryPolicy::new(3).with_backoff(Duration::from_millis(1), Duration::from_millis(5));
        let cancel = CancelToken::new();
        let mut calls = 0;
        let (value, retries) = run_with_retries(&policy, &cancel, &mut |_| {}, || {
            calls += 1;
            match calls {
                1 => Err(failure("http 503", true, None)),
                2 => Err(failure("http 429", true, Some(Duration::from_millis(2)))),
                _ => Ok("reply"),
            }
        })
        .unwrap();
        assert_eq!(value, "reply");
        assert_eq!(retries.len(), 2);
        assert_eq!(retries[0].attempt, 1);
        assert_eq!(retries[0].reason, "http 503");
        assert_eq!(retries[1].reason, "http 429");
        assert_eq!(retries[1].wait_ms, 2);
    }

    #[test]
    fn gives_up_after_max_retries_or_at_once_when_not_retryable() {
        let policy =
            RetryPolicy::new(2).with_backoff(Duration::from_millis(1), Duration::from_millis(1));
        let cancel = CancelToken::new();
        let mut calls = 0;
        let err = run_with_retries::<()>(&policy, &cancel, &mut |_| {}, || {
            calls += 1;
            Err(failure("timeout", true, None))
        })
        .unwrap_err();
        assert_eq!(calls, 3);
        assert_eq!(err.retries().len(), 2);
        assert!(err.is_retryable());
        assert_eq!(err.to_string(), "test provider: timeout (after 2 retries)");

        let mut calls = 0;
        let err = run_with_retries::<()>(&policy, &cancel, &mut |_| {}, || {
            calls += 1;
            Err(failure("http 400", false, None))
        })
        .unwrap_err();
        assert_eq!(calls, 1);
        assert!(err.retries().is_empty());
        assert!(!err.is_retryable());
        assert_eq!(err.to_string(), "test provider: http 400");
    }

    #[test]
    fn an_outage_is_waited_out_for_retry_for_then_given_up() {
        let policy = RetryPolicy::new(1)
            .with_backoff(Duration::from_millis(5), Duration::from_millis(5))
            .with_retry_for(Duration::from_millis(300));
        let cancel = CancelToken::new();
        // Down for ten calls (well past max_retries), then up.
        let mut calls = 0;
        let (value, retries) = run_with_retries(&policy, &cancel, &mut |_| {}, || {
            calls += 1;
            if calls <= 10 {
                Err(failure("connection refused", true, None))
            } else {
                Ok(calls)
            }
        })
        .unwrap();
        assert_eq!(value, 11);
        assert_eq!(retries.len(), 10);
        // Down for good: it gives up once the horizon has passed.
        let started = std::time::Instant::now();
        let err = run_with_retries::<()>(&policy, &cancel, &mut |_| {}, || {
            Err(failure("connection refused", true, None))
        })
        .unwrap_err();
        assert!(err.is_retryable());
        assert!(started.elapsed() >= Duration::from_millis(250));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_cancel_interrupts_the_wait() {
        let policy =
            RetryPolicy::new(5).with_backoff(Duration::from_secs(20), Duration::from_secs(20));
        let cancel = CancelToken::new();
        let canceller = cancel.clone();
        let started = std::time::Instant::now();
        let err = run_with_retries::<()>(&policy, &cancel, &mut |_| {}, || {
            canceller.cancel();
            Err(failure("http 503", true, None))
        })
        .unwrap_err();
        assert!(matches!(err, ProviderError::Cancelled));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
