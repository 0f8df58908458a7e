//! Judging a task from repeated runs of its baseline and its oracle: a
//! pure function of what the log recorded for each run.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::leaks::Findings;
use crate::protocol::CheckResult;
use crate::protocol::Waiver;
use crate::state::{JobOutcome, Tally};
use crate::verdict::Inventory;

/// What one run of a task recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RunFacts {
    /// The run reached an end (not pending, not a fault of the machine).
    pub finished: bool,
    /// The baseline's result: the acceptance tests on the pristine source
    /// (`Failed` is as required).
    pub baseline: Option<CheckResult>,
    pub inventory: Option<Inventory>,
    /// Why the baseline is unusable, when it says (no test at all, every
    /// test passing).
    pub baseline_reason: Option<String>,
    /// The run's acceptance result on the oracle's fix, if it got there.
    pub acceptance: Option<CheckResult>,
    /// Tests that failed (or were missing) in that acceptance run, when it
    /// was judged test by test.
    pub failing: Option<Vec<String>>,
    /// How the job ended.
    pub outcome: JobOutcome,
    /// What the baseline said about where its inventory came from, when
    /// its hidden tests could not be collected.
    pub inventory_note: Option<String>,
    /// Why canaries are off for the task, when the baseline turned them off.
    pub canary_note: Option<String>,
    /// The tamper signals of the run's (the oracle's) attempt, one line each.
    pub signals: Vec<String>,
}

/// A task's verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum TaskVerdict {
    /// The baseline fails as required, the same way, every run, and the
    /// oracle succeeds every run.
    Valid,
    /// The pristine source already passes the acceptance tests.
    InvalidBaseline,
    /// The oracle's fix does not succeed.
    Unsolvable,
    /// Identical runs gave different results.
    Flaky,
    /// No `[oracle]`: the baseline was checked, solvability was not.
    NoOracle,
    /// The baseline's test harness could not run or report (a missing
    /// test runner, no results file, no test listed): nothing was judged.
    HarnessError,
    /// Some runs have not finished (interrupted, or a fault of the
    /// machine); running `check` again continues them.
    Incomplete,
    /// The answer is within the model's reach: git objects or refs past
    /// the base, a remote, or the oracle's distinctive lines elsewhere in
    /// the source or the prompt.
    Leaky,
}

impl TaskVerdict {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How many runs behaved as a valid task's must, of those that got there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Count {
    /// Runs that behaved as a valid task must (baseline failed as
    /// required; oracle succeeded).
    pub ok: u32,
    /// Runs that recorded this check at all.
    pub of: u32,
}

impl From<Tally> for Count {
    /// The oracle's count: runs that succeeded of those that finished.
    fn from(tally: Tally) -> Count {
        Count {
            ok: tally.succeeded,
            of: tally.finished(),
        }
    }
}

/// The judgement of one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct TaskJudgement {
    pub verdict: TaskVerdict,
    pub baseline: Count,
    pub oracle: Count,
    /// Tests whose result changed between identical runs, sorted.
    pub flaky_tests: Vec<String>,
    /// Why, in one line, when the verdict is not `valid`.
    pub reason: Option<String>,
    /// Facts worth knowing whatever the verdict (where the inventory came
    /// from when the baseline could not collect its tests, why canaries
    /// are off, the oracle runs' tamper signals), distinct.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The evidence of a leak (`leaky`), one fact each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leaks: Vec<String>,
    /// Findings a reviewer waived (`[check] waive`, `--waive`), each as
    /// `KIND: evidence`: shown, but not deciding the verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waived: Vec<String>,
    /// Tamper signals of the oracle's runs, in all (an oracle is the job
    /// author's fix: it should have none).
    pub signals: u32,
}

/// Whether `waive` waives a finding of `kind` (`leaky` waives every leak).
fn waives(waive: &[Waiver], kind: Waiver) -> bool {
    waive.contains(&kind)
        || (waive.contains(&Waiver::Leaky)
            && matches!(
                kind,
                Waiver::LeakyGit | Waiver::LeakyPrompt | Waiver::LeakySource | Waiver::LeakyCopy
            ))
}

