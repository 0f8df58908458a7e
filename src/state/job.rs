//! What the log says about one job.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::attempt::{Attempt, Step};
use crate::protocol::{
    BaselineOrigin, CanaryBaseline, CheckResult, FailureKind, Inventory, ManifestSnapshot, Outcome,
    Price, Record, Resources, TwinBaseline,
};

/// Lifecycle state of a job: `queued -> running -> succeeded | failed | cancelled`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
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
        self.into()
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

/// An attempt that started and has not been recorded as finished or interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenAttempt {
    pub attempt: u32,
    /// The runner's process id, for humans; liveness is decided by the lease.
    pub pid: u32,
}

/// The replayed state of one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: String,
    pub family: String,
    /// The manifest snapshot (absent for bare lifecycle tasks).
    pub manifest: Option<Arc<ManifestSnapshot>>,
    pub manifest_hash: Option<String>,
    /// For sweep instances (`<job>@<provider>#<k>`): the manifest id, the
    /// provider name and the repeat index.
    pub base_job: Option<String>,
    /// The provider the job was enqueued for, if it names one.
    pub provider: Option<String>,
    pub repeat: Option<u32>,
    /// What the job's provider charges (`[price]` of its manifest), if set.
    pub price: Option<Price>,
    /// Where the job is: its state, attempts, restarts.
    pub lifecycle: Lifecycle,
    /// The baseline, once recorded (it is run once per job).
    pub baseline: Option<Baseline>,
    /// Why the job's `[setup]` failed, when it did.
    pub setup_cause: Option<String>,
    /// The shared caches its setup events named (`DATA/cache/<key>/`).
    pub caches: std::collections::BTreeSet<String>,
    /// The attempts under the current manifest, in order.
    pub attempts: Vec<Attempt>,
    /// The attempts of earlier manifests (before a `replaced`), kept as
    /// history.
    pub earlier_attempts: Vec<Attempt>,
    /// Set while the provider is being retried (an outage waited out).
    pub waiting: Option<Waiting>,
    /// USD spent on provider calls so far, every attempt and every billed
    /// call (an unusable reply too); 0 without a price.
    pub cost_usd: f64,
    /// What the provider calls and commands of every run under the current
    /// manifest used (a run cut short by a fault too).
    pub usage: Usage,
    /// When the first attempt started and when the last one ended.
    pub first_started_ms: Option<u64>,
    pub ended_ms: Option<u64>,
    /// Type of the last event recorded for this job.
    #[serde(deserialize_with = "event_tag")]
    pub last_event: Cow<'static, str>,
    /// That event, with its frame (not the job id), for the words of what
    /// the job did last.
    pub last: Option<Box<Record>>,
    /// `seq` of the last event recorded for this job.
    pub last_seq: u64,
    pub enqueued_ms: u64,
    pub updated_ms: u64,
}

/// Where a job is in its lifecycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lifecycle {
    pub state: JobState,
    /// Why the most recent attempt failed, if it did (`interrupted` while
    /// the job waits to start over).
    pub failure_kind: Option<FailureKind>,
    /// Outcome of the most recent finished attempt.
    pub last_outcome: Option<Outcome>,
    pub max_attempts: u32,
    /// The number of the last attempt started, interrupted ones included
    /// (attempt numbers go on across a replaced manifest).
    pub attempts_started: u32,
    /// Attempts numbered before the current manifest (`replaced`): the
    /// current manifest's first attempt is `attempt_base + 1`.
    pub attempt_base: u32,
    /// The attempt currently holding (or supposed to hold) a lease.
    pub open: Option<OpenAttempt>,
    /// An interrupted attempt whose agent phase had finished: the next claim
    /// resumes it (same attempt number) at acceptance instead of starting over.
    pub resume: Option<u32>,
    /// Restarts after faults of the infrastructure so far, and the most
    /// allowed (`[limits] max_restarts`) before the job ends `infra_error`.
    pub restarts: u32,
    pub max_restarts: u32,
    /// The last fault of the infrastructure, in one line.
    pub infra_cause: Option<String>,
    /// How far the job had got when the last fault happened: a fault after
    /// new progress starts the count again (only a fault that repeats in
    /// the same phase runs into `max_restarts`).
    pub fault_mark: Option<Progress>,
}

/// What provider calls and commands used, summed (saturating).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub provider_calls: u32,
    /// Of them, the replies refused as invalid.
    pub invalid_decisions: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Sum of provider call latencies, in milliseconds: model time.
    pub latency_ms: u64,
    pub time: TimeSpent,
    /// What the commands cost the machine: their CPU time summed, the
    /// highest memory and task peak of any one of them.
    pub resources: Resources,
}

/// Where time went besides the model, in milliseconds: `run_tool`
/// commands, verify commands, the job's trusted `[setup]` commands, the
/// baseline and acceptance checks, and waits before provider retries
/// (rate limits, outages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeSpent {
    #[serde(default)]
    pub tool_ms: u64,
    #[serde(default)]
    pub verify_ms: u64,
    /// `[setup]` commands (0 when the job cache was reused).
    #[serde(default)]
    pub setup_ms: u64,
    /// Baseline and acceptance commands.
    #[serde(default)]
    pub acceptance_ms: u64,
    #[serde(default)]
    pub wait_ms: u64,
}

