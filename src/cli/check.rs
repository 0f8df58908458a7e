//! `check`: validate tasks with their oracles, without a model.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::batch::{default_workers, install_interrupt};
use super::exit::Completion;
use crate::batch::{BatchOptions, ProgressMode};
use crate::check::{TaskCheck, TaskVerdict, check_tasks};
use crate::manifest::expand_jobs;

/// Version of the `check --json` document.
pub const CHECK_SCHEMA_VERSION: u32 = 2;

pub fn check(
    jobs: &[PathBuf],
    runs: u32,
    parallel: Option<u32>,
    data: &Path,
    json: bool,
    replace: bool,
) -> anyhow::Result<Completion> {
    let files = expand_jobs(jobs)?;
    let manifests = super::validate::load_all(&files)?;
    let options = BatchOptions {
        workers: parallel.map_or_else(default_workers, |n| n as usize),
        rerun: None,
        replace,
        report_dir: Some(data.join("report")),
        progress: if json {
            ProgressMode::Quiet
        } else {
            ProgressMode::detect()
        },
        interrupt: install_interrupt(data),
        keep: crate::lifecycle::Keep::Failed,
        max_cost_usd: None,
        strict_integrity: false,
        // A check shows that baselines fail stably: each run runs its own.
        fresh_baselines: true,
    };
    let checks = check_tasks(data, &manifests, runs, &options).context("check failed")?;
    if json {
        let doc = serde_json::json!({
            "schema_version": CHECK_SCHEMA_VERSION,
            "runs": runs,
            "valid": checks.iter().filter(|c| c.judgement.verdict == TaskVerdict::Valid).count(),
            "jobs": checks,
        });
        outln!("{}", crate::escape::to_json_pretty(&doc)?);
    } else {
        out!("{}", render_table(&checks));
    }
    Ok(if options.interrupt.is_cancelled() {
        Completion::Interrupted
    } else if checks
        .iter()
        .all(|c| c.judgement.verdict == TaskVerdict::Valid)
    {
        Completion::Success
    } else {
        Completion::JobsFailed
    })
}

/// The table, then one line per job that is not valid, saying why.
fn render_table(checks: &[TaskCheck]) -> String {
    let headers = ["JOB", "BASELINE", "ORACLE", "FLAKY TESTS", "VERDICT"];
    let rows: Vec<[String; 5]> = checks
        .iter()
        .map(|c| {
            let j = &c.judgement;
            // Test names and reasons come from the job's commands: escaped
            // before the columns are measured.
            let shown = |text: &str| crate::escape::line(text).into_owned();
            [
                shown(&c.job),
                format!("fails {}/{}", j.baseline.ok, j.baseline.of),
                if c.has_oracle {
                    format!("accepted {}/{}", j.oracle.ok, j.oracle.of)
                } else {
                    "-".into()
                },
                if j.flaky_tests.is_empty() {
                    "-".into()
                } else {
                    shown(&j.flaky_tests.join(", "))
                },
                j.verdict.as_str().into(),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: [&str; 5]| {
        let mut text = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            text.push_str(&format!("{cell:<width$}  "));
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(headers);
    for row in &rows {
        line(row.each_ref().map(String::as_str));
    }
    let valid = checks
        .iter()
        .filter(|c| c.judgement.verdict == TaskVerdict::Valid)
        .count();
    out.push_str(&format!(
        "{valid}/{} {} valid\n",
        checks.len(),
        crate::words::plural(checks.len(), "job")
    ));
    let signals: u64 = checks.iter().map(|c| u64::from(c.judgement.signals)).sum();
    out.push_str(&format!(
        "integrity: {} on the oracle runs\n",
        crate::words::count(signals as usize, "tamper signal")
    ));
    for c in checks {
        for note in &c.judgement.notes {
            out.push_str(&format!("{}: note: {note}\n", c.job));
        }
        if let Some(reason) = &c.judgement.reason {
            out.push_str(&format!(
                "{}: {}: {}\n",
                c.job,
                c.judgement.verdict.as_str(),
                crate::escape::line(reason)
            ));
        }
    }
    out
}
