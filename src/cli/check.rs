//! `check`: validate tasks with their oracles, without a model.

use anyhow::Context;

use super::args::CheckArgs;
use super::batch::{default_workers, install_interrupt};
use super::exit::Completion;
use crate::batch::{BatchOptions, ProgressMode};
use crate::check::{TaskCheck, TaskVerdict, check_tasks};
use crate::manifest::expand_jobs;
use crate::table::{Column, Shorten, Table, wrap};

/// Version of the `check --json` document.
pub(super) const CHECK_SCHEMA_VERSION: u32 = 2;

pub(super) fn check(args: &CheckArgs) -> anyhow::Result<Completion> {
    let CheckArgs {
        jobs,
        runs,
        parallel,
        data,
        json,
        replace,
        strict,
        waive,
        write_flaky,
    } = args;
    let (runs, json, strict) = (*runs, *json, *strict);
    let files = expand_jobs(jobs)?;
    let manifests = super::validate::load_all(&files)?;
    let options = BatchOptions {
        workers: parallel.map_or_else(default_workers, |n| n as usize),
        rerun: None,
        replace: *replace,
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
    let checks = check_tasks(data, &manifests, runs, &options, waive).context("check failed")?;
    if json {
        let doc = serde_json::json!({
            "schema_version": CHECK_SCHEMA_VERSION,
            "runs": runs,
            "valid": checks.iter().filter(|c| c.judgement.verdict == TaskVerdict::Valid).count(),
            "jobs": checks,
        });
        outln!("{}", crate::escape::to_json_pretty(&doc)?);
    } else {
        out!("{}", render_table(&checks, super::status::table_width()));
    }
    if *write_flaky {
        for check in checks
            .iter()
            .filter(|c| !c.judgement.flaky_tests.is_empty())
        {
            let Some(file) = manifests
                .iter()
                .find(|m| m.id == check.job)
                .and_then(|m| m.file())
            else {
                continue;
            };
            let flaky = &check.judgement.flaky_tests;
            if crate::check::write_flaky(file, flaky)? {
                errln!(
                    "wrote {}: [acceptance] flaky names {}",
                    file.display(),
                    crate::words::count(flaky.len(), "test")
                );
            }
        }
    }
    Ok(if options.interrupt.is_cancelled() {
        Completion::Interrupted
    } else if checks.iter().all(|c| {
        c.judgement.verdict == TaskVerdict::Valid && (!strict || c.judgement.notes.is_empty())
    }) {
        Completion::Success
    } else {
        Completion::JobsFailed
    })
}

/// The table, then one line per job that is not valid, saying why; fitted
/// to `width` when given: the flaky tests are cut after a name (header
/// `FLAKY`), then long ids end in `…`, then the flaky tests, the oracle and
/// the baseline columns go; the lines under the table are broken at spaces.
fn render_table(checks: &[TaskCheck], width: Option<usize>) -> String {
    let mut table = Table::new(vec![
        Column::new("JOB").shorten_at(2, Shorten::Middle, 20),
        Column::new("BASELINE").drop_at(5),
        Column::new("ORACLE").drop_at(4),
        Column::new("FLAKY TESTS")
            .short_header(1, "FLAKY")
            .shorten_at(1, Shorten::AtWords, 16)
            .drop_at(3),
        Column::new("VERDICT"),
    ]);
    for c in checks {
        let j = &c.judgement;
        // Test names and reasons come from the job's commands: escaped
        // before the columns are measured.
        let shown = |text: &str| crate::escape::line(text).into_owned();
        table.push([
            shown(&c.job),
            format!("fails {}/{}", j.baseline.ok, j.baseline.of),
            if c.has_oracle {
                format!("succeeded {}/{}", j.oracle.ok, j.oracle.of)
            } else {
                "-".into()
            },
            if j.flaky_tests.is_empty() {
                "-".into()
            } else {
                shown(&j.flaky_tests.join(", "))
            },
            j.verdict.as_str().into(),
        ]);
    }
    let mut out = table.render(width);
    let valid = checks
        .iter()
        .filter(|c| c.judgement.verdict == TaskVerdict::Valid)
        .count();
    let waived = checks
        .iter()
        .filter(|c| !c.judgement.waived.is_empty())
        .count();
    let mut lines = vec![
        format!(
            "{valid}/{} {} valid{}",
            checks.len(),
            crate::words::plural(checks.len(), "job"),
            if waived > 0 {
                format!(" ({waived} with waived findings)")
            } else {
                String::new()
            }
        ),
        format!(
            "integrity: {} on the oracle runs",
            crate::words::count(
                checks.iter().map(|c| c.judgement.signals as usize).sum(),
                "tamper signal"
            )
        ),
    ];
    for c in checks {
        for note in &c.judgement.notes {
            lines.push(format!("{}: note: {note}", c.job));
        }
        for waived in &c.judgement.waived {
            lines.push(format!("{}: waived: {waived}", c.job));
        }
        if let Some(reason) = &c.judgement.reason {
            lines.push(format!(
                "{}: {}: {}",
                c.job,
                c.judgement.verdict.as_str(),
                crate::escape::line(reason)
            ));
        }
    }
    for line in lines {
        match width {
            Some(width) => wrap(&line, width).into_iter().for_each(|part| {
                out.push_str(&part);
                out.push('\n');
            }),
            None => {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Count, TaskJudgement};
    use crate::table::width;

    fn check(job: &str, verdict: TaskVerdict, flaky: &[&str], reason: Option<&str>) -> TaskCheck {
        TaskCheck {
            job: job.to_string(),
            family: "rust".to_string(),
            runs: 3,
            has_oracle: true,
            judgement: TaskJudgement {
                verdict,
                baseline: Count { ok: 3, of: 3 },
                oracle: Count { ok: 3, of: 3 },
                flaky_tests: flaky.iter().map(|t| t.to_string()).collect(),
                reason: reason.map(str::to_string),
                notes: Vec::new(),
                leaks: Vec::new(),
                waived: Vec::new(),
                signals: 0,
            },
        }
    }

    #[test]
    fn the_check_table_fits_60_columns_without_splitting_a_word() {
        let checks = [
            check("rust-off_by_one", TaskVerdict::Valid, &[], None),
            check(
                "python-wrong_comparator_with_a_long_name",
                TaskVerdict::Flaky,
                &["tests::edge_case_one", "tests::edge_case_two"],
                Some(
                    "2 tests changed their result between identical runs: tests::edge_case_one, tests::edge_case_two",
                ),
            ),
        ];
        let text = render_table(&checks, Some(60));
        for line in text.lines() {
            assert!(width(line) <= 60, "{} columns: {line}", width(line));
        }
        insta::assert_snapshot!(text, @r"
        JOB                   BASELINE   ORACLE         VERDICT
        rust-off_by_one       fails 3/3  succeeded 3/3  valid
        python…h_a_long_name  fails 3/3  succeeded 3/3  flaky
        1/2 jobs valid
        integrity: 0 tamper signals on the oracle runs
        python-wrong_comparator_with_a_long_name: flaky: 2 tests
        changed their result between identical runs:
        tests::edge_case_one, tests::edge_case_two
        ");
        let whole = render_table(&checks, None);
        assert!(whole.contains("FLAKY TESTS"), "{whole}");
        assert!(
            whole.contains("tests::edge_case_one, tests::edge_case_two"),
            "{whole}"
        );
    }
}
