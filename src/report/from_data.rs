//! Reports from data directories: read each log, fold it, write the files.

use std::path::{Path, PathBuf};

use super::error::ReportError;
use super::from_log::{Artifacts, LogSource, report_from_logs};
use super::model::Report;
use super::write::write_reports;
use crate::lifecycle::DataDir;
use crate::log::{LogError, now_ms, read_records};
use crate::protocol::Record;

/// Failures building reports from data directories.
#[derive(Debug, thiserror::Error)]
pub enum ReportBuildError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Write(#[from] ReportError),
}

/// Reads the logs of `data_dirs` and derives one report (shards merge).
pub fn report_for(data_dirs: &[PathBuf]) -> Result<Report, ReportBuildError> {
    let mut logs: Vec<(String, PathBuf, Vec<Record>)> = Vec::new();
    for data in data_dirs {
        let dir = DataDir::new(data);
        let (records, _torn) = read_records(&dir.log())?;
        logs.push((dir.log().display().to_string(), data.clone(), records));
    }
    let sources: Vec<LogSource<'_>> = logs
        .iter()
        .map(|(path, _, records)| LogSource {
            path: path.clone(),
            records,
        })
        .collect();
    let artifacts = BesideLogs { logs: &logs };
    Ok(report_from_logs(&sources, now_ms(), &artifacts))
}

/// The artifacts under each data dir's `runs/`.
struct BesideLogs<'a> {
    logs: &'a [(String, PathBuf, Vec<Record>)],
}

impl BesideLogs<'_> {
    fn path(&self, source: &str, job: &str, attempt: u32, file: &str) -> Option<PathBuf> {
        let data = self
            .logs
            .iter()
            .find(|(path, _, _)| path == source)
            .map(|(_, data, _)| data)?;
        Some(DataDir::new(data).runs(job, attempt).join(file))
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

/// Derives the report of `data_dirs` and writes its files into `out`.
pub fn write_report_for(
    data_dirs: &[PathBuf],
    out: &Path,
) -> Result<(Report, Vec<PathBuf>), ReportBuildError> {
    let report = report_for(data_dirs)?;
    let files = write_reports(&report, out)?;
    Ok((report, files))
}

/// As [`write_report_for`], covering only the instances in `jobs` (what a
/// batch planned), whatever else the log holds.
pub fn write_report_of_jobs(
    data_dirs: &[PathBuf],
    jobs: &[String],
    out: &Path,
) -> Result<(Report, Vec<PathBuf>), ReportBuildError> {
    let mut report = report_for(data_dirs)?;
    let jobs: std::collections::HashSet<&str> = jobs.iter().map(String::as_str).collect();
    report.jobs.retain(|j| jobs.contains(j.instance.as_str()));
    let files = write_reports(&report, out)?;
    Ok((report, files))
}
