//! A job's page as JSON: its row, the task prompt from the manifest
//! snapshot the log holds, the report model's whole row (cause, per-test
//! verdict, timeline with a full trace's excerpts, patch, time, cost,
//! integrity, every attempt), each failing or missing test with the
//! output excerpt its attempt kept (`tests/excerpts.json`; or none), and
//! the files
//! of every attempt with the links that serve them.

use serde::Serialize;

use super::artifacts::{Excerpt, Listed, attempt_dir, href};
use super::model::Run;
use super::rows::{JobRow, job_row};
use crate::report::{JobDetail, JobResult, job_detail};
use crate::state;

/// One job's page.
#[derive(Debug, Serialize)]
pub(super) struct JobPage<'a> {
    pub version: u64,
    pub run: usize,
    pub run_label: &'a str,
    pub row: JobRow<'a>,
    /// The task as the model was given it, from the manifest snapshot
    /// (`None` for a bare lifecycle task).
    pub prompt: Option<&'a str>,
    pub prompt_file: Option<String>,
    /// The baseline in the words every view uses.
    pub baseline: Option<&'static str>,
    /// The report model's row, with its artifacts.
    pub result: &'a JobResult,
    /// The attempt whose tests are shown.
    pub tests_attempt: Option<u32>,
    pub failing: Vec<FailingTest>,
    /// The files of each attempt, newest first.
    pub attempts: Vec<AttemptFiles>,
    /// Where the whole last patch is served.
    pub patch_href: Option<String>,
    /// The job's details as `report.html` draws them, by the same
    /// renderer, with the model's text whole and links served here.
    pub detail: JobDetail,
}

/// A test that did not pass, and what its run printed.
#[derive(Debug, Serialize)]
pub(super) struct FailingTest {
    pub name: String,
    /// `failing` (reported, not passed) or `missing` (not reported).
    pub status: &'static str,
    /// Its own output, when the attempt kept an excerpt of it.
    pub excerpt: Option<Excerpt>,
    pub href: Option<String>,
}

/// What one attempt left under `runs/`.
#[derive(Debug, Serialize)]
pub(super) struct AttemptFiles {
    pub attempt: u32,
    pub files: Vec<Listed>,
}

/// The page of `result`, a job of data dir `index`; `result` is the report
/// row with its artifacts.
pub(super) fn job_page<'a>(
    version: u64,
    index: usize,
    run: &'a Run,
    result: &'a JobResult,
    now_ms: u64,
) -> JobPage<'a> {
    let job = run.details.state.job(&result.instance);
    let manifest = job
        .and_then(|j| j.manifest.as_deref())
        .and_then(|snapshot| snapshot.manifest());
    let tests_attempt = job.and_then(|j| j.attempt()).map(|a| a.number);
    let failing = tests_attempt.map_or_else(Vec::new, |n| failing_tests(index, result, n));
    let mut numbers: Vec<u32> = result.attempt_history.iter().map(|a| a.attempt).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let attempts = numbers
        .into_iter()
        .rev()
        .map(|n| AttemptFiles {
            attempt: n,
            files: run.artifacts.listing(index, &result.instance, n),
        })
        .collect();
    let patch_href = job
        .and_then(|j| j.last_patch())
        .map(|(n, _)| href(index, &attempt_dir(&result.instance, n).join("patch.diff")));
    JobPage {
        version,
        run: index,
        run_label: &run.label,
        row: job_row(index, run, result, now_ms),
        prompt: manifest.map(|m| m.prompt.as_str()),
        prompt_file: manifest
            .and_then(|m| m.prompt_file.as_ref())
            .map(|p| p.display().to_string()),
        baseline: job
            .and_then(|j| j.baseline.as_ref())
            .map(|b| state::baseline_wording(b.result)),
        result,
        tests_attempt,
        failing,
        attempts,
        patch_href,
        detail: job_detail(result, &format!("/data/{index}/")),
    }
}

/// The failing, then the missing tests of the last acceptance run (the
/// names the report keeps), each with its excerpt where attempt `n` kept
/// one: the report row read them from its `tests/excerpts.json`.
fn failing_tests(index: usize, result: &JobResult, n: u32) -> Vec<FailingTest> {
    let kept = |name: &str| {
        let excerpts = result.test_excerpts.as_ref()?;
        let text = excerpts
            .tests
            .iter()
            .find(|t| t.name == name)?
            .excerpt
            .clone()?;
        Some(Excerpt {
            bytes: text.len() as u64,
            cut: false,
            text,
        })
    };
    let json = href(
        index,
        &attempt_dir(&result.instance, n).join(crate::verdict::EXCERPTS_FILE),
    );
    let tests = &result.tests;
    tests
        .failing_tests
        .iter()
        .map(|name| (name, "failing"))
        .chain(tests.missing_tests.iter().map(|name| (name, "missing")))
        .map(|(name, status)| {
            let excerpt = kept(name);
            FailingTest {
                name: name.clone(),
                status,
                href: excerpt.is_some().then(|| json.clone()),
                excerpt,
            }
        })
        .collect()
}
