//! A job's page as JSON: its row, the report model's whole row (cause,
//! per-test verdict, timeline with the model's text whole, patch, time,
//! cost, integrity, every attempt), the job's details as the blocks
//! `report.html` draws (the task, each failing test with its own output,
//! links to its logs, the trajectory, the patch), and the files of every
//! attempt with the links that serve them.

use serde::Serialize;

use super::artifacts::Listed;
use super::model::Run;
use super::rows::{JobRow, job_row};
use crate::report::{JobDetail, JobResult, job_detail};

/// One job's page.
#[derive(Debug, Serialize)]
pub(super) struct JobPage<'a> {
    pub version: u64,
    pub run: usize,
    pub run_label: &'a str,
    pub row: JobRow<'a>,
    /// The file the task prompt was read from, if it was.
    pub prompt_file: Option<String>,
    /// The report model's row, with its artifacts.
    pub result: &'a JobResult,
    /// The files of each attempt, newest first.
    pub attempts: Vec<AttemptFiles>,
    /// The job's details as `report.html` draws them, by the same
    /// renderer, with the model's text whole and links served here.
    pub detail: JobDetail,
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
    JobPage {
        version,
        run: index,
        run_label: &run.label,
        row: job_row(index, run, result, now_ms),
        prompt_file: manifest
            .and_then(|m| m.prompt_file.as_ref())
            .map(|p| p.display().to_string()),
        result,
        attempts,
        detail: job_detail(result, &format!("/data/{index}/")),
    }
}
