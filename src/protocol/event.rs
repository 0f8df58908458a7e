//! The event vocabulary: everything that can happen to a job, one variant per
//! event `type` in the log.

use serde::{Deserialize, Serialize};

use super::records::{
    AcceptanceRecord, AgentFinishedRecord, AttemptFinishedRecord, AttemptInterruptedRecord,
    AttemptStartedRecord, BaselineRecord, CommandRecord, DecisionRecord, EditRecord,
    EnqueuedRecord, LogRepairedRecord, ModelCallRecord, PatchRecord, PatchRejectedRecord,
    ProviderFailedRecord, ProviderRetryRecord, ReplacedRecord, SetupRecord, VerifyRecord,
};

/// One thing that happened. Serialized flat into the record, tagged by `type`.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames,
)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Event {
    /// A job entered the queue.
    Enqueued(EnqueuedRecord),
    /// `--replace` (a new manifest for an existing, not running job) or
    /// `batch --rerun` (the same one again): the job is queued again with
    /// its attempts reset.
    Replaced(ReplacedRecord),
    /// A runner claimed the job and took the attempt's lease.
    AttemptStarted(AttemptStartedRecord),
    /// The runner finished the attempt.
    AttemptFinished(AttemptFinishedRecord),
    /// The attempt stopped before finishing: a later writer found it running
    /// without a live lease (a crash), or its own runner was interrupted
    /// (Ctrl-C), which it says with `by_runner`.
    AttemptInterrupted(AttemptInterruptedRecord),
    /// A durable cancel of a queued or running job.
    Cancelled {},
    /// A failed job was put back in the queue.
    Retried {},
    /// The job's trusted `[setup]` commands ran (or their cached result was
    /// reused) before the baseline.
    Setup(SetupRecord),
    /// The pristine source was judged by the acceptance command before the agent ran.
    Baseline(BaselineRecord),
    /// One model call of an agent phase and what it cost: what the state
    /// counts steps, tokens and cost by (format 3).
    ModelCall(ModelCallRecord),
    /// A decision: what was asked at `step` and why it was refused, when
    /// it was. Format 2 logs recorded the model call on it too (`call`):
    /// a decision with them is its call as well.
    Decision(DecisionRecord),
    /// A provider call failed transiently and is retried.
    ProviderRetry(ProviderRetryRecord),
    /// A provider call failed for good.
    ProviderFailed(ProviderFailedRecord),
    /// A command ran (never its arguments or output).
    Command(CommandRecord),
    /// A file in the workspace was created or changed.
    Edit(EditRecord),
    /// The verify command's verdict; `trigger` is `decision` or `finish`.
    Verify(VerifyRecord),
    /// The agent phase of the attempt ended; later phases never rerun it.
    AgentFinished(AgentFinishedRecord),
    /// The agent's patch (editable files against the pristine source): the
    /// runner's copy of the changed files (`files/`, `files.json`) and
    /// `patch.diff` were saved.
    Patch(PatchRecord),
    /// The workspace held something a patch cannot carry faithfully (a
    /// FIFO, a new symlink, a file over the cap, a name that is not UTF-8,
    /// an entry turned into a symlink...), or a recorded patch could not be
    /// laid on the clean copy because of what it holds: the attempt fails
    /// `patch_rejected`.
    PatchRejected(PatchRejectedRecord),
    /// Acceptance tests on a clean copy plus the patch.
    Acceptance(AcceptanceRecord),
    /// A writer cut a torn (unterminated) tail off the log before appending.
    LogRepaired(LogRepairedRecord),
}

impl Event {
    /// The `enqueued` event of a bare lifecycle task (no manifest).
    pub fn bare_enqueued(max_attempts: u32) -> Event {
        Event::Enqueued(EnqueuedRecord {
            max_attempts,
            family: None,
            manifest: None,
            manifest_hash: None,
            base_job: None,
            provider: None,
            repeat: None,
        })
    }

    /// The `type` tag as written in the log.
    pub fn type_name(&self) -> &'static str {
        self.into()
    }

    /// `name` as the `'static` tag of the same name, when it is one (so a
    /// tag read back needs no copy of its own).
    pub fn known_type_name(name: &str) -> Option<&'static str> {
        <Event as strum::VariantNames>::VARIANTS
            .iter()
            .find(|known| **known == name)
            .copied()
    }

    /// Whether the event changes a job's lifecycle state. Writers `fsync`
    /// immediately after such events; others are synced in groups.
    pub fn is_transition(&self) -> bool {
        !matches!(
            self,
            Event::LogRepaired(_)
                | Event::ModelCall(_)
                | Event::Decision(_)
                | Event::ProviderRetry(_)
                | Event::Command(_)
                | Event::Edit(_)
                | Event::Verify(_)
        )
    }
}

