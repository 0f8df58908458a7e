//! What a baseline or acceptance run says: its result, the baseline's test
//! inventory, the acceptance's per-test verdict. Pure functions of the run.

use super::checks::CheckRun;
use super::harness_output::{HarnessOutput, harness_output};
use crate::integrity::{acceptance_canaries, acceptance_twins, baseline_canaries, baseline_twins};
use crate::lang::{Language, Tooling, names_match};
use crate::protocol::{
    Acceptance, BaselineOrigin, CanaryBaseline, CanaryCheck, CheckResult, Event, Signal,
    SignalKind, TwinBaseline, TwinCheck,
};
use crate::protocol::{AcceptanceRecord, BaselineRecord};
use crate::verdict::{
    Inventory, InventoryError, TestOutcome, Verdict as TestVerdict, judge, judge_all,
};

/// What the `baseline` event records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BaselineFacts {
    pub(super) result: CheckResult,
    pub(super) inventory: Option<Inventory>,
    pub(super) reason: Option<String>,
    /// Inventory tests killed at their timeout on the pristine source.
    pub(super) timed_out: Vec<String>,
    /// Whether canaries run for the job.
    pub(super) canary: Option<CanaryBaseline>,
    /// Whether twins run for the job, and which tests get none.
    pub(super) twins: Option<TwinBaseline>,
}

impl BaselineFacts {
    /// Facts with no test timed out and no canary (yet).
    fn new(result: CheckResult, inventory: Option<Inventory>, reason: Option<String>) -> Self {
        BaselineFacts {
            result,
            inventory,
            reason,
            timed_out: Vec::new(),
            canary: None,
            twins: None,
        }
    }

    /// The facts with the tests `flaky` names left out of the inventory;
    /// one whose every fail-to-pass test is flaky is no baseline (the job
    /// is `invalid_baseline`).
    pub(super) fn leaving_out(mut self, flaky: &[String]) -> BaselineFacts {
        let Some(inventory) = &mut self.inventory else {
            return self;
        };
        inventory.leave_out(flaky);
        if inventory.flaky.is_empty() {
            return self;
        }
        self.timed_out.retain(|name| !flaky.contains(name));
        if inventory.fail_to_pass.is_empty() {
            let names = inventory.flaky.join(", ");
            return BaselineFacts {
                result: CheckResult::Passed,
                inventory: None,
                reason: Some(format!("every fail-to-pass test is flaky ({names})")),
                timed_out: Vec::new(),
                ..self
            };
        }
        self
    }

    /// `baseline = "skip"`: nothing ran.
    pub(super) fn skipped() -> BaselineFacts {
        BaselineFacts::new(CheckResult::Skipped, None, None)
    }

    /// The facts of a recorded baseline, to record again for an instance
    /// that reuses it.
    pub(super) fn recorded(baseline: &crate::state::Baseline) -> BaselineFacts {
        BaselineFacts {
            result: baseline.result,
            inventory: baseline.inventory.clone(),
            reason: baseline.reason.clone(),
            timed_out: baseline.timed_out.clone(),
            canary: baseline.canary.clone(),
            twins: baseline.twins.clone(),
        }
    }

    /// The `baseline` event: under `key` (none for a skipped baseline),
    /// reused from `reused_from` or run by this attempt.
    pub(super) fn into_event(
        self,
        key: Option<String>,
        reused_from: Option<BaselineOrigin>,
    ) -> Event {
        Event::Baseline(BaselineRecord {
            result: self.result,
            inventory: self.inventory,
            reason: self.reason,
            timed_out: self.timed_out,
            canary: self.canary,
            twins: self.twins,
            key,
            reused_from,
        })
    }
}

/// What the `acceptance` event records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AcceptanceFacts {
    pub(super) result: CheckResult,
    pub(super) verdict: Option<TestVerdict>,
    pub(super) canary: Option<CanaryCheck>,
    pub(super) twins: Option<TwinCheck>,
    /// The results' anomalies and the twins' evidence, as signals.
    pub(super) integrity: Vec<Signal>,
    /// Why the tests did not run, when the build or the runner failed
    /// before reporting them.
    pub(super) harness: Option<HarnessOutput>,
}

