//! Judging the canaries of a run: a canary is a test that must fail, so
//! at the baseline each must be reported failed (else the harness cannot
//! be read that way and canaries are off for the job), and at acceptance
//! one reported passed, or missing from a file whose other tests were
//! reported, is evidence that the results were forged. Pure.

use crate::protocol::{CanaryBaseline, CanaryCheck};
use crate::verdict::TestOutcome;

/// How a run reported one canary it planted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CanaryResult {
    /// Its inventory name.
    pub name: String,
    /// The hidden test file it was planted in.
    pub file: String,
    /// What the run reported of it; `None`: not reported at all.
    pub outcome: Option<TestOutcome>,
    /// The run reported other tests of the same file.
    pub file_reported: bool,
}

impl CanaryResult {
    fn reported(&self) -> &'static str {
        match self.outcome {
            Some(TestOutcome::Passed) => "reported passed",
            Some(TestOutcome::Skipped) => "reported skipped",
            Some(TestOutcome::Failed) => "reported failed",
            None => "not reported",
        }
    }
}

/// Whether canaries run for the job, from the baseline's canaries;
/// `unplanted` names the files that could take none, and why.
pub(crate) fn baseline_canaries(results: &[CanaryResult], unplanted: &[String]) -> CanaryBaseline {
    let files = u32::try_from(results.len()).unwrap_or(u32::MAX);
    let off = |reason: String| CanaryBaseline {
        on: false,
        files,
        reason: Some(reason),
    };
    if results.is_empty() {
        let why = match unplanted.first() {
            Some(first) => format!("no hidden test file could take a canary ({first})"),
            None => "no hidden test file could take a canary".to_string(),
        };
        return off(why);
    }
    if let Some(wrong) = results
        .iter()
        .find(|r| r.outcome != Some(TestOutcome::Failed))
    {
        return off(format!(
            "the canary {} in {} was {} at the baseline, where it must fail",
            wrong.name,
            wrong.file,
            wrong.reported()
        ));
    }
    CanaryBaseline {
        on: true,
        files,
        reason: None,
    }
}

/// The acceptance run's canaries and the evidence of forged results.
pub(crate) fn acceptance_canaries(results: &[CanaryResult]) -> CanaryCheck {
    let forged = results
        .iter()
        .filter_map(|r| match r.outcome {
            Some(TestOutcome::Failed) => None,
            Some(_) => Some(format!(
                "the canary {} (a test that must fail, planted in {}) was {}",
                r.name,
                r.file,
                r.reported()
            )),
            None if r.file_reported => Some(format!(
                "the canary {} (a test that must fail, planted in {}) was not reported, while the file's other tests were",
                r.name, r.file
            )),
            None => None,
        })
        .collect();
    CanaryCheck {
        planted: results.iter().map(|r| r.name.clone()).collect(),
        forged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canary(outcome: Option<TestOutcome>, file_reported: bool) -> CanaryResult {
        CanaryResult {
            name: "test/acceptance::keeps_total".into(),
            file: "tests/acceptance.rs".into(),
            outcome,
            file_reported,
        }
    }

    #[test]
    fn the_baseline_needs_every_canary_failed() {
        let on = baseline_canaries(&[canary(Some(TestOutcome::Failed), true)], &[]);
        assert!(on.on);
        assert_eq!(on.files, 1);
        let passed = baseline_canaries(&[canary(Some(TestOutcome::Passed), true)], &[]);
        assert!(!passed.on);
        assert!(
            passed
                .reason
                .unwrap()
                .contains("reported passed at the baseline")
        );
        let missing = baseline_canaries(&[canary(None, false)], &[]);
        assert!(missing.reason.unwrap().contains("not reported"));
        let none = baseline_canaries(&[], &["tests/x.py: no test found".into()]);
        assert!(!none.on);
        assert!(none.reason.unwrap().contains("tests/x.py"));
    }

    #[test]
    fn at_acceptance_a_passed_or_dropped_canary_is_evidence() {
        let check = acceptance_canaries(&[canary(Some(TestOutcome::Failed), true)]);
        assert_eq!(check.planted.len(), 1);
        assert!(check.forged.is_empty());
        let passed = acceptance_canaries(&[canary(Some(TestOutcome::Passed), true)]);
        assert!(passed.forged[0].contains("test/acceptance::keeps_total"));
        assert!(passed.forged[0].contains("reported passed"));
        let dropped = acceptance_canaries(&[canary(None, true)]);
        assert!(dropped.forged[0].contains("not reported"));
        // A file that reported nothing (it did not build) is not forged.
        assert!(
            acceptance_canaries(&[canary(None, false)])
                .forged
                .is_empty()
        );
        assert!(
            !acceptance_canaries(&[canary(Some(TestOutcome::Skipped), true)])
                .forged
                .is_empty()
        );
    }
}