/// What one model call cost and what came back, as the log keeps it:
/// sizes and a hash of the reply, never its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFigures {
    pub reply_bytes: u64,
    /// SHA-256 of the reply text, first 16 hex digits.
    pub reply_hash: String,
    pub input_tokens: u64,
    /// Of `input_tokens`, those the provider served from its prompt cache
    /// (priced apart).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
}

/// Where a baseline's commands ran: the instance and attempt that
/// recorded it first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineOrigin {
    pub job: String,
    pub attempt: u32,
}

/// A test binary's runs, one process per test, as its `command` event
/// sums them up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRuns {
    /// Tests run, each alone.
    pub runs: u32,
    /// Of them, those that did not pass (failed, timed out, not reported).
    pub failed: u32,
    /// Of them, those killed at their timeout.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub timed_out: u32,
    /// The test that took longest, and how long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest: Option<String>,
    #[serde(default)]
    pub slowest_ms: u64,
}

pub(super) fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// The verdict of a baseline or acceptance run.
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
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum CheckResult {
    Passed,
    Failed,
    /// Not run because the manifest says so (`baseline = "skip"`).
    Skipped,
    /// The test harness could not run or report (baseline only): nothing
    /// was judged, and the job fails `harness_error`.
    Error,
}

impl CheckResult {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How an attempt ended.
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
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Why an attempt or job failed.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
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
    /// The patch phase found workspace content a patch cannot carry.
    PatchRejected,
    /// Acceptance ran every test it had to, and some failed.
    TestsFailed,
    /// Tests of the inventory were not reported at all (the run ended
    /// early, crashed, or never started; the build failed).
    TestsMissing,
    /// The infrastructure failed more than `[limits] max_restarts` times
    /// (the runner died, the provider was unreachable, a runtime I/O error);
    /// not the model's doing.
    InfraError,
    /// The batch's `--max-cost` was reached: the attempt stopped before
    /// its next model call.
    BudgetExceeded,
    /// The job's trusted `[setup]` commands failed: the job cannot run on
    /// this machine (no network, a missing tool); not the model's doing.
    SetupFailed,
    /// The baseline's test harness is broken: the command could not run
    /// its test runner, wrote no results file, or listed no test at all.
    /// Decided before any model call; not the model's doing.
    HarnessError,
    /// The results were forged: a canary (a must-fail test the runner
    /// planted) was reported passed, or went missing from a file whose
    /// other tests were reported; or, under `--strict-integrity`, the
    /// attempt has a tamper signal. The model's doing.
    Tampered,
    /// An external agent crashed mid-run (it exited non-zero or was
    /// killed by a signal before `finish`). The model side's doing.
    AgentError,
    /// An external agent exited on its own without an accepted `finish`.
    NoFinish,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the failure is the infrastructure's (the machine, the
    /// network, the job's own setup), which reports count apart from the
    /// model's failures.
    pub fn is_infrastructure(self) -> bool {
        matches!(
            self,
            FailureKind::InfraError | FailureKind::SetupFailed | FailureKind::HarnessError
        )
    }
}

/// What a command ran for (the `role` of a `command` event).
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
pub enum CommandFor {
    /// A `run_tool` decision.
    Tool,
    Verify,
    Baseline,
    Acceptance,
    /// A trusted `[setup]` command.
    Setup,
}