impl AcceptanceFacts {
    pub(super) fn into_event(self) -> Event {
        Event::Acceptance(AcceptanceRecord {
            result: self.result,
            verdict: self.verdict,
            canary: self.canary,
            twins: self.twins,
            integrity: self.integrity,
            cause: self.harness.map(|h| h.cause),
        })
    }
}

/// The baseline's result, its test inventory and why it is unusable, from
/// its run. A broken harness (the runner could not run, wrote no results,
/// listed nothing) is `error`. With per-test results the listing (or, for
/// a runner that cannot list, the results) is the inventory: a test that
/// fails, times out or does not report makes a valid baseline; no failing
/// test, or no test at all, makes it "passed" (nothing to fix), with the
/// reason. Hidden tests that do not collect or build take their inventory
/// from the oracle or the hidden files, with a note that says so.
pub(super) fn baseline_of(run: &CheckRun) -> BaselineFacts {
    with_canaries(run, baseline_facts(run))
}

/// `facts` with what the run's canaries and twins said, when it planted
/// any and its harness ran.
fn with_canaries(run: &CheckRun, mut facts: BaselineFacts) -> BaselineFacts {
    if run.canaries_asked && facts.result != CheckResult::Error {
        facts.canary = Some(baseline_canaries(&run.canaries, &run.unplanted));
    }
    if run.twins_asked && facts.result != CheckResult::Error {
        let real = run
            .results
            .as_ref()
            .map(|r| r.tests.clone())
            .unwrap_or_default();
        facts.twins = Some(baseline_twins(
            &run.twins,
            &real,
            &run.refused,
            run.twins_off.clone(),
        ));
    }
    facts
}

fn baseline_facts(run: &CheckRun) -> BaselineFacts {
    let facts = BaselineFacts::new;
    if let Some(why) = &run.harness {
        return facts(CheckResult::Error, None, Some(why.clone()));
    }
    let Some(results) = &run.results else {
        let result = if run.exit_passed() {
            CheckResult::Passed
        } else {
            CheckResult::Failed
        };
        return facts(result, None, None);
    };
    let note = run.note.as_deref();
    let with_note = |why: String| match note {
        Some(note) => format!("{why} ({note})"),
        None => why,
    };
    let listed = run.listed.clone().unwrap_or_default();
    let made = match &run.fallback {
        Some((_, names)) if names.is_empty() && listed.is_empty() => {
            let why = run
                .uncollectable
                .as_deref()
                .unwrap_or("the tests do not build");
            return facts(
                CheckResult::Failed,
                None,
                Some(format!(
                    "{why} and the hidden files define no test this runner can read: every test of the acceptance run must pass"
                )),
            );
        }
        Some((source, names)) => {
            let mut all = listed;
            all.extend(names.iter().cloned());
            Inventory::from_listing(&all, results, Some(*source))
        }
        None if run.listed.is_some() => Inventory::from_listing(&listed, results, None),
        None => Inventory::from_baseline(results),
    };
    match made {
        Ok(inventory) => {
            let reason = inventory.from.map(|source| {
                format!(
                    "baseline not collectable: inventory from {} ({} tests)",
                    source.describe(),
                    inventory.fail_to_pass.len() + inventory.pass_to_pass.len()
                )
            });
            let timed_out = inventory
                .fail_to_pass
                .iter()
                .filter(|name| results.timed_out.contains(*name))
                .cloned()
                .collect();
            BaselineFacts {
                result: CheckResult::Failed,
                inventory: Some(inventory),
                reason,
                timed_out,
                canary: None,
                twins: None,
            }
        }
        Err(why @ (InventoryError::Empty | InventoryError::NoFailToPass)) => {
            facts(CheckResult::Passed, None, Some(with_note(why.to_string())))
        }
    }
}

