//! The test inventory of a trusted baseline and the verdict of an
//! acceptance run against it, test by test.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::protocol::{Inventory, InventorySource, Verdict};

/// How one test ended in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    Passed,
    Failed,
    Skipped,
}

/// Per-test results of one run (or of several binaries, merged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestResults {
    pub tests: BTreeMap<String, TestOutcome>,
    /// The harness reported its end (a summary, a closed document); a run
    /// cut short is not, and its absent tests are missing.
    pub complete: bool,
    /// Tests that did not finish before their timeout (their own, or the
    /// run's): each is in `tests` as failed.
    pub timed_out: BTreeSet<String>,
    /// What an honest harness does not write, in one line each (a test
    /// reported twice, output after the document's end): facts for the
    /// integrity record, not results.
    pub anomalies: Vec<String>,
    /// What tests that did not pass printed of their own (libtest's
    /// `---- NAME stdout ----` block, a JUnit `<failure>`'s text), by name,
    /// each cut to [`super::EXCERPT_BYTES`] as it is read.
    pub outputs: BTreeMap<String, String>,
}

impl TestResults {
    /// Adds another binary's results; a name seen twice is an error.
    pub fn merge(&mut self, other: TestResults, prefix: &str) -> Result<(), super::ResultsError> {
        let named = |name: String| {
            if prefix.is_empty() {
                name
            } else {
                format!("{prefix}::{name}")
            }
        };
        for (name, outcome) in other.tests {
            let name = named(name);
            if self.tests.insert(name.clone(), outcome).is_some() {
                return Err(super::ResultsError::ReportedTwice(name));
            }
        }
        self.timed_out
            .extend(other.timed_out.into_iter().map(named));
        self.outputs.extend(
            other
                .outputs
                .into_iter()
                .map(|(name, text)| (named(name), text)),
        );
        self.complete = self.complete && other.complete;
        Ok(())
    }

    /// Records that `name` timed out: failed, and named as such.
    pub fn time_out(&mut self, name: &str) {
        self.tests.insert(name.to_string(), TestOutcome::Failed);
        self.timed_out.insert(name.to_string());
    }
}

/// Why a baseline gives no usable inventory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InventoryError {
    #[error("the baseline reported no test at all: nothing to judge a fix by")]
    Empty,
    #[error("every test passes at baseline: the task is already solved")]
    NoFailToPass,
}

impl Inventory {
    /// The inventory of a baseline run that reported its own tests (no
    /// listing). Skipped tests are in neither list.
    pub fn from_baseline(results: &TestResults) -> Result<Inventory, InventoryError> {
        let names: Vec<String> = results.tests.keys().cloned().collect();
        Inventory::from_listing(&names, results, None)
    }

    /// The inventory of the tests `listed` (and, when the baseline could
    /// not collect every hidden test, those `from` gave), judged by the
    /// baseline's `results`: passed is pass-to-pass; failed, timed out or
    /// not reported at all is fail-to-pass; skipped is neither.
    pub fn from_listing(
        listed: &[String],
        results: &TestResults,
        from: Option<InventorySource>,
    ) -> Result<Inventory, InventoryError> {
        if listed.is_empty() {
            return Err(InventoryError::Empty);
        }
        let mut inventory = Inventory {
            from,
            ..Inventory::default()
        };
        let unique: BTreeSet<&String> = listed.iter().collect();
        for name in unique {
            match results.tests.get(name) {
                Some(TestOutcome::Passed) => inventory.pass_to_pass.push(name.clone()),
                Some(TestOutcome::Skipped) => {}
                Some(TestOutcome::Failed) | None => inventory.fail_to_pass.push(name.clone()),
            }
        }
        if inventory.fail_to_pass.is_empty() {
            return Err(InventoryError::NoFailToPass);
        }
        Ok(inventory)
    }
}

/// How a run reported one inventory name.
enum Reported {
    Passed,
    Failed { timed_out: bool },
    Missing,
}