impl CommandFor {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What made the runtime verify (the `trigger` of a `verify` event).
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
pub enum VerifyTrigger {
    /// A `verify` decision.
    Decision,
    /// A `finish` with open verification debt.
    Finish,
}

/// The `kind` of a `decision` event: what the model asked for, or
/// `invalid` when the reply was refused.
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
pub enum DecisionKind {
    ReadFile,
    ListFiles,
    WriteFile,
    ReplaceText,
    RunTool,
    Verify,
    Finish,
    Invalid,
}

impl DecisionKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What an entry of a job's timeline stands for: a decision of the model
/// (by its kind) or a phase of the runtime. A decision `verify` and the
/// runtime's verify run share the word, as they share the timeline.
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
    strum::EnumString,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    // The decisions, as [`DecisionKind`] names them.
    ReadFile,
    ListFiles,
    WriteFile,
    ReplaceText,
    RunTool,
    Verify,
    Finish,
    Invalid,
    // The runtime's phases and happenings.
    Attempt,
    Interrupted,
    Cancelled,
    Retry,
    Setup,
    Baseline,
    ProviderError,
    Command,
    Edit,
    Agent,
    Patch,
    Acceptance,
    Integrity,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the entry can head a model step (a decision, a refusal, a
    /// provider failure) rather than be something done for one.
    pub fn heads_a_step(self) -> bool {
        !matches!(
            self,
            EntryKind::Command
                | EntryKind::Edit
                | EntryKind::Verify
                | EntryKind::Retry
                | EntryKind::Agent
        )
    }

    /// Whether the entry stands for a decision (one per step).
    pub fn is_decision(self) -> bool {
        matches!(
            self,
            EntryKind::ReadFile
                | EntryKind::ListFiles
                | EntryKind::WriteFile
                | EntryKind::ReplaceText
                | EntryKind::RunTool
                | EntryKind::Verify
                | EntryKind::Finish
                | EntryKind::Invalid
        )
    }
}

impl From<DecisionKind> for EntryKind {
    fn from(kind: DecisionKind) -> EntryKind {
        match kind {
            DecisionKind::ReadFile => EntryKind::ReadFile,
            DecisionKind::ListFiles => EntryKind::ListFiles,
            DecisionKind::WriteFile => EntryKind::WriteFile,
            DecisionKind::ReplaceText => EntryKind::ReplaceText,
            DecisionKind::RunTool => EntryKind::RunTool,
            DecisionKind::Verify => EntryKind::Verify,
            DecisionKind::Finish => EntryKind::Finish,
            DecisionKind::Invalid => EntryKind::Invalid,
        }
    }
}

pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod names_tests {
    use super::*;
    use crate::protocol::{ProviderKind, SignalKind};
    use strum::VariantArray;

    /// Every variant's `as_str` (and `Display`) is the name serde writes.
    fn same_names<T: Serialize + Copy + std::fmt::Debug>(all: &[T], name: fn(T) -> &'static str) {
        for &v in all {
            let serde = serde_json::to_value(v).unwrap();
            assert_eq!(serde.as_str(), Some(name(v)), "{v:?}");
        }
    }

    #[test]
    fn the_logged_names_are_serde_s() {
        same_names(CheckResult::VARIANTS, CheckResult::as_str);
        same_names(Outcome::VARIANTS, Outcome::as_str);
        same_names(FailureKind::VARIANTS, FailureKind::as_str);
        same_names(CommandFor::VARIANTS, CommandFor::as_str);
        same_names(DecisionKind::VARIANTS, DecisionKind::as_str);
        same_names(SignalKind::VARIANTS, SignalKind::as_str);
        same_names(ProviderKind::VARIANTS, ProviderKind::as_str);
        same_names(EntryKind::VARIANTS, EntryKind::as_str);
        for &v in VerifyTrigger::VARIANTS {
            let serde = serde_json::to_value(v).unwrap();
            assert_eq!(serde.as_str(), Some(v.to_string().as_str()), "{v:?}");
        }
        assert_eq!(FailureKind::Tampered.to_string(), "tampered");
    }

    #[test]
    fn a_decision_s_timeline_entry_has_its_name_and_parses_back() {
        for &kind in DecisionKind::VARIANTS {
            let entry = EntryKind::from(kind);
            assert_eq!(entry.as_str(), kind.as_str());
            assert!(entry.is_decision(), "{kind:?}");
            assert_eq!(kind.as_str().parse::<EntryKind>().ok(), Some(entry));
        }
        let decisions = EntryKind::VARIANTS.iter().filter(|k| k.is_decision());
        assert_eq!(decisions.count(), DecisionKind::VARIANTS.len());
    }

    #[test]
    fn a_type_name_is_the_tag_the_log_writes_and_is_known() {
        let events = [
            Event::bare_enqueued(1),
            Event::AttemptStarted(AttemptStartedRecord {
                pid: 1,
                agent: None,
            }),
            Event::AttemptFinished(AttemptFinishedRecord {
                outcome: Outcome::Succeeded,
                failure_kind: None,
                integrity: None,
            }),
            Event::Cancelled {},
            Event::Retried {},
        ];
        for event in events {
            let written = serde_json::to_value(&event).unwrap();
            assert_eq!(written["type"], event.type_name());
            let read_back: String = event.type_name().into();
            assert_eq!(Event::known_type_name(&read_back), Some(event.type_name()));
        }
        let names = <Event as strum::VariantNames>::VARIANTS;
        assert!(names.contains(&"log_repaired") && names.contains(&"provider_retry"));
        assert_eq!(Event::known_type_name("no_such_event"), None);
    }
}