/// The baseline of a job whose inventory is given (`[acceptance]
/// fail_to_pass` / `pass_to_pass`, SWE-bench's lists): the run must
/// agree — each fail-to-pass test failing (one the run did not report,
/// because its file did not collect, counts as failing), each
/// pass-to-pass test passing — else the baseline is `passed` (the job is
/// `invalid_baseline`) with the reason naming the test. Declared names
/// map through the language's tooling and resolve to the name the run
/// listed or reported (equal, or a dotted suffix of it).
pub(super) fn baseline_declared(
    run: &CheckRun,
    acceptance: &Acceptance,
    tooling: Option<&dyn Tooling>,
) -> BaselineFacts {
    with_canaries(run, declared_facts(run, acceptance, tooling))
}

fn declared_facts(
    run: &CheckRun,
    acceptance: &Acceptance,
    tooling: Option<&dyn Tooling>,
) -> BaselineFacts {
    let facts = BaselineFacts::new;
    if let Some(why) = &run.harness {
        return facts(CheckResult::Error, None, Some(why.clone()));
    }
    let empty = crate::verdict::TestResults::default();
    let results = run.results.as_ref().unwrap_or(&empty);
    let known: Vec<&String> = run
        .listed
        .iter()
        .flatten()
        .chain(results.tests.keys())
        .collect();
    let resolve = |declared: &String| -> String {
        let mapped = tooling.map_or_else(|| declared.clone(), |t| t.declared_name(declared));
        if known.iter().any(|k| **k == mapped) {
            return mapped;
        }
        let mut matches = known.iter().filter(|k| names_match(&mapped, k));
        match (matches.next(), matches.next()) {
            (Some(only), None) => (*only).clone(),
            _ => mapped,
        }
    };
    let mut inventory = Inventory::default();
    let mut disagree = Vec::new();
    for declared in &acceptance.fail_to_pass {
        let name = resolve(declared);
        if results.tests.get(&name) == Some(&TestOutcome::Passed) {
            disagree.push(format!("fail_to_pass test {declared} already passes"));
        }
        inventory.fail_to_pass.push(name);
    }
    for declared in &acceptance.pass_to_pass {
        let name = resolve(declared);
        match results.tests.get(&name) {
            Some(TestOutcome::Passed) => {}
            Some(_) => disagree.push(format!("pass_to_pass test {declared} fails")),
            None => disagree.push(format!("pass_to_pass test {declared} is not reported")),
        }
        inventory.pass_to_pass.push(name);
    }
    if !disagree.is_empty() {
        let shown: Vec<&str> = disagree.iter().take(5).map(String::as_str).collect();
        let more = disagree.len().saturating_sub(shown.len());
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        return facts(
            CheckResult::Passed,
            None,
            Some(format!(
                "the pristine source disagrees with the declared inventory: {}{tail}",
                shown.join("; ")
            )),
        );
    }
    inventory.fail_to_pass.sort();
    inventory.pass_to_pass.sort();
    let timed_out = inventory
        .fail_to_pass
        .iter()
        .filter(|name| results.timed_out.contains(*name))
        .cloned()
        .collect();
    BaselineFacts {
        result: CheckResult::Failed,
        inventory: Some(inventory),
        reason: None,
        timed_out,
        canary: None,
        twins: None,
    }
}

