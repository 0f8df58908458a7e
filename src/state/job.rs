//! What the log says about one job.

use std::sync::Arc;

use serde::Serialize;

use crate::log::{CheckResult, FailureKind, Outcome};
use crate::verdict::{Inventory, Verdict};

/// Lifecycle state of a job: `queued -> running -> succeeded | failed | cancelled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    /// The state as the end of a sentence about the job: "it is queued",
    /// "it has succeeded".
    pub fn phrase(self) -> &'static str {
        match self {
            JobState::Queued => "is queued",
            JobState::Running => "is running",
            JobState::Succeeded => "has already succeeded",
            JobState::Failed => "has failed",
            JobState::Cancelled => "was cancelled",
        }
    }

    /// Whether the job will not change again without a user command.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Cancelled
        )
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An attempt that started and has not been recorded as finished or interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OpenAttempt {
    pub attempt: u32,
    /// The runner's process id, for humans; liveness is decided by the lease.
    pub pid: u32,
}

/// How the agent phase of an attempt ended (recorded by `agent_finished`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AgentPhase {
    pub attempt: u32,
    pub outcome: Outcome,
    pub failure_kind: Option<FailureKind>,
}

/// The replayed state of one job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub id: String,
    pub family: String,
    pub state: JobState,
    /// The manifest snapshot (absent for bare lifecycle tasks).
    #[serde(skip)]
    pub manifest: Option<Arc<serde_json::Value>>,
    pub manifest_hash: Option<String>,
    pub max_attempts: u32,
    /// The number of the last attempt started, interrupted ones included
    /// (attempt numbers go on across a replaced manifest).
    pub attempts_started: u32,
    /// Attempts numbered before the current manifest (`replaced`): the
    /// current manifest's first attempt is `attempt_base + 1`.
    pub attempt_base: u32,
    /// The attempt currently holding (or supposed to hold) a lease.
    pub open_attempt: Option<OpenAttempt>,
    /// Why the most recent attempt failed, if it did.
    pub failure_kind: Option<FailureKind>,
    /// Outcome of the most recent finished attempt.
    pub last_outcome: Option<Outcome>,
    /// Steps (provider calls) of the current or last attempt; a failed
    /// provider call is a step too.
    pub steps: u32,
    /// Steps of the attempts before it (a run of an attempt cut short by a
    /// fault and started over is not counted).
    pub steps_before: u32,
    /// The highest attempt number started since the manifest was set.
    pub last_attempt: u32,
    /// Invalid decisions in the current or last attempt.
    pub invalid_decisions: u32,
    /// Kind of the last decision, if any.
    pub last_action: Option<String>,
    /// Restarts after faults of the infrastructure so far, and the most
    /// allowed (`[limits] max_restarts`) before the job ends `infra_error`.
    pub restarts: u32,
    pub max_restarts: u32,
    /// The last fault of the infrastructure, in one line.
    pub infra_cause: Option<String>,
    /// The phases done when the last fault happened: a fault after new
    /// progress starts the count again (only a fault that repeats in the
    /// same phase runs into `max_restarts`).
    pub fault_mark: Option<PhaseMark>,
    /// The baseline verdict, once recorded (it is run once per job).
    pub baseline: Option<CheckResult>,
    /// The test inventory the baseline recorded (per-test results only).
    pub inventory: Option<Inventory>,
    /// Why the baseline is unusable, or a note about it, when it says.
    pub baseline_reason: Option<String>,
    /// The agent phase of the current or last attempt, once finished.
    pub agent: Option<AgentPhase>,
    /// Whether the current or last attempt recorded its patch.
    pub patch_recorded: bool,
    /// The SHA-256 of that patch's `files.json` (the runner's copy of the
    /// changed files), when its `patch` event names one.
    pub patch_files_hash: Option<String>,
    /// Whether the current or last attempt recorded `patch_rejected`.
    pub patch_rejected: bool,
    /// Acceptance verdict of the current or last attempt.
    pub acceptance: Option<CheckResult>,
    /// Its per-test verdict, when read per test.
    pub verdict: Option<Verdict>,
    /// An interrupted attempt whose agent phase had finished: the next claim
    /// resumes it (same attempt number) at acceptance instead of starting over.
    pub resume: Option<u32>,
    /// The last reason the current or last attempt recorded, in one line:
    /// a refusal, a provider error, a rejected patch, a fault. Only the
    /// fallback of [`Job::failure_cause`], which prefers the reason of the
    /// final verdict.
    pub cause: Option<String>,
    /// The cause of the last failed verify of the current or last attempt.
    pub verify_cause: Option<String>,
    /// The last refused decision of the current or last attempt
    /// (`refused: ...`); a refusal the model recovered from stays here but
    /// is not the cause of a later verdict.
    pub refusal: Option<String>,
    /// The last failed provider call of the current or last attempt.
    pub provider_cause: Option<String>,
    /// Why the current or last attempt's patch was rejected.
    pub patch_cause: Option<String>,
    /// Why the job's `[setup]` failed, when it did.
    pub setup_cause: Option<String>,
    /// The job caches its setup events named (`DATA/cache/<key>/`).
    pub caches: std::collections::BTreeSet<String>,
    /// Tokens of the current or last run of the agent phase (saturating).
    pub attempt_tokens: u64,
    /// The provider the job was enqueued for, if it names one.
    pub provider: Option<String>,
    /// Set while the provider is being retried (an outage waited out).
    pub waiting: Option<Waiting>,
    /// What the job's provider charges (`[price]` of its manifest), if set.
    pub price: Option<crate::manifest::Price>,
    /// USD spent on provider calls so far, every attempt and every billed
    /// call (an unusable reply too); 0 without a price.
    pub cost_usd: f64,
    /// When the first attempt started and when the last one ended.
    pub first_started_ms: Option<u64>,
    pub ended_ms: Option<u64>,
    /// Type of the last event recorded for this job.
    pub last_event: &'static str,
    /// `seq` of the last event recorded for this job.
    pub last_seq: u64,
    pub enqueued_ms: u64,
    pub updated_ms: u64,
}

