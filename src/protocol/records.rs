//! The payload of each event that carries one: one struct per variant of
//! [`super::Event`], written flat into the record beside its `type` tag.
//! Handlers, `describe` and the constructors take the struct whole.

use serde::{Deserialize, Serialize};

use super::event::{
    BaselineOrigin, CallFigures, CheckResult, CommandFor, DecisionKind, FailureKind, Outcome,
    TestRuns, VerifyTrigger, is_zero, is_zero_u32,
};
use super::integrity::{CanaryBaseline, CanaryCheck, Integrity, Signal, TwinBaseline, TwinCheck};
use super::resources::Resources;
use super::snapshot::ManifestSnapshot;
use super::verdict::{Inventory, Verdict};

/// A job entered the queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnqueuedRecord {
    /// Attempts allowed in total (first run plus retries).
    pub max_attempts: u32,
    /// Report grouping; absent for bare tasks (the id is the family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// The manifest snapshot, from which a runner reconstructs the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Box<ManifestSnapshot>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_hash: Option<String>,
    /// For sweep instances (`<job>@<provider>#<k>`): the manifest id,
    /// the provider name and the repeat index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_job: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// `--replace` (a new manifest for an existing, not running job) or
/// `batch --rerun` (the same one again): the job is queued again with
/// its attempts reset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplacedRecord {
    pub max_attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    pub manifest: Box<ManifestSnapshot>,
    pub manifest_hash: String,
    /// The highest attempt number used before: the new manifest's
    /// attempts are numbered from `attempts_before + 1`, so earlier
    /// attempts keep their numbers, records and `runs/` artifacts as
    /// history. Absent (0) in logs of version 1, where numbering
    /// restarted at 1.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub attempts_before: u32,
}

/// A runner claimed the job and took the attempt's lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptStartedRecord {
    /// Process id of the runner holding the lease.
    pub pid: u32,
    /// The external agent driving the attempt, `<name>@<version>`; none
    /// for the runtime's own loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// The runner finished the attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptFinishedRecord {
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<FailureKind>,
    /// The attempt's integrity record: every tamper signal its phases
    /// found and what its canaries showed. Absent for bare lifecycle
    /// tasks and in logs written before the record existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<Integrity>,
}

/// The attempt stopped before finishing: a later writer found it running
/// without a live lease (a crash), or its own runner was interrupted
/// (Ctrl-C), which it says with `by_runner`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptInterruptedRecord {
    /// Process id recorded when the attempt started.
    pub pid: u32,
    /// The runner stopped the attempt itself; the attempt is not counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_runner: bool,
    /// A fault of the infrastructure the runner met (an unreachable
    /// provider, a runtime I/O error), in one line. Like a runner that
    /// died (no cause), it restarts the job without using an attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// The job's trusted `[setup]` commands ran (or their cached result was
/// reused) before the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupRecord {
    pub result: CheckResult,
    /// Time the commands took; 0 when the cache was reused.
    pub duration_ms: u64,
    /// The job cache was already filled by an earlier run of the same
    /// job, manifest and source: nothing ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
    /// Why it failed, in one line (the whole output is `setup.log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The job cache used (`DATA/cache/<key>/`), which `gc` keeps while
    /// a job in the log names it; absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
}

/// The pristine source was judged by the acceptance command before the agent ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineRecord {
    pub result: CheckResult,
    /// The test inventory (fail-to-pass, pass-to-pass) read from the
    /// baseline's per-test results; absent with `results = "exit"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory: Option<Inventory>,
    /// Why the baseline is unusable, when it is; with `result = "error"`
    /// why the harness is broken, with the command's stderr tail; or a
    /// note about the inventory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Inventory tests that did not finish before their timeout on the
    /// pristine source (fail-to-pass).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timed_out: Vec<String>,
    /// Whether canaries run for the job: on when every canary planted
    /// here was reported failed, off (with why) otherwise. Absent when
    /// canaries do not apply (`canary = false`, a language without
    /// them, `results = "exit"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryBaseline>,
    /// Whether twins run for the job, and which tests get none. Absent
    /// when twins do not apply (`twins = false`, a language without
    /// them) and in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twins: Option<TwinBaseline>,
    /// What determined the verdict, hashed (the baseline key: source and
    /// acceptance files, the acceptance settings, setup, the toolchain,
    /// the runtime, the limits that matter). Absent for a skipped
    /// baseline and in logs written before baselines were reused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The verdict was not run again: it is the one of an earlier
    /// baseline with the same `key` in this data dir, whose commands
    /// ran in this instance and attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<BaselineOrigin>,
}

/// One model call of an agent phase and what it cost: what the state
/// counts steps, tokens and cost by (format 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCallRecord {
    pub step: u32,
    #[serde(flatten)]
    pub call: CallFigures,
    /// Requests that failed transiently and were retried first.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub retries: u32,
}

/// Most characters of a decision's `subject` the log keeps.
pub const SUBJECT_CHARS: usize = 120;

