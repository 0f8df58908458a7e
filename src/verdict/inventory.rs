//! The test inventory of a trusted baseline and the verdict of an
//! acceptance run against it, test by test.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
}

impl TestResults {
    /// Adds another binary's results; a name seen twice is an error.
    pub fn merge(&mut self, other: TestResults, prefix: &str) -> Result<(), String> {
        for (name, outcome) in other.tests {
            let name = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}::{name}")
            };
            if self.tests.insert(name.clone(), outcome).is_some() {
                return Err(format!("test {name:?} is reported twice"));
            }
        }
        self.complete = self.complete && other.complete;
        Ok(())
    }
}

/// Which tests the agent must make pass, and which must keep passing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    /// Failed at baseline: fail-to-pass (F2P).
    pub fail_to_pass: Vec<String>,
    /// Passed at baseline: pass-to-pass (P2P).
    pub pass_to_pass: Vec<String>,
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
    /// The inventory of a baseline run. Skipped tests are in neither list.
    pub fn from_baseline(results: &TestResults) -> Result<Inventory, InventoryError> {
        if results.tests.is_empty() {
            return Err(InventoryError::Empty);
        }
        let pick = |want: TestOutcome| {
            results
                .tests
                .iter()
                .filter(|(_, o)| **o == want)
                .map(|(name, _)| name.clone())
                .collect::<Vec<_>>()
        };
        let inventory = Inventory {
            fail_to_pass: pick(TestOutcome::Failed),
            pass_to_pass: pick(TestOutcome::Passed),
        };
        if inventory.fail_to_pass.is_empty() {
            return Err(InventoryError::NoFailToPass);
        }
        Ok(inventory)
    }
}

/// An acceptance run judged test by test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub f2p_passed: usize,
    pub f2p_total: usize,
    pub p2p_passed: usize,
    pub p2p_total: usize,
    /// Inventory tests reported, but not passed.
    pub failing: Vec<String>,
    /// Inventory tests not reported at all.
    pub missing: Vec<String>,
}

impl Verdict {
    /// Every F2P test passed and every P2P test still passes, each by name.
    pub fn passed(&self) -> bool {
        self.failing.is_empty() && self.missing.is_empty()
    }
}

/// Judges `results` against `inventory`. A test missing from the results is
/// a failure; tests the inventory does not know (added since) are ignored.
pub fn judge(inventory: &Inventory, results: &TestResults) -> Verdict {
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
            match results.tests.get(name) {
                Some(TestOutcome::Passed) => *passed += 1,
                Some(_) => verdict.failing.push(name.clone()),
                None => verdict.missing.push(name.clone()),
            }
        }
    }
    verdict
}

/// Judges `results` when there is no inventory (the baseline was skipped,
/// or its tests did not build): every test reported must pass, the run
/// must have reported its end, and there must be a test at all.
pub fn judge_all(results: &TestResults) -> Verdict {
    let mut verdict = Verdict::default();
    for (name, outcome) in &results.tests {
        match outcome {
            TestOutcome::Passed => verdict.f2p_passed += 1,
            TestOutcome::Failed => verdict.failing.push(name.clone()),
            TestOutcome::Skipped => continue,
        }
        verdict.f2p_total += 1;
    }
    if !results.complete || verdict.f2p_total == 0 {
        verdict
            .missing
            .push("(unknown: the run ended before reporting every test)".to_string());
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(pairs: &[(&str, TestOutcome)]) -> TestResults {
        TestResults {
            tests: pairs.iter().map(|(n, o)| (n.to_string(), *o)).collect(),
            complete: true,
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
        };
        let v = judge(
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
        let ok = judge(
            &inv,
            &results(&[("f1", Passed), ("f2", Passed), ("p1", Passed)]),
        );
        assert!(ok.passed());
        // No results at all (a process that exited 0 before any test).
        let none = judge(&inv, &TestResults::default());
        assert_eq!(none.missing.len(), 3);
        assert!(!none.passed());
    }

    #[test]
    fn without_an_inventory_every_test_must_pass_in_a_complete_run() {
        use TestOutcome::*;
        assert!(judge_all(&results(&[("a", Passed), ("b", Skipped)])).passed());
        assert_eq!(
            judge_all(&results(&[("a", Passed), ("b", Failed)])).failing,
            ["b"]
        );
        let mut cut = results(&[("a", Passed)]);
        cut.complete = false;
        assert!(!judge_all(&cut).passed());
        assert!(
            !judge_all(&TestResults {
                complete: true,
                ..TestResults::default()
            })
            .passed()
        );
    }
}