/// `judgement`, made `leaky` when `findings` hold evidence of a leak: a
/// task whose answer the model can read is not a valid task, whatever its
/// runs say. Matches that are not leaks join its notes. Findings whose
/// kind `waive` names are kept as waived and decide nothing.
pub(crate) fn with_leaks(
    mut judgement: TaskJudgement,
    findings: Findings,
    waive: &[Waiver],
) -> TaskJudgement {
    let mut leaks = Vec::new();
    let notes = findings.notes.into_iter().map(|f| (f, false));
    let found = findings.leaks.into_iter().map(|f| (f, true));
    for (finding, is_leak) in notes.chain(found) {
        if waives(waive, finding.kind) {
            judgement
                .waived
                .push(format!("{}: {}", finding.kind.as_str(), finding.said));
        } else if is_leak {
            leaks.push(finding.said);
        } else if !judgement.notes.contains(&finding.said) {
            judgement.notes.push(finding.said);
        }
    }
    if leaks.is_empty() {
        return judgement;
    }
    judgement.verdict = TaskVerdict::Leaky;
    let shown: Vec<&str> = leaks.iter().take(3).map(String::as_str).collect();
    let more = leaks.len().saturating_sub(shown.len());
    judgement.reason = Some(format!(
        "the answer is within the model's reach: {}{}",
        shown.join("; "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ));
    judgement.leaks = leaks;
    judgement
}

/// Judges a task from its runs; `has_oracle` says whether the runs applied
/// a known-good fix.
pub(crate) fn judge_task(runs: &[RunFacts], has_oracle: bool) -> TaskJudgement {
    let mut baseline = Count::default();
    let mut outcomes = Tally::default();
    for run in runs.iter().filter(|r| r.finished) {
        if let Some(result) = run.baseline.filter(|r| *r != CheckResult::Skipped) {
            baseline.of += 1;
            baseline.ok += u32::from(result == CheckResult::Failed);
        }
        if has_oracle && run.acceptance.is_some() {
            outcomes.add(run.outcome);
        }
    }
    let oracle = Count::from(outcomes);
    let flaky_tests = flaky_tests(runs, has_oracle);
    let unfinished = runs.iter().filter(|r| !r.finished).count();
    let broken = runs
        .iter()
        .find(|r| r.finished && r.baseline == Some(CheckResult::Error));
    let (verdict, reason) = if let Some(run) = broken {
        (
            TaskVerdict::HarnessError,
            Some(
                run.baseline_reason
                    .clone()
                    .unwrap_or_else(|| "the test harness could not run or report".into()),
            ),
        )
    } else if runs.is_empty() || unfinished > 0 {
        (
            TaskVerdict::Incomplete,
            Some(format!(
                "{unfinished} of {} run(s) did not finish; run check again to continue",
                runs.len()
            )),
        )
    } else if !flaky_tests.is_empty() {
        (
            TaskVerdict::Flaky,
            Some(format!(
                "{} test(s) changed results between identical runs",
                flaky_tests.len()
            )),
        )
    } else if baseline.ok > 0 && baseline.ok < baseline.of {
        (
            TaskVerdict::Flaky,
            Some(format!(
                "the baseline failed as required in {} of {} runs",
                baseline.ok, baseline.of
            )),
        )
    } else if has_oracle && oracle.ok > 0 && oracle.ok < oracle.of {
        (
            TaskVerdict::Flaky,
            Some(format!(
                "the oracle succeeded in {} of {} runs",
                oracle.ok, oracle.of
            )),
        )
    } else if baseline.of > 0 && baseline.ok == 0 {
        (
            TaskVerdict::InvalidBaseline,
            Some(
                runs.iter()
                    .find_map(|r| r.baseline_reason.clone())
                    .unwrap_or_else(|| {
                        "the pristine source already passes the acceptance tests".into()
                    }),
            ),
        )
    } else if !has_oracle {
        (
            TaskVerdict::NoOracle,
            Some("no [oracle]: set script or patch to check that the task can be solved".into()),
        )
    } else if oracle.of == 0 || oracle.ok < oracle.of {
        let failing: BTreeSet<&str> = runs
            .iter()
            .filter_map(|r| r.failing.as_ref())
            .flatten()
            .map(String::as_str)
            .collect();
        let reason = if failing.is_empty() {
            "the oracle's fix does not succeed".to_string()
        } else {
            let names: Vec<&str> = failing.into_iter().collect();
            let verb = if names.len() == 1 { "fails" } else { "fail" };
            format!(
                "the oracle's fix does not succeed: {} {verb}",
                names.join(", ")
            )
        };
        (TaskVerdict::Unsolvable, Some(reason))
    } else {
        (TaskVerdict::Valid, None)
    };
    let mut notes: Vec<String> = Vec::new();
    let canary_notes = runs.iter().filter_map(|r| {
        r.canary_note
            .as_ref()
            .map(|why| format!("canaries off: {why}"))
    });
    let signal_notes = runs.iter().flat_map(|r| {
        r.signals
            .iter()
            .map(|line| format!("tamper signal on the oracle's run: {line}"))
    });
    let inventory_notes = runs.iter().filter_map(|r| r.inventory_note.clone());
    for note in inventory_notes.chain(canary_notes).chain(signal_notes) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let signals = runs
        .iter()
        .map(|r| u32::try_from(r.signals.len()).unwrap_or(u32::MAX))
        .fold(0u32, u32::saturating_add);
    TaskJudgement {
        verdict,
        baseline,
        oracle,
        flaky_tests,
        reason,
        notes,
        leaks: Vec::new(),
        waived: Vec::new(),
        signals,
    }
}

/// Tests whose outcome differs between finished runs: fail-to-pass in one
/// baseline and pass-to-pass in another, or failing in one oracle run and
/// passing in another.
fn flaky_tests(runs: &[RunFacts], has_oracle: bool) -> Vec<String> {
    // Per test name: seen passing at baseline, seen failing at baseline.
    let mut seen: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    let finished: Vec<&RunFacts> = runs.iter().filter(|r| r.finished).collect();
    // Baselines: a test's outcome on the same pristine source.
    let mut flaky: BTreeSet<String> = BTreeSet::new();
    for run in &finished {
        let Some(inventory) = &run.inventory else {
            continue;
        };
        for name in &inventory.fail_to_pass {
            seen.entry(name).or_default().1 = true;
        }
        for name in &inventory.pass_to_pass {
            seen.entry(name).or_default().0 = true;
        }
    }
    flaky.extend(
        seen.iter()
            .filter(|(_, (passed, failed))| *passed && *failed)
            .map(|(name, _)| name.to_string()),
    );
    if has_oracle {
        // Oracle runs: every run judged test by test names the same failures.
        let judged: Vec<&Vec<String>> =
            finished.iter().filter_map(|r| r.failing.as_ref()).collect();
        if judged.len() > 1 {
            let all: BTreeSet<&String> = judged.iter().copied().flatten().collect();
            for name in all {
                if !judged.iter().all(|f| f.contains(name)) {
                    flaky.insert(name.clone());
                }
            }
        }
    }
    flaky.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_names_are_serde_s() {
        use strum::VariantArray;
        for &v in TaskVerdict::VARIANTS {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str(), "{v:?}");
        }
    }

    fn inventory(f2p: &[&str], p2p: &[&str]) -> Option<Inventory> {
        Some(Inventory {
            fail_to_pass: f2p.iter().map(|s| s.to_string()).collect(),
            pass_to_pass: p2p.iter().map(|s| s.to_string()).collect(),
            from: None,
            flaky: Vec::new(),
        })
    }

    fn good_run() -> RunFacts {
        RunFacts {
            finished: true,
            baseline: Some(CheckResult::Failed),
            inventory: inventory(&["fixed"], &["kept"]),
            baseline_reason: None,
            acceptance: Some(CheckResult::Passed),
            failing: Some(Vec::new()),
            outcome: JobOutcome::Succeeded,
            inventory_note: None,
            canary_note: None,
            signals: Vec::new(),
        }
    }

    #[test]
    fn the_same_good_result_every_run_is_valid() {
        let j = judge_task(&[good_run(), good_run(), good_run()], true);
        assert_eq!(j.verdict, TaskVerdict::Valid);
        assert_eq!(j.baseline, Count { ok: 3, of: 3 });
        assert_eq!(j.oracle, Count { ok: 3, of: 3 });
        assert!(j.flaky_tests.is_empty());
        assert_eq!(j.reason, None);
    }

    #[test]
    fn a_passing_baseline_is_invalid() {
        let run = RunFacts {
            baseline: Some(CheckResult::Passed),
            inventory: None,
            acceptance: None,
            failing: None,
            outcome: JobOutcome::Failed,
            ..good_run()
        };
        let j = judge_task(&[run.clone(), run.clone()], true);
        assert_eq!(j.verdict, TaskVerdict::InvalidBaseline);
        assert_eq!(j.baseline, Count { ok: 0, of: 2 });
        // The baseline's own reason, when it gives one.
        let silent = RunFacts {
            baseline_reason: Some("the baseline reported no test at all".into()),
            ..run
        };
        let j = judge_task(&[silent], true);
        assert_eq!(
            j.reason.as_deref(),
            Some("the baseline reported no test at all")
        );
    }

    #[test]
    fn an_oracle_that_is_refused_is_unsolvable_and_names_the_tests() {
        let run = RunFacts {
            acceptance: Some(CheckResult::Failed),
            failing: Some(vec!["fixed".into()]),
            outcome: JobOutcome::Failed,
            ..good_run()
        };
        let j = judge_task(&[run.clone(), run], true);
        assert_eq!(j.verdict, TaskVerdict::Unsolvable);
        assert_eq!(j.oracle, Count { ok: 0, of: 2 });
        assert!(j.reason.unwrap().contains("fixed"));
    }

    #[test]
    fn a_test_that_flips_between_baselines_is_flaky_and_named() {
        let flip = RunFacts {
            inventory: inventory(&["fixed", "coin"], &["kept"]),
            ..good_run()
        };
        let other = RunFacts {
            inventory: inventory(&["fixed"], &["coin", "kept"]),
            ..good_run()
        };
        let j = judge_task(&[flip, other], true);
        assert_eq!(j.verdict, TaskVerdict::Flaky);
        assert_eq!(j.flaky_tests, vec!["coin".to_string()]);
    }

    #[test]
    fn a_test_that_flips_between_oracle_runs_is_flaky() {
        let failing = RunFacts {
            acceptance: Some(CheckResult::Failed),
            failing: Some(vec!["coin".into()]),
            outcome: JobOutcome::Failed,
            ..good_run()
        };
        let j = judge_task(&[good_run(), failing], true);
        assert_eq!(j.verdict, TaskVerdict::Flaky);
        assert_eq!(j.flaky_tests, vec!["coin".to_string()]);
    }

    #[test]
    fn without_an_oracle_only_the_baseline_is_judged() {
        let run = RunFacts {
            acceptance: Some(CheckResult::Failed),
            failing: Some(vec!["fixed".into()]),
            outcome: JobOutcome::Failed,
            ..good_run()
        };
        let j = judge_task(&[run.clone(), run], false);
        assert_eq!(j.verdict, TaskVerdict::NoOracle);
        assert_eq!(j.oracle, Count::default());
    }

    #[test]
    fn unfinished_runs_make_it_incomplete() {
        let pending = RunFacts::default();
        let j = judge_task(&[good_run(), pending], true);
        assert_eq!(j.verdict, TaskVerdict::Incomplete);
        assert_eq!(judge_task(&[], true).verdict, TaskVerdict::Incomplete);
    }

    #[test]
    fn baselines_that_disagree_without_names_are_flaky() {
        let passing = RunFacts {
            baseline: Some(CheckResult::Passed),
            inventory: None,
            ..good_run()
        };
        let j = judge_task(&[good_run(), passing], true);
        assert_eq!(j.verdict, TaskVerdict::Flaky);
    }

    #[test]
    fn a_broken_harness_is_its_own_verdict_with_its_cause() {
        let broken = RunFacts {
            baseline: Some(CheckResult::Error),
            baseline_reason: Some("pytest could not list the tests (exit 1)".into()),
            inventory: None,
            acceptance: None,
            failing: None,
            outcome: JobOutcome::Failed,
            ..good_run()
        };
        let j = judge_task(&[broken.clone(), broken], true);
        assert_eq!(j.verdict, TaskVerdict::HarnessError);
        assert!(j.reason.unwrap().contains("exit 1"));
    }

    #[test]
    fn where_an_inventory_came_from_is_a_note_on_a_valid_task() {
        let run = RunFacts {
            inventory_note: Some(
                "baseline not collectable: inventory from the oracle (3 tests)".into(),
            ),
            ..good_run()
        };
        let j = judge_task(&[run.clone(), run], true);
        assert_eq!(j.verdict, TaskVerdict::Valid);
        assert_eq!(
            j.notes,
            ["baseline not collectable: inventory from the oracle (3 tests)"]
        );
    }

    #[test]
    fn canaries_off_and_the_oracles_signals_are_notes_and_signals_are_counted() {
        let run = RunFacts {
            canary_note: Some("the canary t::x in tests/t.py was reported passed".into()),
            signals: vec!["workspace_changed Cargo.lock: created by a command".into()],
            ..good_run()
        };
        let j = judge_task(&[run.clone(), run], true);
        assert_eq!(j.verdict, TaskVerdict::Valid);
        assert_eq!(j.signals, 2);
        assert_eq!(j.notes.len(), 2, "{:?}", j.notes);
        assert!(j.notes[0].starts_with("canaries off: the canary t::x"));
        assert!(j.notes[1].starts_with("tamper signal on the oracle's run: workspace_changed"));
        assert_eq!(judge_task(&[good_run()], true).signals, 0);
    }
}
