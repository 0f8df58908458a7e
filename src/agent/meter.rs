//! The model-call seam: the limits and charges of one model call,
//! whoever makes it (the runtime's loop today, the model bridge an
//! agent's requests pass through tomorrow). Before a call: the attempt's
//! wall time and cancel, its steps, its tokens and the batch's spending
//! cap. During it: each retry recorded as its wait begins, so an outage
//! is on record while it lasts. After it: the batch's budget charged
//! (a billed reply that cannot be used too) and the call recorded as a
//! `model_call` event (or `provider_failed`), which is what the state
//! counts steps, tokens and cost by.

use std::time::Instant;

use super::agent_loop::{AgentError, AgentResult, LoopLimits, Recorder, Step, Used, failed};
use super::budget::Budget;
use super::hands::record;
use crate::cancel::CancelToken;
use crate::hash::short_hash;
use crate::protocol::{CallFigures, Event, FailureKind, Price};
use crate::protocol::{ModelCallRecord, ProviderFailedRecord, ProviderRetryRecord};
use crate::provider::{Provider, ProviderError, ProviderReply, ProviderRequest, ProviderRetry};

/// The limits and charges of an attempt's model calls.
pub(crate) struct Meter<'a> {
    pub(crate) limits: &'a LoopLimits,
    /// The batch's spending cap and this job's price, under `--max-cost`.
    pub(crate) budget: Option<(&'a Budget, Price)>,
    pub(crate) cancel: &'a CancelToken,
}

impl Meter<'_> {
    /// Whether another model call may start after what the attempt has
    /// `used`: `Err` with how the attempt ends when it may not. A step
    /// limit reached after a failed verify is the model's `verify_failed`.
    pub(crate) fn admit(&self, used: Used, last_verify_failed: bool) -> Result<(), AgentResult> {
        if Instant::now() >= self.limits.deadline {
            return Err(failed(FailureKind::WallTimeout, used.steps));
        }
        if self.cancel.is_cancelled() {
            return Err(failed(FailureKind::Cancelled, used.steps));
        }
        if used.steps >= self.limits.max_steps {
            let kind = if last_verify_failed {
                FailureKind::VerifyFailed
            } else {
                FailureKind::StepLimit
            };
            return Err(failed(kind, used.steps));
        }
        // Counts are checked per reply by the provider; the state's sum
        // saturates all the same, so the budget trips instead of wrapping.
        if used.tokens >= self.limits.token_budget {
            return Err(failed(FailureKind::TokenBudget, used.steps));
        }
        if self.budget.is_some_and(|(budget, _)| budget.exhausted()) {
            // No new model call once the batch's cap is reached.
            return Err(failed(FailureKind::BudgetExceeded, used.steps));
        }
        Ok(())
    }

    /// Asks `provider` for the reply of `step`, recording each retry as
    /// its wait begins, then charges the call ([`Meter::charge`]). [`Step::End`]:
    /// how the attempt ends (a cancel, a provider that failed).
    pub(crate) fn ask(
        &self,
        recorder: &mut dyn Recorder,
        provider: &mut dyn Provider,
        request: &ProviderRequest,
        step: u32,
        last_verify_failed: bool,
    ) -> Result<Step<ProviderReply>, AgentError> {
        let mut live = 0usize;
        let mut live_error = None;
        let result = {
            let mut watch = |r: &ProviderRetry| {
                live += 1;
                if live_error.is_none() {
                    live_error = recorder.record(retry_event(step, r)).err();
                }
            };
            provider.complete_watched(request, self.cancel, &mut watch)
        };
        if let Some(e) = live_error {
            return Err(AgentError::Record(e));
        }
        self.charge(recorder, step, &result, live)?;
        Ok(match result {
            Ok(reply) => Step::Next(reply),
            Err(e) => Step::End(self.failed_call(&e, step, last_verify_failed)),
        })
    }

    /// How a model call that failed with `e` ends the attempt. Precedence:
    /// a cancel is the attempt's; an unreachable provider is the machine's
    /// fault; a verify that failed before the provider ran out is the
    /// model's; otherwise the provider's.
    fn failed_call(&self, e: &ProviderError, step: u32, last_verify_failed: bool) -> AgentResult {
        match e {
            ProviderError::Cancelled => self.ended(step),
            e if e.is_retryable() => AgentResult {
                infra: Some(e.to_string()),
                ..failed(FailureKind::ProviderError, step)
            },
            _ if last_verify_failed => failed(FailureKind::VerifyFailed, step),
            _ => failed(FailureKind::ProviderError, step),
        }
    }

    /// Asks `provider` to answer an agent's model call at `step` (a step
    /// when `turn.side` is false), then charges it like any call.
    pub(crate) fn converse(
        &self,
        recorder: &mut dyn Recorder,
        provider: &mut dyn Provider,
        conversation: &crate::protocol::Conversation,
        turn: crate::provider::ConverseTurn,
        step: u32,
        last_verify_failed: bool,
    ) -> Result<Step<crate::protocol::Reply>, AgentError> {
        let result = provider.converse(conversation, turn, self.cancel);
        let (billed, reply) = match result {
            Ok(conversed) => (Ok(conversed.billed), Some(conversed.reply)),
            Err(e) => (Err(e), None),
        };
        self.charge(recorder, step, &billed, 0)?;
        Ok(match (billed, reply) {
            (Ok(_), Some(reply)) => Step::Next(reply),
            (Err(e), _) => Step::End(self.failed_call(&e, step, last_verify_failed)),
            (Ok(_), None) => Step::End(failed(FailureKind::ProviderError, step)),
        })
    }

    /// Charges a finished call of `step`: the batch's budget, the retries
    /// not recorded yet (the first `recorded` were, as they happened), and
    /// the `model_call` (or `provider_failed`) event.
    pub(crate) fn charge(
        &self,
        recorder: &mut dyn Recorder,
        step: u32,
        result: &Result<ProviderReply, ProviderError>,
        recorded: usize,
    ) -> Result<(), AgentError> {
        if let Some((budget, price)) = self.budget {
            let (input, cached, output) = match result {
                Ok(reply) => (
                    reply.input_tokens,
                    reply.cached_input_tokens,
                    reply.output_tokens,
                ),
                Err(e) => e.billed().map_or((0, 0, 0), |(i, o)| (i, 0, o)),
            };
            budget.charge(&price, input, cached, output);
        }
        if matches!(result, Err(ProviderError::Cancelled)) {
            // The call was given up: nothing came of it to record.
            return Ok(());
        }
        let retries = match result {
            Ok(reply) => reply.retries.as_slice(),
            Err(e) => e.retries(),
        };
        for r in retries.get(recorded..).unwrap_or_default() {
            record(recorder, retry_event(step, r))?;
        }
        match result {
            Ok(reply) => record(
                recorder,
                Event::ModelCall(ModelCallRecord {
                    step,
                    call: figures(reply),
                    retries: u32::try_from(reply.retries.len()).unwrap_or(u32::MAX),
                }),
            ),
            Err(e) => record(
                recorder,
                Event::ProviderFailed(ProviderFailedRecord {
                    step,
                    message: e.to_string(),
                    input_tokens: e.billed().map_or(0, |b| b.0),
                    output_tokens: e.billed().map_or(0, |b| b.1),
                }),
            ),
        }
    }

    /// How a call cut short by a cancel ends the attempt.
    fn ended(&self, step: u32) -> AgentResult {
        if Instant::now() >= self.limits.deadline {
            return failed(FailureKind::WallTimeout, step);
        }
        failed(FailureKind::Cancelled, step)
    }
}

