//! The event vocabulary: everything that can happen to a job, one variant per
//! event `type` in the log.

use serde::{Deserialize, Serialize};

/// One thing that happened. Serialized flat into the record, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A job entered the queue.
    Enqueued {
        /// Attempts allowed in total (first run plus retries).
        max_attempts: u32,
    },
    /// A runner claimed the job and took the attempt's lease.
    AttemptStarted {
        /// Process id of the runner holding the lease.
        pid: u32,
    },
    /// The runner finished the attempt.
    AttemptFinished {
        outcome: Outcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure_kind: Option<FailureKind>,
    },
    /// A later writer found the attempt running without a live lease.
    AttemptInterrupted {
        /// Process id recorded when the attempt started.
        pid: u32,
    },
    /// A durable cancel of a queued or running job.
    Cancelled {},
    /// A failed job was put back in the queue.
    Retried {},
    /// A writer cut a torn (unterminated) tail off the log before appending.
    LogRepaired {
        /// 1-based line number the torn fragment started on.
        line: u64,
        /// Bytes removed.
        dropped_bytes: u64,
    },
}

impl Event {
    /// The `type` tag as written in the log.
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::Enqueued { .. } => "enqueued",
            Event::AttemptStarted { .. } => "attempt_started",
            Event::AttemptFinished { .. } => "attempt_finished",
            Event::AttemptInterrupted { .. } => "attempt_interrupted",
            Event::Cancelled {} => "cancelled",
            Event::Retried {} => "retried",
            Event::LogRepaired { .. } => "log_repaired",
        }
    }

    /// Whether the event changes a job's lifecycle state. Writers `fsync`
    /// immediately after such events; others are synced in groups.
    pub fn is_transition(&self) -> bool {
        !matches!(self, Event::LogRepaired { .. })
    }
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    Failed,
}

/// Why an attempt or job failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    StepLimit,
    WallTimeout,
    TokenBudget,
    InvalidDecisions,
    ProviderError,
    NoEdit,
    VerifyFailed,
    Cancelled,
    Interrupted,
    InvalidBaseline,
    AcceptanceFailed,
    SandboxUnavailable,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::StepLimit => "step_limit",
            FailureKind::WallTimeout => "wall_timeout",
            FailureKind::TokenBudget => "token_budget",
            FailureKind::InvalidDecisions => "invalid_decisions",
            FailureKind::ProviderError => "provider_error",
            FailureKind::NoEdit => "no_edit",
            FailureKind::VerifyFailed => "verify_failed",
            FailureKind::Cancelled => "cancelled",
            FailureKind::Interrupted => "interrupted",
            FailureKind::InvalidBaseline => "invalid_baseline",
            FailureKind::AcceptanceFailed => "acceptance_failed",
            FailureKind::SandboxUnavailable => "sandbox_unavailable",
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
