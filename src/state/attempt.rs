//! One attempt of a job as the log tells it: where it is (its [`Phase`],
//! which says what the runner does next), what its agent used, the reasons
//! it recorded, and how each run of it ended (a run cut short by a fault of
//! the infrastructure is started over under the same number).

use serde::{Deserialize, Serialize};

use crate::protocol::{
    CallFigures, CheckResult, DecisionKind, FailureKind, Integrity, Outcome, Verdict,
};

/// Where an attempt is: what it recorded last of its phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// Started; the agent phase has not finished.
    Agent,
    /// The agent phase ended (`agent_finished`); when it succeeded, the
    /// patch is taken next.
    Patch { agent: AgentEnd },
    /// The patch is recorded ([`Attempt::patch`]): acceptance runs next,
    /// on a clean copy plus the runner's copy of the changed files.
    Acceptance,
    /// Acceptance judged the patch.
    Judged {
        result: CheckResult,
        verdict: Option<Verdict>,
    },
    /// The patch could not be carried (by the patch phase, or onto
    /// acceptance's copy): the attempt fails `patch_rejected`.
    Rejected,
}

/// How the agent phase of an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentEnd {
    pub outcome: Outcome,
    pub failure_kind: Option<FailureKind>,
}

/// How far an attempt got, in order: a fault of the infrastructure after
/// new progress starts the count of restarts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Agent,
    Patch,
    Acceptance,
    Judged,
}

impl Phase {
    pub fn step(&self) -> Step {
        match self {
            Phase::Agent => Step::Agent,
            Phase::Patch { .. } => Step::Patch,
            Phase::Acceptance | Phase::Rejected => Step::Acceptance,
            Phase::Judged { .. } => Step::Judged,
        }
    }

    /// Whether the agent phase is recorded (a resumed attempt skips it).
    pub fn agent_done(&self) -> bool {
        !matches!(self, Phase::Agent)
    }

    /// The acceptance verdict, once judged.
    pub fn judged(&self) -> Option<(CheckResult, Option<&Verdict>)> {
        match self {
            Phase::Judged { result, verdict } => Some((*result, verdict.as_ref())),
            _ => None,
        }
    }
}

/// The reasons an attempt recorded, each the last of its kind, in one line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Causes {
    /// The last reason of any kind (a refusal, a provider error, a rejected
    /// patch, a fault, a broken harness): only the fallback of
    /// [`super::Job::failure_cause`], which prefers the final verdict's.
    pub last: Option<String>,
    /// The cause of the last failed verify.
    pub verify: Option<String>,
    /// The last refused decision (`refused: ...`); one the model recovered
    /// from stays here but is not the cause of a later verdict.
    pub refusal: Option<String>,
    /// The last failed provider call.
    pub provider: Option<String>,
    /// Why the patch was rejected.
    pub patch: Option<String>,
    /// Why acceptance's tests did not run (they did not build or collect).
    pub acceptance: Option<String>,
    /// How an external agent's process ended (`agent_error`, `no_finish`).
    #[serde(default)]
    pub agent: Option<String>,
}

/// The patch an attempt recorded (`patch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// Bytes of `patch.diff`.
    pub bytes: u64,
    /// Paths it changes.
    pub files: u32,
    /// The SHA-256 of the runner's copy of the changed files
    /// (`files.json`), which acceptance checks the copy against; absent in
    /// logs written before the copy existed.
    pub files_hash: Option<String>,
}

/// How one run of an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum RunEnd {
    /// Stopped before finishing (a runner that died, a fault, Ctrl-C): the
    /// attempt is started over or resumed.
    Interrupted,
    Finished {
        outcome: Outcome,
        failure_kind: Option<FailureKind>,
    },
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Its number, as the log and `DATA/runs/<job>/<n>/` name it.
    pub number: u32,
    /// The manifest hash it ran.
    pub manifest_hash: Option<String>,
    pub phase: Phase,
    /// The patch it recorded, if it did.
    pub patch: Option<Patch>,
    /// Steps (provider calls) of its current or last run; a failed
    /// provider call is a step too.
    pub steps: u32,
    /// Tokens of the current or last run of its agent phase (saturating).
    pub tokens: u64,
    /// Invalid decisions of the current or last run.
    pub invalid_decisions: u32,
    /// The kind of the last decision, if any.
    pub last_action: Option<DecisionKind>,
    /// The figures of the last model call, for the words of the decisions
    /// it brought.
    #[serde(default)]
    pub last_call: Option<CallFigures>,
    pub causes: Causes,
    /// Its integrity record: the signals its phases recorded so far, then
    /// the record its end carries.
    pub integrity: Integrity,
    /// Whether `integrity` is the record the attempt's end carried (bare
    /// lifecycle tasks and older logs carry none).
    pub integrity_final: bool,
    /// How each run ended, in order; the last one may still be going.
    pub runs: Vec<RunEnd>,
}

impl Attempt {
    /// A new attempt `number` of the manifest with `manifest_hash`.
    pub fn new(number: u32, manifest_hash: Option<String>) -> Attempt {
        Attempt {
            number,
            manifest_hash,
            phase: Phase::Agent,
            patch: None,
            steps: 0,
            tokens: 0,
            invalid_decisions: 0,
            last_action: None,
            last_call: None,
            causes: Causes::default(),
            integrity: Integrity::default(),
            integrity_final: false,
            runs: Vec::new(),
        }
    }

    /// The attempt starts over after a fault, before its agent phase was
    /// recorded: what the cut-short run did is not its; the reasons it
    /// recorded stay (a fault's cause among them).
    pub fn restart(&mut self) {
        self.phase = Phase::Agent;
        self.patch = None;
        self.steps = 0;
        self.tokens = 0;
        self.invalid_decisions = 0;
        self.last_action = None;
        self.integrity = Integrity::default();
        self.integrity_final = false;
    }

    /// The integrity record its end carried, if it did.
    pub fn integrity_record(&self) -> Option<&Integrity> {
        self.integrity_final.then_some(&self.integrity)
    }

    /// How the agent phase ended, once recorded (and the attempt got no
    /// further than the patch).
    pub fn agent_end(&self) -> Option<AgentEnd> {
        match self.phase {
            Phase::Patch { agent } => Some(agent),
            _ => None,
        }
    }

    /// Whether a run of it was cut short and started over or resumed.
    pub fn was_interrupted(&self) -> bool {
        self.runs.contains(&RunEnd::Interrupted)
    }

    /// How it ended, once it did.
    pub fn finished(&self) -> Option<(Outcome, Option<FailureKind>)> {
        self.runs.iter().rev().find_map(|run| match run {
            RunEnd::Finished {
                outcome,
                failure_kind,
            } => Some((*outcome, *failure_kind)),
            RunEnd::Interrupted => None,
        })
    }
}