/// Judges `results` against `inventory`. A test missing from the results is
/// a failure; tests the inventory does not know (added since) are ignored.
/// With an inventory of test functions, `function_of` maps a reported
/// case to its function: a function passes when it was reported at all
/// and every case of it passed.
pub fn judge(
    inventory: &Inventory,
    results: &TestResults,
    function_of: &dyn Fn(&str) -> String,
) -> Verdict {
    let mut cases: BTreeMap<String, Vec<&String>> = BTreeMap::new();
    if inventory.names_functions() {
        for name in results.tests.keys() {
            cases.entry(function_of(name)).or_default().push(name);
        }
    }
    let reported = |name: &String| -> Reported {
        let exact = [name];
        let names: &[&String] = match results.tests.get(name) {
            Some(_) => &exact,
            None => cases.get(name).map_or(&[], Vec::as_slice),
        };
        if names.is_empty() {
            return Reported::Missing;
        }
        let failed: Vec<&&String> = names
            .iter()
            .filter(|n| results.tests.get(n.as_str()) != Some(&TestOutcome::Passed))
            .collect();
        if failed.is_empty() {
            Reported::Passed
        } else {
            Reported::Failed {
                timed_out: failed
                    .iter()
                    .any(|n| results.timed_out.contains(n.as_str())),
            }
        }
    };
    let mut verdict = Verdict {
        f2p_total: inventory.fail_to_pass.len(),
        p2p_total: inventory.pass_to_pass.len(),
        ..Verdict::default()
    };
    for (list, passed) in [
        (&inventory.fail_to_pass, &mut verdict.f2p_passed),
        (&inventory.pass_to_pass, &mut verdict.p2p_passed),
    ] {
        for name in list {
            match reported(name) {
                Reported::Passed => *passed += 1,
                Reported::Failed { timed_out } => {
                    verdict.failing.push(name.clone());
                    if timed_out {
                        verdict.timed_out.push(name.clone());
                    }
                }
                Reported::Missing => verdict.missing.push(name.clone()),
            }
        }
    }
    verdict
}

