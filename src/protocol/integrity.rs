//! The integrity vocabulary of the log: tamper signals (facts found about
//! an attempt, each with its evidence), the canaries the runner plants in
//! the hidden test files, and the `integrity` record every finished
//! attempt carries.
//!
//! Signals are facts, not verdicts: only a forged canary (or, under
//! `--strict-integrity`, any signal) fails an attempt, as `tampered`.

use serde::{Deserialize, Serialize};

/// Most signals one attempt's record keeps; the count says how many were
/// found in all.
pub const SIGNALS_KEPT: usize = 100;

/// What a tamper signal is about.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// A non-editable file of the workspace was changed, created or
    /// deleted by a command (outside the language table's build dirs).
    WorkspaceChanged,
    /// The patch touches test infrastructure: a harness file
    /// (`conftest.py`, `build.rs`, ...), a test file, a hidden file's path,
    /// or harness configuration in a shared file (`pyproject.toml`).
    TestInfrastructure,
    /// The patch names a test harness's internals (`_pytest`,
    /// `std::process::exit`, `test result:`, ...).
    HarnessInternals,
    /// The acceptance run's results look made up: a test reported twice, a
    /// summary disagreeing with its lines, output after the harness's end.
    ResultAnomaly,
    /// A twin (a copy of a hidden test that must fail with its token) was
    /// reported passed or skipped, or not at all while its file's other
    /// tests were: the results were forged (always `tampered`).
    TwinForged,
    /// A twin failed without its token while its test passed, and again
    /// when run alone: the test does not behave the same under another
    /// name, or the code under test tells them apart.
    TwinMismatch,
}

impl SignalKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One tamper signal: what was found, where, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signal {
    pub kind: SignalKind,
    /// The file or test it concerns (a workspace-relative path, an
    /// inventory name).
    pub subject: String,
    /// What was found, in one line.
    pub evidence: String,
    /// For workspace changes: the steps between the check that found it
    /// and the one before (`[first, last]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<[u32; 2]>,
}

impl Signal {
    pub fn new(
        kind: SignalKind,
        subject: impl Into<String>,
        evidence: impl Into<String>,
    ) -> Signal {
        Signal {
            kind,
            subject: subject.into(),
            evidence: evidence.into(),
            steps: None,
        }
    }

    /// The signal in one line: `kind subject: evidence (steps a-b)`.
    pub fn line(&self) -> String {
        let steps = match self.steps {
            Some([a, b]) if a == b => format!(" (step {a})"),
            Some([a, b]) => format!(" (steps {a}-{b})"),
            None => String::new(),
        };
        format!("{} {}: {}{steps}", self.kind, self.subject, self.evidence)
    }
}

/// Whether canaries run for a job, decided at its baseline (the `canary`
/// field of the `baseline` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CanaryBaseline {
    /// Every canary planted at the baseline was reported failed: acceptance
    /// runs plant them too.
    pub on: bool,
    /// Hidden test files that got a canary at the baseline.
    pub files: u32,
    /// Why canaries are off, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The canaries of an acceptance run (the `canary` field of the
/// `acceptance` event).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CanaryCheck {
    /// The canaries planted, by inventory name (drawn for this run).
    pub planted: Vec<String>,
    /// Evidence that the results were forged: a canary reported passed (or
    /// skipped), or missing from a file whose other tests were reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forged: Vec<String>,
}

/// Whether twins run for a job, decided at its baseline (the `twins` field
/// of the `baseline` event): each hidden test ran beside a twin, and a
/// test whose twin did not fail as it must gets none at acceptance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TwinBaseline {
    /// Some test's twin behaved: acceptance runs twins.
    pub on: bool,
    /// Tests (functions) whose twins behaved.
    pub tests: u32,
    /// Tests (inventory names of their functions) that get no twin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<String>,
    /// Why, for the first few of them (`NAME: why`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// Why twins are off, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The twins of an acceptance run (the `twins` field of the `acceptance`
/// event).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TwinCheck {
    /// Twins planted (a parametrized one counts once).
    pub planted: u32,
    /// Evidence that the results were forged (`twin_forged`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forged: Vec<String>,
    /// Twins that failed without their token twice (`twin_mismatch`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatched: Vec<String>,
}

/// An attempt's integrity record (the `integrity` field of
/// `attempt_finished`): every tamper signal found in its phases, and what
/// its canaries and twins showed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// The signals, at most [`SIGNALS_KEPT`], in the order found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
    /// How many signals were found in all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub signal_count: u32,
    /// Canaries planted in the acceptance run (0: none ran).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub canaries: u32,
    /// Twins planted in the acceptance run (0: none ran).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub twins: u32,
    /// Canary and twin evidence of forged results; non-empty makes the
    /// attempt `tampered`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forged: Vec<String>,
    /// A contained agent's new files outside `editable` that are no
    /// harness file: a note, not a signal (at most [`SIGNALS_KEPT`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stray_files: Vec<String>,
}

impl Integrity {
    /// Adds signals, keeping at most [`SIGNALS_KEPT`] and counting all.
    pub fn add(&mut self, signals: impl IntoIterator<Item = Signal>) {
        for signal in signals {
            self.signal_count = self.signal_count.saturating_add(1);
            if self.signals.len() < SIGNALS_KEPT {
                self.signals.push(signal);
            }
        }
    }

    /// Whether the results were forged (a canary said so).
    pub fn forged(&self) -> bool {
        !self.forged.is_empty()
    }

    /// Nothing found: no signal and no forged canary.
    pub fn is_clean(&self) -> bool {
        self.signal_count == 0 && self.forged.is_empty()
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_a_bounded_number_of_signals_and_counts_them_all() {
        let mut record = Integrity::default();
        assert!(record.is_clean());
        record.add(
            (0..SIGNALS_KEPT + 5)
                .map(|i| Signal::new(SignalKind::WorkspaceChanged, format!("f{i}"), "changed")),
        );
        assert_eq!(record.signals.len(), SIGNALS_KEPT);
        assert_eq!(record.signal_count as usize, SIGNALS_KEPT + 5);
        assert!(!record.is_clean());
        assert!(!record.forged());
    }

    #[test]
    fn a_signal_reads_as_one_line_with_its_steps() {
        let mut signal = Signal::new(
            SignalKind::WorkspaceChanged,
            "tests/visible.rs",
            "changed by a command",
        );
        signal.steps = Some([2, 4]);
        assert_eq!(
            signal.line(),
            "workspace_changed tests/visible.rs: changed by a command (steps 2-4)"
        );
        signal.steps = Some([3, 3]);
        assert!(signal.line().ends_with("(step 3)"));
        let json = serde_json::to_string(&Integrity::default()).unwrap();
        assert_eq!(json, "{}");
    }
}