/// A provider call that is being retried: the job waits for its provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Waiting {
    /// Why the last request failed ("connection refused", "http 503").
    pub reason: String,
    /// Retries so far in this wait.
    pub retries: u32,
    /// When the wait began (the first retry's record).
    pub since_ms: u64,
}

/// Which phases of a job are done: baseline, agent phase, patch, acceptance.
pub type PhaseMark = (bool, bool, bool, bool);

impl Job {
    /// The phases done so far.
    pub fn phase_mark(&self) -> PhaseMark {
        (
            self.baseline.is_some(),
            self.agent.is_some(),
            self.patch_recorded || self.patch_rejected,
            self.acceptance.is_some(),
        )
    }

    /// Steps of every attempt, as the reports count them.
    pub fn total_steps(&self) -> u32 {
        self.steps_before.saturating_add(self.steps)
    }

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
        if self.state != JobState::Failed {
            return None;
        }
        let limit = |key: &str| -> String {
            let value = self
                .manifest
                .as_deref()
                .map(|m| &m["manifest"]["limits"][key])
                .filter(|v| !v.is_null());
            match value {
                Some(serde_json::Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => "?".to_string(),
            }
        };
        let reason = match self.failure_kind {
            Some(FailureKind::VerifyFailed) => self.verify_cause.clone(),
            Some(FailureKind::TestsFailed | FailureKind::TestsMissing) => self.acceptance_cause(),
            Some(FailureKind::AcceptanceFailed) => self.acceptance_cause().or_else(|| {
                Some("the acceptance command failed (judged by its exit status)".into())
            }),
            Some(FailureKind::InvalidDecisions) => self.refusal.clone().map(|r| {
                format!(
                    "{} invalid decisions in a row; the last: {r}",
                    limit("max_invalid")
                )
            }),
            Some(FailureKind::ProviderError) => self.provider_cause.clone(),
            Some(FailureKind::PatchRejected) => self.patch_cause.clone(),
            Some(FailureKind::SetupFailed) => self.setup_cause.clone(),
            Some(FailureKind::InfraError) => self.infra_cause.clone(),
            Some(FailureKind::InvalidBaseline) => self
                .baseline_reason
                .clone()
                .or_else(|| Some("the pristine source already passes the acceptance tests".into())),
            Some(FailureKind::StepLimit) => Some(format!(
                "used all {} steps (limits.max_steps) without finishing",
                limit("max_steps")
            )),
            Some(FailureKind::WallTimeout) => Some(format!(
                "the attempt ran out of its wall time ({}, limits.wall_time)",
                limit("wall_time")
            )),
            Some(FailureKind::TokenBudget) => Some(format!(
                "{} tokens used, the budget is {} (limits.token_budget)",
                self.attempt_tokens,
                limit("token_budget")
            )),
            Some(FailureKind::BudgetExceeded) => {
                Some("the batch's cost cap (--max-cost) was reached".into())
            }
            Some(FailureKind::NoEdit) => Some("the model finished without changing a file".into()),
            _ => None,
        };
        reason
            .or_else(|| self.cause.clone())
            .or_else(|| self.acceptance_cause())
    }

    /// The acceptance run's verdict in one line: which tests failed or were
    /// not reported (the first few, then how many more).
    fn acceptance_cause(&self) -> Option<String> {
        let verdict = self.verdict.as_ref()?;
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

    /// Attempts started under the current manifest.
    pub fn attempts_used(&self) -> u32 {
        self.attempts_started.saturating_sub(self.attempt_base)
    }

    /// The highest attempt number the log holds for the job.
    pub fn highest_attempt(&self) -> u32 {
        self.last_attempt.max(self.attempts_started)
    }

    /// Whether `retry` may requeue the job.
    pub fn attempts_remain(&self) -> bool {
        self.attempts_used() < self.max_attempts
    }
}