/// The acceptance result, its per-test verdict (none for `exit`), its
/// canaries and the anomalies of its results.
pub(super) fn acceptance_of(
    run: &CheckRun,
    inventory: Option<&Inventory>,
    lang: Option<&dyn Language>,
) -> AcceptanceFacts {
    let (result, verdict) = verdict_of(run, inventory, lang);
    let mut integrity: Vec<Signal> = run
        .anomalies
        .iter()
        .map(|line| {
            let (subject, evidence) = line.split_once(": ").unwrap_or(("results", line));
            Signal::new(SignalKind::ResultAnomaly, subject, evidence)
        })
        .collect();
    let twins = run.twins_asked.then(|| {
        let real = run
            .results
            .as_ref()
            .map(|r| r.tests.clone())
            .unwrap_or_default();
        let (check, signals) = acceptance_twins(&run.twins, &real);
        integrity.extend(signals);
        check
    });
    let missing = verdict.as_ref().is_some_and(|v| !v.missing.is_empty());
    let harness = (result != CheckResult::Passed)
        .then(|| lang.and_then(|lang| harness_output(run, lang, missing)))
        .flatten();
    AcceptanceFacts {
        result,
        verdict,
        canary: run
            .canaries_asked
            .then(|| acceptance_canaries(&run.canaries)),
        twins,
        integrity,
        harness,
    }
}