impl TimeSpent {
    /// Adds `other` (saturating).
    pub fn add(&mut self, other: &TimeSpent) {
        self.tool_ms = self.tool_ms.saturating_add(other.tool_ms);
        self.verify_ms = self.verify_ms.saturating_add(other.verify_ms);
        self.setup_ms = self.setup_ms.saturating_add(other.setup_ms);
        self.acceptance_ms = self.acceptance_ms.saturating_add(other.acceptance_ms);
        self.wait_ms = self.wait_ms.saturating_add(other.wait_ms);
    }
}

/// How far a job got: the baseline recorded, and how far its attempt got.
pub type Progress = (bool, Step);

/// What the baseline recorded: its verdict, the test inventory (per-test
/// results only), and why it is unusable or a note about it; what
/// determined it (its key) and where its commands ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub result: CheckResult,
    pub inventory: Option<Inventory>,
    pub reason: Option<String>,
    /// Inventory tests killed at their timeout on the pristine source.
    pub timed_out: Vec<String>,
    /// Whether canaries run for the job, as the baseline decided.
    pub canary: Option<CanaryBaseline>,
    /// Whether twins run for the job and which tests get none.
    #[serde(default)]
    pub twins: Option<TwinBaseline>,
    /// The baseline key (absent for a skipped baseline and in older logs).
    pub key: Option<String>,
    /// The instance and attempt whose commands produced the verdict: this
    /// job's own, or the one it was reused from.
    pub origin: BaselineOrigin,
    /// Reused from another baseline with the same key (nothing ran).
    pub reused: bool,
}

impl Baseline {
    /// Whether a later baseline with the same key may take this verdict
    /// instead of running: a verdict on the pristine source (it fails, or
    /// it already passes). A broken harness (`error`) is a fault of the
    /// machine a fresh run may not share, and a skipped baseline ran
    /// nothing.
    pub fn reusable(&self) -> bool {
        self.key.is_some() && matches!(self.result, CheckResult::Failed | CheckResult::Passed)
    }
}

/// A provider call that is being retried: the job waits for its provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// Why the last request failed ("connection refused", "http 503").
    pub reason: String,
    /// Retries so far in this wait.
    pub retries: u32,
    /// When the wait began (the first retry's record).
    pub since_ms: u64,
}

impl Job {
    /// The current or last attempt under the current manifest.
    pub fn attempt(&self) -> Option<&Attempt> {
        self.attempts.last()
    }

    /// Attempt `number` under the current manifest.
    pub fn attempt_numbered(&self, number: u32) -> Option<&Attempt> {
        self.attempts.iter().rev().find(|a| a.number == number)
    }

    /// How far the job got.
    pub fn progress(&self) -> Progress {
        (
            self.baseline.is_some(),
            self.attempt().map_or(Step::Agent, |a| a.phase.step()),
        )
    }

    /// Steps of every attempt, as the reports count them.
    pub fn total_steps(&self) -> u32 {
        self.attempts
            .iter()
            .fold(0u32, |sum, a| sum.saturating_add(a.steps))
    }

    /// The highest attempt number started since the manifest was set.
    pub fn last_attempt(&self) -> u32 {
        self.attempt()
            .map_or(self.lifecycle.attempt_base, |a| a.number)
    }

    /// Attempts started under the current manifest.
    pub fn attempts_used(&self) -> u32 {
        self.lifecycle
            .attempts_started
            .saturating_sub(self.lifecycle.attempt_base)
    }

    /// The highest attempt number the log holds for the job.
    pub fn highest_attempt(&self) -> u32 {
        self.last_attempt().max(self.lifecycle.attempts_started)
    }

    /// The last patch recorded under the current manifest, and its
    /// attempt's number.
    pub fn last_patch(&self) -> Option<(u32, &super::attempt::Patch)> {
        self.attempts
            .iter()
            .rev()
            .find_map(|a| a.patch.as_ref().map(|p| (a.number, p)))
    }

    /// Whether `retry` may requeue the job.
    pub fn attempts_remain(&self) -> bool {
        self.attempts_used() < self.lifecycle.max_attempts
    }
}

/// An event's `type` tag read back (a job's or a summary's `last_event`):
/// the `'static` tag itself when it is one, so a checkpoint of many jobs
/// is read without a copy of each job's tag.
pub(super) fn event_tag<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Cow<'static, str>, D::Error> {
    struct Tag;
    impl serde::de::Visitor<'_> for Tag {
        type Value = Cow<'static, str>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an event type")
        }

        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
            Ok(crate::protocol::Event::known_type_name(name)
                .map_or_else(|| Cow::Owned(name.to_string()), Cow::Borrowed))
        }
    }
    deserializer.deserialize_str(Tag)
}
