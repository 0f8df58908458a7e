//! Judging the twins of a run. A twin must fail: with its token exactly
//! when its test's body ran to its end. At the baseline each test's twin
//! is a calibration: a test whose twin does not fail as it must (an
//! `xfail` that takes the twin's failure for its own, a test that depends
//! on its name) gets no twin at acceptance. At acceptance a twin reported
//! passed or skipped, or missing where its test was reported, is
//! evidence of forged results (`twin_forged`, always
//! `tampered`); one that failed without its token while its test passed,
//! and again when run alone, is `twin_mismatch` (a signal). Pure.

use std::collections::{BTreeMap, BTreeSet};

use crate::protocol::{Signal, SignalKind, TwinBaseline, TwinCheck};
use crate::verdict::TestOutcome;

/// Most reasons a baseline's twin record keeps.
const REASONS_KEPT: usize = 10;

/// How a run reported one case of a twin (a parametrized test's twin
/// reports one per parameter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TwinCase {
    /// The case's suffix (`[1]`), empty for a test without cases.
    pub suffix: String,
    /// `None`: not reported.
    pub outcome: Option<TestOutcome>,
    /// Its failure carried the twin's token.
    pub token: bool,
    /// The case run alone again, when it was: what it reported then.
    pub again: Option<(Option<TestOutcome>, bool)>,
}

/// What a run reported of one twin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TwinResult {
    /// The inventory name of the test function it copies.
    pub of: String,
    /// The hidden test file it was planted in.
    pub file: String,
    pub cases: Vec<TwinCase>,
    /// The run reported other tests of the same file.
    pub file_reported: bool,
}

/// The real outcomes of a run, by inventory name.
pub(crate) type Outcomes = BTreeMap<String, TestOutcome>;

fn shown(outcome: Option<TestOutcome>) -> &'static str {
    match outcome {
        Some(TestOutcome::Passed) => "reported passed",
        Some(TestOutcome::Skipped) => "reported skipped",
        Some(TestOutcome::Failed) => "reported failed",
        None => "not reported",
    }
}

/// The cases of twins that failed without their token while their test
/// passed: each is run alone again before it is judged (by the index of
/// the twin and of the case).
pub(crate) fn rerun_candidates(twins: &[TwinResult], real: &Outcomes) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (t, twin) in twins.iter().enumerate() {
        for (c, case) in twin.cases.iter().enumerate() {
            let passed =
                real.get(&format!("{}{}", twin.of, case.suffix)) == Some(&TestOutcome::Passed);
            if passed && case.outcome == Some(TestOutcome::Failed) && !case.token {
                out.push((t, c));
            }
        }
    }
    out
}

/// Whether twins run for the job, from the baseline's twins: a test gets
/// twins at acceptance when every case of its twin failed as it must
/// (with its token where the test passed). `refused` names the tests the
/// language could make no twin of, with why; `off` why twins could not be
/// calibrated at all.
pub(crate) fn baseline_twins(
    twins: &[TwinResult],
    real: &Outcomes,
    refused: &[(String, String)],
    off: Option<String>,
) -> TwinBaseline {
    if let Some(reason) = off {
        return TwinBaseline {
            reason: Some(reason),
            ..TwinBaseline::default()
        };
    }
    let mut excluded: BTreeMap<String, String> = refused.iter().cloned().collect();
    let mut good: BTreeSet<&str> = BTreeSet::new();
    for twin in twins {
        let why = twin.cases.iter().find_map(|case| {
            let test = format!("{}{}", twin.of, case.suffix);
            match (real.get(&test), case.outcome, case.token) {
                (Some(TestOutcome::Passed), Some(TestOutcome::Failed), true) => None,
                (Some(TestOutcome::Failed), Some(TestOutcome::Failed), _) => None,
                (Some(TestOutcome::Passed), Some(TestOutcome::Failed), false) => Some(format!(
                    "its twin of {test} failed without its token where the test passed"
                )),
                (Some(TestOutcome::Skipped), _, _) => Some(format!("{test} was skipped")),
                (None, _, _) => Some(format!("{test} was not reported")),
                (_, outcome, _) => Some(format!(
                    "its twin of {test} was {} at the baseline, where it must fail",
                    shown(outcome)
                )),
            }
        });
        match why {
            Some(why) => {
                excluded.entry(twin.of.clone()).or_insert(why);
            }
            None => {
                good.insert(&twin.of);
            }
        }
    }
    let tests = good
        .iter()
        .filter(|name| !excluded.contains_key(**name))
        .count();
    let on = tests > 0;
    TwinBaseline {
        on,
        tests: u32::try_from(tests).unwrap_or(u32::MAX),
        reasons: excluded
            .iter()
            .take(REASONS_KEPT)
            .map(|(name, why)| format!("{name}: {why}"))
            .collect(),
        excluded: excluded.into_keys().collect(),
        reason: (!on).then(|| "no hidden test's twin failed as it must at the baseline".into()),
    }
}

