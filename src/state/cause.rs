//! Why a failed job failed, in one line: the reason of its final verdict.

use super::attempt::Attempt;
use super::job::{Job, JobState};
use crate::protocol::units::format_duration;
use crate::protocol::{FailureKind, Limits, ManifestSnapshot};

impl Job {
    /// What a failed job's failure is blamed on: the reason of its final
    /// verdict. The failing or missing tests of `tests_failed` and
    /// `tests_missing`, the failed verify of `verify_failed`, the limit a
    /// `step_limit`, `wall_timeout` or `token_budget` job hit, the refusal
    /// that ended `invalid_decisions`, the provider's error, the rejected
    /// patch, the failed setup, the fault of `infra_error`. Earlier
    /// refusals the model recovered from stay in the trajectory but are
    /// never the cause of a later verdict. Else the last reason recorded.
    /// `None` unless the job failed.
    pub fn failure_cause(&self) -> Option<String> {
        if self.lifecycle.state != JobState::Failed {
            return None;
        }
        let attempt = self.attempt();
        let causes =
            |cause: fn(&Attempt) -> &Option<String>| attempt.and_then(|a| cause(a).clone());
        let limits = self
            .manifest
            .as_deref()
            .and_then(ManifestSnapshot::manifest)
            .map(|m| &m.limits);
        let limit = |value: fn(&Limits) -> String| limits.map_or_else(|| "?".to_string(), value);
        let reason = match self.lifecycle.failure_kind {
            Some(FailureKind::VerifyFailed) => causes(|a| &a.causes.verify),
            Some(FailureKind::TestsFailed | FailureKind::TestsMissing) => self.acceptance_cause(),
            Some(FailureKind::AcceptanceFailed) => self.acceptance_cause().or_else(|| {
                Some("the acceptance command failed (judged by its exit status)".into())
            }),
            Some(FailureKind::InvalidDecisions) => causes(|a| &a.causes.refusal).map(|r| {
                format!(
                    "{} invalid decisions in a row; the last: {r}",
                    limit(|l| l.max_invalid.to_string())
                )
            }),
            Some(FailureKind::ProviderError) => causes(|a| &a.causes.provider),
            Some(FailureKind::PatchRejected) => causes(|a| &a.causes.patch),
            Some(FailureKind::SetupFailed) => self.setup_cause.clone(),
            Some(FailureKind::InfraError) => self.lifecycle.infra_cause.clone(),
            Some(FailureKind::InvalidBaseline) => self
                .baseline
                .as_ref()
                .and_then(|b| b.reason.clone())
                .or_else(|| Some("the pristine source already passes the acceptance tests".into())),
            Some(FailureKind::StepLimit) => Some(format!(
                "used all {} steps (limits.max_steps) without finishing",
                limit(|l| l.max_steps.to_string())
            )),
            Some(FailureKind::WallTimeout) => Some(format!(
                "the attempt ran out of its wall time ({}, limits.wall_time)",
                limit(|l| format_duration(l.wall_time))
            )),
            Some(FailureKind::TokenBudget) => Some(format!(
                "{} tokens used, the budget is {} (limits.token_budget)",
                attempt.map_or(0, |a| a.tokens),
                limit(|l| l.token_budget.to_string())
            )),
            Some(FailureKind::BudgetExceeded) => {
                Some("the batch's cost cap (--max-cost) was reached".into())
            }
            Some(FailureKind::NoEdit) => Some("the model finished without changing a file".into()),
            Some(FailureKind::Tampered) => attempt.and_then(tamper_cause),
            Some(FailureKind::AgentError) => causes(|a| &a.causes.agent)
                .or_else(|| Some("the agent crashed before finish".into())),
            Some(FailureKind::NoFinish) => causes(|a| &a.causes.agent)
                .or_else(|| Some("the agent exited without finish".into())),
            _ => None,
        };
        reason
            .or_else(|| causes(|a| &a.causes.last))
            .or_else(|| self.acceptance_cause())
    }

    /// The acceptance run's verdict in one line: which tests failed or were
    /// not reported (the first few, then how many more).
    fn acceptance_cause(&self) -> Option<String> {
        let attempt = self.attempt()?;
        if let Some(cause) = &attempt.causes.acceptance {
            // The tests did not build or collect: that, not the tests
            // it left unreported, is why.
            return Some(cause.clone());
        }
        let (_, verdict) = attempt.phase.judged()?;
        let verdict = verdict?;
        let names = |what: &str, tests: &[String]| {
            let shown: Vec<&str> = tests.iter().take(3).map(String::as_str).collect();
            let more = tests.len().saturating_sub(shown.len());
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{what}: {}{tail}", shown.join(", "))
        };
        let mut parts = Vec::new();
        if !verdict.failing.is_empty() {
            parts.push(names("failing", &verdict.failing));
        }
        if !verdict.missing.is_empty() {
            parts.push(names("not reported", &verdict.missing));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Why a `tampered` attempt is: the canary evidence, else (under
/// `--strict-integrity`) its signals.
fn tamper_cause(attempt: &Attempt) -> Option<String> {
    let more = |n: usize| match n {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let record = &attempt.integrity;
    if let Some(first) = record.forged.first() {
        return Some(format!(
            "forged results: {first}{}",
            more(record.forged.len().saturating_sub(1))
        ));
    }
    let first = record.signals.first()?;
    Some(format!(
        "tamper signal (strict integrity): {}{}",
        first.line(),
        more(
            usize::try_from(record.signal_count)
                .unwrap_or(usize::MAX)
                .saturating_sub(1)
        )
    ))
}
