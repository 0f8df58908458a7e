//! A check that runs its tests in one command and reads their JUnit file:
//! the tests listed first where the language can, then the acceptance
//! command once, then the file read (`results = "junit:..."`).

use std::fs;
use std::path::Path;

use super::checks::{
    CheckCommand, CheckError, CheckLog, CheckRun, CheckSpec, RESULTS_OUTPUT_CAP, stderr_tail,
    tree_name, with_tail,
};
use super::commands::AttemptCommands;
use crate::beneath::Dir;
use crate::cancel::CancelToken;
use crate::lang::Language;
use crate::verdict::{TestResults, parse_junit};

/// Bytes of a JUnit file read at most.
const MAX_JUNIT: u64 = crate::verdict::MAX_JUNIT_BYTES as u64;

/// A JUnit run: the tests listed first where the language can, then the
/// acceptance command once, then its JUnit file read. A run killed at its
/// timeout fails every expected test it did not report.
pub(super) fn one_run(
    spec: &CheckSpec<'_>,
    rel: &str,
    lang: Option<&dyn Language>,
    commands: &AttemptCommands,
    decoys: &[String],
    report: &mut CheckLog,
    cancel: &CancelToken,
) -> Result<CheckRun, CheckError> {
    let mut run = CheckRun::default();
    let dir = &commands.dir;
    // The baseline lists (it is the inventory); an acceptance run lists
    // only when there is no inventory to run.
    let listing = lang.filter(|l| l.lists() && (spec.is_baseline() || spec.inventory.is_none()));
    if let Some(lang) = listing {
        let argv = lang.list_argv(&spec.acceptance.command);
        let outcome = commands.run_argv_capped(&argv, RESULTS_OUTPUT_CAP, cancel)?;
        report.command(&argv, &outcome);
        let read = lang.read_listing(&outcome.stdout.to_text(), outcome.exit_code);
        let stop = outcome.cancelled;
        let timed_out = outcome.timed_out;
        let stderr = stderr_tail(&outcome);
        run.commands.push(CheckCommand::plain(outcome));
        if stop {
            return Ok(run);
        }
        match read {
            Ok(listing) => {
                let names: Vec<String> = listing
                    .tests
                    .iter()
                    .map(|t| lang.inventory_name("", t))
                    .collect();
                if !listing.uncollectable.is_empty() {
                    run.uncollectable_files.clone_from(&listing.uncollectable);
                    run.uncollectable = Some(format!(
                        "the hidden tests do not collect on the {}: {}",
                        tree_name(spec),
                        listing.uncollectable.join(", ")
                    ));
                } else if names.is_empty() {
                    run.harness = Some(with_tail("the test runner listed no test at all", &stderr));
                }
                run.listed = Some(names);
            }
            Err(why) if timed_out => run.add_note(format!("{why}: the listing timed out")),
            Err(why) => run.harness = Some(with_tail(&why.to_string(), &stderr)),
        }
        // Nothing would run: the verdict is already known.
        if run.harness.is_some() || run.listed.as_ref().is_some_and(Vec::is_empty) {
            run.results = Some(TestResults::default());
            return Ok(run);
        }
    }
    // A file left by the patch must not stand in for the run's.
    let _ = fs::remove_file(dir.join(rel));
    let outcome = commands.run_argv(&spec.acceptance.command, cancel)?;
    report.command(&spec.acceptance.command, &outcome);
    let (timed_out, exit) = (outcome.timed_out, outcome.exit_code);
    let stderr = stderr_tail(&outcome);
    run.commands.push(CheckCommand::plain(outcome));
    let mut results = match read_junit(dir, rel) {
        Ok(mut results) if results.complete => {
            run.anomalies.append(&mut results.anomalies);
            results
        }
        Ok(_) => {
            run.add_note(format!(
                "{rel} ends before its last element closes: its tests are missing"
            ));
            TestResults::default()
        }
        Err(why) => {
            if timed_out {
                run.add_note(format!("{why}: the run timed out"));
            } else if run.uncollectable.is_none() {
                // Exit 1 and no file: `No module named pytest`, say.
                let what = match exit {
                    Some(0) => "the test runner wrote no results file".to_string(),
                    _ => format!(
                        "the test runner could not run (exit {}) and wrote no results file",
                        exit.map_or_else(|| "by signal".to_string(), |c| c.to_string())
                    ),
                };
                run.harness = Some(with_tail(&format!("{what} ({why})"), &stderr));
            }
            run.add_note(why.to_string());
            TestResults::default()
        }
    };
    if timed_out {
        // Every test the run was expected to report and did not.
        let mut expected: Vec<String> = match (&run.listed, spec.inventory) {
            (Some(listed), _) => listed.clone(),
            (None, Some(inventory)) => inventory.names().cloned().collect(),
            (None, None) => Vec::new(),
        };
        expected.extend(decoys.iter().cloned());
        for name in expected {
            if !results.tests.contains_key(&name) {
                results.time_out(&name);
            }
        }
        run.add_note(format!(
            "the run was killed at its timeout ({})",
            crate::protocol::units::format_duration(spec.manifest.limits.command_timeout)
        ));
    }
    // A runner that cannot list (Jest) reports nothing of a suite that
    // fails while it is collected: at the baseline, that is hidden tests
    // that do not collect, as a listing would have said.
    if spec.is_baseline()
        && results.tests.is_empty()
        && run.uncollectable.is_none()
        && run.harness.is_none()
        && let Some(lang) = lang.filter(|l| !l.lists())
        && let Some(found) = (run.commands.last())
            .and_then(|last| super::harness_output::first_error_in(&last.outcome, lang))
    {
        run.uncollectable = Some(format!(
            "the hidden tests do not collect on the {}: {}",
            tree_name(spec),
            found.named
        ));
    }
    run.results = Some(results);
    Ok(run)
}

pub(super) fn read_junit(dir: &Path, rel: &str) -> Result<TestResults, JunitFileError> {
    let root = Dir::open(dir).map_err(JunitFileError::Copy)?;
    let (bytes, _) = root
        .read_capped(Path::new(rel), MAX_JUNIT)
        .map_err(|source| JunitFileError::Unusable {
            rel: rel.to_string(),
            source,
        })?;
    let text = String::from_utf8(bytes).map_err(|_| JunitFileError::NotUtf8(rel.to_string()))?;
    parse_junit(&text).map_err(|source| JunitFileError::Results {
        rel: rel.to_string(),
        source,
    })
}

/// Why a run's JUnit file says nothing.
#[derive(Debug, thiserror::Error)]
pub(super) enum JunitFileError {
    #[error("cannot open the check copy: {0}")]
    Copy(#[source] std::io::Error),
    #[error("no usable JUnit file {rel}: {source}")]
    Unusable {
        rel: String,
        #[source]
        source: crate::beneath::Error,
    },
    #[error("{0} is not UTF-8")]
    NotUtf8(String),
    #[error("{rel}: {source}")]
    Results {
        rel: String,
        #[source]
        source: crate::verdict::ResultsError,
    },
}