/// Judges `results` when there is no inventory (the baseline was
/// skipped): every test `listed` must be reported and pass; without a
/// listing, every test reported must pass and the run must have reported
/// its end. Either way there must be a test at all.
pub fn judge_all(results: &TestResults, listed: Option<&[String]>) -> Verdict {
    let mut verdict = Verdict::default();
    let names: Vec<&String> = match listed {
        Some(listed) => listed.iter().collect::<BTreeSet<_>>().into_iter().collect(),
        None => results.tests.keys().collect(),
    };
    for name in names {
        match results.tests.get(name) {
            Some(TestOutcome::Passed) => verdict.f2p_passed += 1,
            Some(TestOutcome::Failed) => {
                verdict.failing.push(name.clone());
                if results.timed_out.contains(name) {
                    verdict.timed_out.push(name.clone());
                }
            }
            Some(TestOutcome::Skipped) => continue,
            None => verdict.missing.push(name.clone()),
        }
        verdict.f2p_total += 1;
    }
    if verdict.f2p_total == 0 {
        verdict
            .missing
            .push("(unknown: no test was listed and reported)".to_string());
    } else if listed.is_none() && !results.complete {
        verdict
            .missing
            .push("(unknown: the run ended before reporting every test)".to_string());
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge_exact(inventory: &Inventory, results: &TestResults) -> Verdict {
        judge(inventory, results, &|name| name.to_string())
    }

    fn judge_all_reported(results: &TestResults) -> Verdict {
        judge_all(results, None)
    }

    fn results(pairs: &[(&str, TestOutcome)]) -> TestResults {
        TestResults {
            tests: pairs.iter().map(|(n, o)| (n.to_string(), *o)).collect(),
            complete: true,
            ..TestResults::default()
        }
    }

    #[test]
    fn the_baseline_splits_tests_into_f2p_and_p2p() {
        use TestOutcome::*;
        let inv =
            Inventory::from_baseline(&results(&[("a", Failed), ("b", Passed), ("c", Skipped)]))
                .unwrap();
        assert_eq!(inv.fail_to_pass, ["a"]);
        assert_eq!(inv.pass_to_pass, ["b"]);
        assert_eq!(
            Inventory::from_baseline(&results(&[("b", Passed)])),
            Err(InventoryError::NoFailToPass)
        );
        assert_eq!(
            Inventory::from_baseline(&TestResults::default()),
            Err(InventoryError::Empty)
        );
    }

    #[test]
    fn missing_and_failing_tests_are_named_and_never_pass() {
        use TestOutcome::*;
        let inv = Inventory {
            fail_to_pass: vec!["f1".into(), "f2".into()],
            pass_to_pass: vec!["p1".into()],
            from: None,
            flaky: Vec::new(),
        };
        let v = judge_exact(
            &inv,
            &results(&[("f1", Passed), ("p1", Failed), ("new", Failed)]),
        );
        assert!(!v.passed());
        assert_eq!(
            (v.f2p_passed, v.f2p_total, v.p2p_passed, v.p2p_total),
            (1, 2, 0, 1)
        );
        assert_eq!(v.failing, ["p1"]);
        assert_eq!(v.missing, ["f2"]);
        let ok = judge_exact(
            &inv,
            &results(&[("f1", Passed), ("f2", Passed), ("p1", Passed)]),
        );
        assert!(ok.passed());
        // No results at all (a process that exited 0 before any test).
        let none = judge_exact(&inv, &TestResults::default());
        assert_eq!(none.missing.len(), 3);
        assert!(!none.passed());
    }

    #[test]
    fn without_an_inventory_every_test_must_pass_in_a_complete_run() {
        use TestOutcome::*;
        assert!(judge_all_reported(&results(&[("a", Passed), ("b", Skipped)])).passed());
        assert_eq!(
            judge_all_reported(&results(&[("a", Passed), ("b", Failed)])).failing,
            ["b"]
        );
        let mut cut = results(&[("a", Passed)]);
        cut.complete = false;
        assert!(!judge_all_reported(&cut).passed());
        assert!(
            !judge_all_reported(&TestResults {
                complete: true,
                ..TestResults::default()
            })
            .passed()
        );
    }

    #[test]
    fn the_listing_is_the_inventory_and_a_test_that_did_not_report_is_fail_to_pass() {
        use TestOutcome::*;
        let listed: Vec<String> = ["hangs", "passes", "silent", "skipped"]
            .map(String::from)
            .into();
        let mut run = results(&[("passes", Passed), ("skipped", Skipped), ("extra", Failed)]);
        run.time_out("hangs");
        let inv = Inventory::from_listing(&listed, &run, None).unwrap();
        assert_eq!(inv.fail_to_pass, ["hangs", "silent"]);
        assert_eq!(inv.pass_to_pass, ["passes"]);
        assert_eq!(
            Inventory::from_listing(&[], &run, None),
            Err(InventoryError::Empty)
        );
    }

    #[test]
    fn a_test_that_times_out_at_acceptance_is_failing_and_named() {
        use TestOutcome::*;
        let inv = Inventory {
            fail_to_pass: vec!["hangs".into(), "fixed".into()],
            ..Inventory::default()
        };
        let mut run = results(&[("fixed", Passed)]);
        run.time_out("hangs");
        let v = judge_exact(&inv, &run);
        assert_eq!(v.failing, ["hangs"]);
        assert_eq!(v.timed_out, ["hangs"]);
        assert!(v.missing.is_empty());
    }

    #[test]
    fn an_inventory_of_functions_is_judged_by_every_case_of_each() {
        use TestOutcome::*;
        let inv = Inventory {
            fail_to_pass: vec!["m::f".into(), "m::g".into(), "m::h".into()],
            pass_to_pass: Vec::new(),
            from: Some(InventorySource::HiddenFiles),
            flaky: Vec::new(),
        };
        let strip = |name: &str| name.split('[').next().unwrap_or(name).to_string();
        let run = results(&[
            ("m::f[1]", Passed),
            ("m::f[2]", Passed),
            ("m::g[1]", Passed),
            ("m::g[2]", Failed),
            ("m::other", Passed),
        ]);
        let v = judge(&inv, &run, &strip);
        assert_eq!(v.f2p_passed, 1);
        assert_eq!(v.failing, ["m::g"]);
        assert_eq!(v.missing, ["m::h"]);
        // Exact names still match themselves.
        let exact = results(&[("m::f", Passed), ("m::g", Passed), ("m::h", Passed)]);
        assert!(judge(&inv, &exact, &strip).passed());
    }

    #[test]
    fn without_an_inventory_every_listed_test_must_be_reported_and_pass() {
        use TestOutcome::*;
        let listed: Vec<String> = vec!["a".into(), "b".into()];
        let v = judge_all(&results(&[("a", Passed)]), Some(&listed));
        assert_eq!(v.missing, ["b"]);
        assert!(judge_all(&results(&[("a", Passed), ("b", Passed)]), Some(&listed)).passed());
        // A listing of nothing, or a well-formed "0 passed": never a pass.
        assert!(!judge_all(&results(&[]), Some(&[])).passed());
        assert!(!judge_all(&results(&[]), None).passed());
    }
}