/// A decision: what was asked at `step` and why it was refused, when
/// it was. Format 2 logs recorded the model call on it too (`call`):
/// a decision with them is its call as well.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    pub step: u32,
    /// The decision kind, or `invalid`.
    pub kind: DecisionKind,
    /// What a valid decision names: its path, or the program it runs
    /// (never its arguments), at most [`SUBJECT_CHARS`] characters; left
    /// out for verify, finish, a refusal, and in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub call: Option<CallFigures>,
}

/// A provider call failed transiently and is retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderRetryRecord {
    pub step: u32,
    pub retry: u32,
    pub reason: String,
    pub wait_ms: u64,
}

/// A provider call failed for good.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderFailedRecord {
    pub step: u32,
    pub message: String,
    /// Tokens billed for a response that could not be used.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub input_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub output_tokens: u64,
}

/// A command ran (never its arguments or output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandRecord {
    pub step: u32,
    pub role: CommandFor,
    pub program: String,
    pub resolved: String,
    pub argc: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub truncated: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    /// The kernel's OOM killer killed inside the command (the memory
    /// limit was hit); present only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub oom: bool,
    pub sandbox: Vec<agent_runtime_sandbox::sandbox::Layer>,
    /// What it cost the machine (CPU time, memory and task peaks);
    /// absent when nothing could be told, and in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// A test binary whose tests ran one per process: this one event
    /// stands for its listing and every run (the other fields sum or
    /// combine them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestRuns>,
}

/// A file in the workspace was created or changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditRecord {
    pub step: u32,
    pub path: String,
    /// SHA-256 prefix of the content before (absent for a new file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    pub after: String,
    pub bytes: u64,
}

/// The verify command's verdict; `trigger` is `decision` or `finish`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyRecord {
    pub step: u32,
    pub trigger: VerifyTrigger,
    pub passed: bool,
    /// Why it failed, in one line: the first compiler error or failing
    /// test of its output (capped); the only output the log keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// The agent phase of the attempt ended; later phases never rerun it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentFinishedRecord {
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<FailureKind>,
    pub steps: u32,
    /// Non-editable files of the workspace that commands changed,
    /// created or deleted, found before each verify and at the end of
    /// the phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrity: Vec<Signal>,
    /// How an external agent's process ended, when that ended the phase
    /// (`agent_error`, `no_finish`): its exit status and its last lines of
    /// output, bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Contained: files the agent's own tools created outside `editable`
    /// that are no harness or startup file; a note, not a signal (the
    /// patch never carries them). At most [`super::SIGNALS_KEPT`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stray_files: Vec<String>,
    /// An external agent's: how long its process ran, in milliseconds
    /// (every round's), beside which the rest of the attempt is the
    /// runtime's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_ms: Option<u64>,
}

/// The agent's patch (editable files against the pristine source): the
/// runner's copy of the changed files (`files/`, `files.json`) and
/// `patch.diff` were saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchRecord {
    /// Bytes of `patch.diff`.
    pub bytes: u64,
    /// Paths created, changed, deleted or with a new mode.
    pub files: u32,
    /// Short hash of `patch.diff`.
    pub hash: String,
    /// SHA-256 of `files.json` (which names each carried file's
    /// SHA-256): what acceptance checks the copy against. Absent in
    /// logs written before the copy existed (acceptance then applies
    /// `patch.diff`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_hash: Option<String>,
    /// `patch.diff` leaves something out (over its cap); the copy never
    /// does. Present only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// What the patch touches or names that a fix has no business
    /// with: test infrastructure, harness internals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrity: Vec<Signal>,
}

/// The workspace held something a patch cannot carry faithfully (a
/// FIFO, a new symlink, a file over the cap, a name that is not UTF-8,
/// an entry turned into a symlink...), or a recorded patch could not be
/// laid on the clean copy because of what it holds: the attempt fails
/// `patch_rejected`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchRejectedRecord {
    /// What was found where, e.g. `src/a.rs: is a FIFO, not a regular file`.
    pub reason: String,
}

/// Acceptance tests on a clean copy plus the patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceptanceRecord {
    pub result: CheckResult,
    /// The per-test verdict against the inventory; absent when the
    /// result is the exit status alone (not verified per test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The canaries planted in this run and any evidence of forged
    /// results; absent when none ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryCheck>,
    /// The twins planted in this run and what they showed; absent when
    /// none ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twins: Option<TwinCheck>,
    /// Anomalies of the run's results (a test reported twice, a summary
    /// disagreeing with its lines, output after the harness's end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrity: Vec<Signal>,
    /// Why its tests did not run, in one line (at most 200 characters),
    /// when the build or the test runner failed before reporting them:
    /// `the tests did not build: error[E0425]: ...`. The excerpt it comes
    /// from is `harness_output.txt` beside the attempt's other artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// A writer cut a torn (unterminated) tail off the log before appending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogRepairedRecord {
    /// 1-based line number the torn fragment started on.
    pub line: u64,
    /// Bytes removed.
    pub dropped_bytes: u64,
}
