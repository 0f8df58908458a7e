//! Reports from data directories: read each log, fold it, write the files.

use std::path::PathBuf;

use super::error::ReportError;
use super::from_log::{Artifacts, LogSource, report_from_logs};
use super::model::Report;
use crate::lifecycle::DataDir;
use crate::log::{LogError, now_ms, read_snapshot};
use crate::state::Details;

/// Failures building reports from data directories.
#[derive(Debug, thiserror::Error)]
pub enum ReportBuildError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Write(#[from] ReportError),
}

/// One data dir's log, folded once as it is read (its records are not
/// kept): what the report and the exports of a run both read.
#[derive(Debug)]
pub struct FoldedLog {
    /// The log's path, as the report names its sources.
    pub label: String,
    /// The data dir, whose `runs/` holds the attempts' artifacts.
    pub data: PathBuf,
    pub details: Details,
}

/// Reads and folds the log of each of `data_dirs`, in order.
pub fn fold_logs(data_dirs: &[PathBuf]) -> Result<Vec<FoldedLog>, ReportBuildError> {
    data_dirs
        .iter()
        .map(|data| {
            let log = DataDir::new(data).log();
            Ok(FoldedLog {
                label: log.display().to_string(),
                data: data.clone(),
                details: read_snapshot::<Details>(&log)?.state,
            })
        })
        .collect()
}

/// One report of `logs` (shards merge), covering only the instances in
/// `jobs` when given (what a batch planned), whatever else the logs hold.
pub fn report_of(logs: &[FoldedLog], jobs: Option<&[String]>) -> Report {
    let sources: Vec<LogSource<'_>> = logs
        .iter()
        .map(|log| LogSource {
            path: log.label.clone(),
            details: &log.details,
        })
        .collect();
    let mut report = report_from_logs(&sources, now_ms(), &BesideLogs { logs });
    if let Some(jobs) = jobs {
        let jobs: std::collections::HashSet<&str> = jobs.iter().map(String::as_str).collect();
        report.jobs.retain(|j| jobs.contains(j.instance.as_str()));
    }
    report
}

/// The artifacts under each data dir's `runs/`.
struct BesideLogs<'a> {
    logs: &'a [FoldedLog],
}

impl BesideLogs<'_> {
    fn path(&self, source: &str, job: &str, attempt: u32, file: &str) -> Option<PathBuf> {
        let log = self.logs.iter().find(|log| log.label == source)?;
        Some(DataDir::new(&log.data).runs(job, attempt).join(file))
    }
}

impl Artifacts for BesideLogs<'_> {
    fn read(&self, source: &str, job: &str, attempt: u32, file: &str) -> Option<String> {
        std::fs::read_to_string(self.path(source, job, attempt, file)?).ok()
    }

    fn exists(&self, source: &str, job: &str, attempt: u32, file: &str) -> bool {
        self.path(source, job, attempt, file)
            .is_some_and(|p| p.is_file())
    }
}