fn verdict_of(
    run: &CheckRun,
    inventory: Option<&Inventory>,
    lang: Option<&dyn Language>,
) -> (CheckResult, Option<TestVerdict>) {
    let Some(results) = &run.results else {
        let result = if run.exit_passed() {
            CheckResult::Passed
        } else {
            CheckResult::Failed
        };
        return (result, None);
    };
    let function_of = |name: &str| match lang {
        Some(lang) => lang.function_of(name).to_string(),
        None => name.to_string(),
    };
    let verdict = match inventory {
        Some(inventory) if inventory.from.is_none() => {
            // Names the baseline could not resolve (a declared test whose
            // file did not collect there) resolve against this run's.
            let resolve = |name: &String| {
                if results.tests.contains_key(name) {
                    return name.clone();
                }
                let mut found = results.tests.keys().filter(|k| names_match(name, k));
                match (found.next(), found.next()) {
                    (Some(only), None) => only.clone(),
                    _ => name.clone(),
                }
            };
            let resolved = Inventory {
                fail_to_pass: inventory.fail_to_pass.iter().map(resolve).collect(),
                pass_to_pass: inventory.pass_to_pass.iter().map(resolve).collect(),
                from: None,
                flaky: Vec::new(),
            };
            let mut verdict = judge(&resolved, results, &function_of);
            // Report the inventory's own names.
            let back = |list: &mut Vec<String>| {
                for name in list.iter_mut() {
                    if let Some(at) = resolved.names().position(|r| r == name) {
                        let original = inventory.names().nth(at).cloned();
                        *name = original.unwrap_or_else(|| name.clone());
                    }
                }
            };
            back(&mut verdict.failing);
            back(&mut verdict.missing);
            back(&mut verdict.timed_out);
            verdict
        }
        Some(inventory) => judge(inventory, results, &function_of),
        None => judge_all(results, run.listed.as_deref()),
    };
    let result = if verdict.passed() {
        CheckResult::Passed
    } else {
        CheckResult::Failed
    };
    (result, Some(verdict))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{InventorySource, TestResults};

    fn declared(f2p: &[&str], p2p: &[&str]) -> Acceptance {
        Acceptance {
            dir: "/a".into(),
            command: vec!["python3".into(), "-m".into(), "pytest".into()],
            baseline: crate::manifest::Baseline::MustFail,
            results: Some(crate::manifest::ResultsFormat::Junit("r.xml".into())),
            test_timeout: None,
            fail_to_pass: f2p.iter().map(|s| s.to_string()).collect(),
            pass_to_pass: p2p.iter().map(|s| s.to_string()).collect(),
            flaky: Vec::new(),
            canary: true,
            twins: true,
            plugins: Vec::new(),
            strict_integrity: false,
        }
    }

    #[test]
    fn a_declared_inventory_must_agree_with_the_baseline() {
        let python = crate::lang::tooling("python");
        let run = CheckRun {
            results: Some(results(&[
                ("tests.test_a::test_fix", TestOutcome::Failed),
                ("tests.test_a::test_old", TestOutcome::Passed),
                ("pkg.tests.T::test_dj", TestOutcome::Failed),
            ])),
            listed: Some(vec![]),
            ..CheckRun::default()
        };
        let ok = declared(
            &[
                "tests/test_a.py::test_fix",
                "test_dj (tests.T)",
                "tests/test_new.py::test_n",
            ],
            &["tests/test_a.py::test_old"],
        );
        let facts = baseline_declared(&run, &ok, python);
        assert_eq!(facts.result, CheckResult::Failed);
        let inventory = facts.inventory.unwrap();
        assert_eq!(
            inventory.fail_to_pass,
            [
                "pkg.tests.T::test_dj",
                "tests.test_a::test_fix",
                "tests.test_new::test_n"
            ]
        );
        assert_eq!(inventory.pass_to_pass, ["tests.test_a::test_old"]);
        let passes = declared(&["tests/test_a.py::test_old"], &[]);
        let facts = baseline_declared(&run, &passes, python);
        assert_eq!(facts.result, CheckResult::Passed);
        assert!(
            facts
                .reason
                .unwrap()
                .contains("tests/test_a.py::test_old already passes")
        );
        let broken = declared(
            &["tests/test_a.py::test_fix"],
            &["tests/test_a.py::test_gone"],
        );
        let reason = baseline_declared(&run, &broken, python).reason.unwrap();
        assert!(reason.contains("pass_to_pass test tests/test_a.py::test_gone is not reported"));
    }

    fn results(pairs: &[(&str, TestOutcome)]) -> TestResults {
        TestResults {
            tests: pairs.iter().map(|(n, o)| (n.to_string(), *o)).collect(),
            complete: true,
            ..TestResults::default()
        }
    }

    #[test]
    fn a_broken_harness_is_an_error_with_its_cause() {
        let run = CheckRun {
            harness: Some(
                "pytest could not list the tests (exit 1); stderr: No module named pytest".into(),
            ),
            results: Some(TestResults::default()),
            ..CheckRun::default()
        };
        let facts = baseline_of(&run);
        assert_eq!(facts.result, CheckResult::Error);
        assert!(facts.reason.unwrap().contains("No module named pytest"));
    }

    #[test]
    fn a_listed_test_that_hangs_is_fail_to_pass_and_timed_out() {
        let mut r = results(&[("t::ok", TestOutcome::Passed)]);
        r.time_out("t::hangs");
        let run = CheckRun {
            results: Some(r),
            listed: Some(vec!["t::ok".into(), "t::hangs".into(), "t::silent".into()]),
            ..CheckRun::default()
        };
        let facts = baseline_of(&run);
        assert_eq!(facts.result, CheckResult::Failed);
        let inventory = facts.inventory.unwrap();
        assert_eq!(inventory.fail_to_pass, ["t::hangs", "t::silent"]);
        assert_eq!(inventory.pass_to_pass, ["t::ok"]);
        assert_eq!(facts.timed_out, ["t::hangs"]);
    }

    #[test]
    fn an_uncollectable_baseline_takes_the_fallback_inventory_with_a_note() {
        let run = CheckRun {
            results: Some(TestResults::default()),
            listed: Some(Vec::new()),
            uncollectable: Some("the hidden tests do not collect".into()),
            fallback: Some((
                InventorySource::Oracle,
                vec!["tests.t::a".into(), "tests.t::b".into()],
            )),
            ..CheckRun::default()
        };
        let facts = baseline_of(&run);
        let inventory = facts.inventory.unwrap();
        assert_eq!(inventory.fail_to_pass.len(), 2);
        assert_eq!(inventory.from, Some(InventorySource::Oracle));
        assert_eq!(
            facts.reason.as_deref(),
            Some("baseline not collectable: inventory from the oracle (2 tests)")
        );
        // Nothing found anywhere: no inventory, and the reason says why.
        let none = CheckRun {
            fallback: Some((InventorySource::HiddenFiles, Vec::new())),
            ..run
        };
        let facts = baseline_of(&none);
        assert_eq!(facts.result, CheckResult::Failed);
        assert!(facts.inventory.is_none());
    }
}