/// The acceptance run's twins: the evidence of forged results and the
/// mismatches, and the signals they are.
pub(crate) fn acceptance_twins(twins: &[TwinResult], real: &Outcomes) -> (TwinCheck, Vec<Signal>) {
    let mut check = TwinCheck {
        planted: u32::try_from(twins.len()).unwrap_or(u32::MAX),
        ..TwinCheck::default()
    };
    let mut signals = Vec::new();
    for twin in twins {
        for case in &twin.cases {
            let test = format!("{}{}", twin.of, case.suffix);
            let what = format!(
                "the twin of {test} (a copy of it that must fail, planted in {})",
                twin.file
            );
            let forged = match case.outcome {
                Some(TestOutcome::Passed | TestOutcome::Skipped) => {
                    Some(format!("{what} was {}", shown(case.outcome)))
                }
                // Not reported where its test was: a forger dropped it. A
                // test that ended its process (an exit, a crash) takes its
                // twin with it, and the verdict names it missing.
                None if twin.file_reported && real.contains_key(&test) => {
                    Some(format!("{what} was not reported, while the test was"))
                }
                _ => None,
            };
            let again_forged = match case.again {
                Some((Some(TestOutcome::Passed | TestOutcome::Skipped), _)) => Some(format!(
                    "{what} was {} when run alone",
                    shown(case.again.and_then(|a| a.0))
                )),
                _ => None,
            };
            if let Some(evidence) = forged.or(again_forged) {
                signals.push(Signal::new(SignalKind::TwinForged, &test, &evidence));
                check.forged.push(evidence);
                continue;
            }
            let passed = real.get(&test) == Some(&TestOutcome::Passed);
            let without_token = case.outcome == Some(TestOutcome::Failed) && !case.token;
            let again_without = case.again.is_none_or(|(_, token)| !token);
            if passed && without_token && again_without {
                let evidence =
                    format!("{what} failed without its token while the test passed, twice");
                signals.push(Signal::new(SignalKind::TwinMismatch, &test, &evidence));
                check.mismatched.push(evidence);
            }
        }
    }
    (check, signals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twin(cases: Vec<TwinCase>, file_reported: bool) -> TwinResult {
        TwinResult {
            of: "tests.test_calc::test_mean".into(),
            file: "tests/test_calc.py".into(),
            cases,
            file_reported,
        }
    }

    fn case(outcome: Option<TestOutcome>, token: bool) -> TwinCase {
        TwinCase {
            suffix: String::new(),
            outcome,
            token,
            again: None,
        }
    }

    fn real(outcome: TestOutcome) -> Outcomes {
        BTreeMap::from([("tests.test_calc::test_mean".to_string(), outcome)])
    }

    #[test]
    fn a_twin_reported_passed_skipped_or_dropped_is_forged_whatever_the_test_did() {
        use TestOutcome::*;
        for outcome in [Passed, Failed] {
            for bad in [Some(Passed), Some(Skipped)] {
                let (check, signals) =
                    acceptance_twins(&[twin(vec![case(bad, false)], true)], &real(outcome));
                assert_eq!(check.forged.len(), 1, "{bad:?}");
                assert_eq!(signals[0].kind, SignalKind::TwinForged);
                assert!(check.forged[0].contains("the twin of tests.test_calc::test_mean"));
            }
            let (check, _) =
                acceptance_twins(&[twin(vec![case(None, true)], true)], &real(outcome));
            assert!(check.forged[0].contains("not reported"));
            // A file that reported nothing (it did not build) is not forged.
            let (check, _) =
                acceptance_twins(&[twin(vec![case(None, false)], false)], &real(outcome));
            assert!(check.forged.is_empty());
        }
    }

    #[test]
    fn a_twin_without_its_token_is_a_mismatch_only_where_its_test_passed_and_it_repeats() {
        use TestOutcome::*;
        let honest = [twin(vec![case(Some(Failed), true)], true)];
        assert_eq!(
            acceptance_twins(&honest, &real(Passed)).0,
            TwinCheck {
                planted: 1,
                ..TwinCheck::default()
            }
        );
        let early = [twin(vec![case(Some(Failed), false)], true)];
        // The test failed too: its twin failed before the end, as it must.
        assert!(acceptance_twins(&early, &real(Failed)).1.is_empty());
        assert_eq!(rerun_candidates(&early, &real(Passed)), [(0, 0)]);
        assert!(rerun_candidates(&early, &real(Failed)).is_empty());
        let (check, signals) = acceptance_twins(&early, &real(Passed));
        assert_eq!(check.mismatched.len(), 1);
        assert_eq!(signals[0].kind, SignalKind::TwinMismatch);
        let mut flaky = early.clone();
        flaky[0].cases[0].again = Some((Some(Failed), true));
        assert!(acceptance_twins(&flaky, &real(Passed)).1.is_empty());
        flaky[0].cases[0].again = Some((Some(Passed), false));
        assert_eq!(acceptance_twins(&flaky, &real(Passed)).0.forged.len(), 1);
    }

    #[test]
    fn the_baseline_keeps_twins_of_tests_whose_twins_failed_as_they_must() {
        use TestOutcome::*;
        let good = baseline_twins(
            &[twin(vec![case(Some(Failed), true)], true)],
            &real(Passed),
            &[],
            None,
        );
        assert!(good.on);
        assert_eq!(good.tests, 1);
        // An xfail: the twin's failure is taken as expected, reported skipped.
        let xfail = baseline_twins(
            &[twin(vec![case(Some(Skipped), false)], true)],
            &real(Failed),
            &[],
            None,
        );
        assert!(!xfail.on);
        assert_eq!(xfail.excluded, ["tests.test_calc::test_mean"]);
        assert!(
            xfail.reasons[0].contains("reported skipped at the baseline"),
            "{xfail:?}"
        );
        let failing = baseline_twins(
            &[twin(vec![case(Some(Failed), false)], true)],
            &real(Failed),
            &[],
            None,
        );
        assert!(failing.on);
        let refused = [(
            "tests.test_calc::test_x".to_string(),
            "must panic".to_string(),
        )];
        let some = baseline_twins(
            &[twin(vec![case(Some(Failed), true)], true)],
            &real(Passed),
            &refused,
            None,
        );
        assert_eq!(some.excluded, ["tests.test_calc::test_x"]);
        let off = baseline_twins(&[], &real(Passed), &[], Some("why".into()));
        assert!(!off.on && off.reason.as_deref() == Some("why"));
    }
}