/// A reply's figures as the log records them (sizes and a hash, never the
/// text).
pub(super) fn figures(reply: &ProviderReply) -> CallFigures {
    CallFigures {
        reply_bytes: reply.text.len() as u64,
        reply_hash: short_hash(reply.text.as_bytes()),
        input_tokens: reply.input_tokens,
        cached_input_tokens: reply.cached_input_tokens,
        output_tokens: reply.output_tokens,
        latency_ms: u64::try_from(reply.latency.as_millis()).unwrap_or(u64::MAX),
    }
}

fn retry_event(step: u32, r: &ProviderRetry) -> Event {
    Event::ProviderRetry(ProviderRetryRecord {
        step,
        retry: r.attempt,
        reason: r.reason.clone(),
        wait_ms: r.wait_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_steps: u32, token_budget: u64) -> LoopLimits {
        LoopLimits {
            max_steps,
            max_invalid: 3,
            token_budget,
            observation_cap: 1024,
            context_budget: 1 << 20,
            deadline: Instant::now() + std::time::Duration::from_secs(60),
        }
    }

    #[test]
    fn a_call_is_admitted_within_the_limits_only() {
        let cancel = CancelToken::new();
        let limits = limits(3, 100);
        let meter = Meter {
            limits: &limits,
            budget: None,
            cancel: &cancel,
        };
        let used = |steps, tokens| Used { steps, tokens };
        assert!(meter.admit(used(2, 99), false).is_ok());
        let end = meter.admit(used(3, 0), false).unwrap_err();
        assert_eq!(end.failure_kind, Some(FailureKind::StepLimit));
        let end = meter.admit(used(3, 0), true).unwrap_err();
        assert_eq!(end.failure_kind, Some(FailureKind::VerifyFailed));
        let end = meter.admit(used(1, 100), false).unwrap_err();
        assert_eq!(end.failure_kind, Some(FailureKind::TokenBudget));
        cancel.cancel();
        let end = meter.admit(used(0, 0), false).unwrap_err();
        assert_eq!(end.failure_kind, Some(FailureKind::Cancelled));
    }
}
