//! What a baseline or acceptance run says: its result, the baseline's test
//! inventory, the acceptance's per-test verdict. Pure functions of the run.

use super::checks::CheckRun;
use crate::log::CheckResult;
use crate::verdict::{Inventory, InventoryError, Verdict as TestVerdict, judge, judge_all};

/// The baseline's result, its test inventory and why it is unusable, from
/// its run. With per-test results, the inventory decides: a test that fails
/// makes a valid baseline; no failing test, or no test at all, makes it
/// "passed" (nothing to fix), with the reason. Tests that do not build at
/// baseline give no inventory: every test is then fail-to-pass.
pub(super) fn baseline_of(run: &CheckRun) -> (CheckResult, Option<Inventory>, Option<String>) {
    let Some(results) = &run.results else {
        let result = if run.exit_passed() {
            CheckResult::Passed
        } else {
            CheckResult::Failed
        };
        return (result, None, None);
    };
    let note = run.note.as_deref();
    match Inventory::from_baseline(results) {
        Ok(inventory) => (CheckResult::Failed, Some(inventory), None),
        Err(InventoryError::Empty) if note.is_some_and(|n| n.contains("did not build")) => (
            CheckResult::Failed,
            None,
            Some(
                "the tests do not build on the pristine source: every test is fail-to-pass".into(),
            ),
        ),
        Err(why) => (
            CheckResult::Passed,
            None,
            Some(match note {
                Some(note) => format!("{why} ({note})"),
                None => why.to_string(),
            }),
        ),
    }
}

/// The acceptance result and its per-test verdict (none for `exit`).
pub(super) fn acceptance_of(
    run: &CheckRun,
    inventory: Option<&Inventory>,
) -> (CheckResult, Option<TestVerdict>) {
    let Some(results) = &run.results else {
        let result = if run.exit_passed() {
            CheckResult::Passed
        } else {
            CheckResult::Failed
        };
        return (result, None);
    };
    let verdict = match inventory {
        Some(inventory) => judge(inventory, results),
        None => judge_all(results),
    };
    let result = if verdict.passed() {
        CheckResult::Passed
    } else {
        CheckResult::Failed
    };
    (result, Some(verdict))
}
