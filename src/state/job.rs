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
    /// Attempts started so far, including interrupted ones.
    pub attempts_started: u32,
    /// The attempt currently holding (or supposed to hold) a lease.
    pub open_attempt: Option<OpenAttempt>,
    /// Why the most recent attempt failed, if it did.
    pub failure_kind: Option<FailureKind>,
    /// Outcome of the most recent finished attempt.
    pub last_outcome: Option<Outcome>,
    /// Steps (provider calls) of the current or last attempt.
    pub steps: u32,
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
    /// The agent phase of the current or last attempt, once finished.
    pub agent: Option<AgentPhase>,
    /// Whether the current or last attempt recorded its patch.
    pub patch_recorded: bool,
    /// Whether the current or last attempt recorded `patch_rejected`.
    pub patch_rejected: bool,
    /// Acceptance verdict of the current or last attempt.
    pub acceptance: Option<CheckResult>,
    /// Its per-test verdict, when read per test.
    pub verdict: Option<Verdict>,
    /// An interrupted attempt whose agent phase had finished: the next claim
    /// resumes it (same attempt number) at acceptance instead of starting over.
    pub resume: Option<u32>,
    /// Type of the last event recorded for this job.
    pub last_event: &'static str,
    /// `seq` of the last event recorded for this job.
    pub last_seq: u64,
    pub enqueued_ms: u64,
    pub updated_ms: u64,
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

    /// Whether `retry` may requeue the job.
    pub fn attempts_remain(&self) -> bool {
        self.attempts_started < self.max_attempts
    }
}
