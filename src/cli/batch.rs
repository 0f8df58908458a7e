//! `batch` and `report`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::args::BatchArgs;
use super::exit::Completion;
use crate::batch::{BatchOptions, BatchSummary, PlanOptions, ProgressMode, Rerun, plan, run_batch};
use crate::cancel::CancelToken;
use crate::check::offline_provider;
use crate::lifecycle::DataDir;
use crate::log::read_snapshot;
use crate::manifest::{expand_jobs, load_provider_file};
use crate::report::{fold_logs, report_of, write_reports};
use crate::state::State;
use crate::status::{StatusView, render_text};
use crate::words::{count, plural};

/// A second SIGINT this soon after the first is the same interrupt: GNU
/// `timeout` signals the command and then its process group, so the batch
/// gets two at once.
const SAME_INTERRUPT: Duration = Duration::from_secs(1);

/// First Ctrl-C: set the token (the batch stops and saves state); another
/// within [`SAME_INTERRUPT`] is the same one. A later one exits at once,
/// after saying what the log in `data` holds (it is safe either way).
pub(super) fn install_interrupt(data: &Path) -> CancelToken {
    let token = CancelToken::new();
    let handler_token = token.clone();
    let log = DataDir::new(data).log();
    let mut first: Option<Instant> = None;
    let _ = ctrlc::set_handler(move || match first {
        Some(at) if at.elapsed() < SAME_INTERRUPT => {}
        Some(_) => {
            let saved = crate::escape::line(&saved_summary(&log)).into_owned();
            let _ = super::status::outln_wrapped(&format!(
                "interrupted again: quitting at once; state is saved: {saved}; run the same command again to finish"
            ));
            let _ = std::io::stdout().flush();
            std::process::exit(i32::from(super::EXIT_INTERRUPTED));
        }
        None => {
            first = Some(Instant::now());
            errln!(
                "\ninterrupted: stopping running jobs and saving state (press Ctrl-C again to quit at once)"
            );
            handler_token.cancel();
        }
    });
    token
}

/// What the log holds, for the hard exit: `events.log holds 4 jobs: 2
/// succeeded, 1 queued, 1 running (recovered by the next run)`.
fn saved_summary(log: &Path) -> String {
    let snapshot = match read_snapshot::<State>(log) {
        Ok(snapshot) => snapshot,
        Err(e) => return format!("{} (cannot be read now: {e})", log.display()),
    };
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for job in snapshot.state.jobs() {
        let state = job.lifecycle.state.as_str();
        match counts.iter_mut().find(|(s, _)| *s == state) {
            Some((_, n)) => *n += 1,
            None => counts.push((state, 1)),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(state, n)| match *state {
            "running" => format!("{n} running (recovered by the next run)"),
            _ => format!("{n} {state}"),
        })
        .collect();
    format!(
        "{} holds {}{}{}",
        log.display(),
        count(snapshot.state.jobs().len(), "job"),
        if parts.is_empty() { "" } else { ": " },
        parts.join(", ")
    )
}

pub(super) fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

pub(super) fn batch(args: BatchArgs) -> anyhow::Result<Completion> {
    let files = expand_jobs(&args.jobs)?;
    let manifests = super::validate::load_all(&files)?;
    let providers = args
        .providers
        .iter()
        .map(|p| load_provider_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    let provider_files = providers.clone();
    let plan_options = PlanOptions {
        providers,
        agents: args.agents.clone(),
        repeat: args.repeat,
        attempts: args.attempts,
        family: args.family.clone(),
        shard: args.shard,
    };
    let planned = plan(&manifests, &plan_options);
    if planned.is_empty() {
        let family_only = PlanOptions {
            family: args.family.clone(),
            ..PlanOptions::default()
        };
        match args.shard {
            // A hash partition may leave a shard empty: in a CI matrix that
            // is a success with nothing to do, not an error.
            Some(shard) if !plan(&manifests, &family_only).is_empty() => {
                let report_dir = args.report.unwrap_or_else(|| args.data.join("report"));
                // An empty log, so merging every shard's log still works.
                crate::lifecycle::Store::open(DataDir::new(&args.data))?;
                outln!(
                    "shard {}/{} has no jobs; nothing to do",
                    shard.index,
                    shard.count
                );
                let report = crate::report::Report::new(crate::log::now_ms(), Vec::new());
                crate::report::write_reports(&report, &report_dir)?;
                outln!("report: {}", report_dir.join("report.html").display());
                return Ok(Completion::Success);
            }
            _ => match &args.family {
                Some(family) if !manifests.iter().any(|m| &m.family == family) => {
                    anyhow::bail!("{}", no_such_family(family, &manifests))
                }
                _ => anyhow::bail!(
                    "no jobs to run: {} matched, none left after --family{}",
                    count(manifests.len(), "manifest"),
                    if args.shard.is_some() { "/--shard" } else { "" }
                ),
            },
        }
    }
    // A job with no provider to run it would burn every attempt as
    // provider_error: a usage error now, before anything is written.
    if provider_files.is_empty() {
        let missing: Vec<String> = manifests
            .iter()
            .filter(|m| {
                m.provider.is_none()
                    && planned
                        .iter()
                        .any(|j| j.base_job.as_deref().unwrap_or(&j.id) == m.id)
            })
            .map(|m| match m.file() {
                Some(file) => format!("{} ({})", m.id, file.display()),
                None => m.id.clone(),
            })
            .collect();
        if !missing.is_empty() {
            anyhow::bail!(
                "no provider for {} {}: the manifest has no [provider]; give one with --provider FILE",
                plural(missing.len(), "job"),
                missing.join(", ")
            );
        }
    }
    // A provider that cannot work is a usage error now, not a failed job
    // per instance later.
    let mut checked: Vec<(String, String)> = Vec::new();
    for (name, config) in providers_used(&manifests, &provider_files) {
        let key = (name.clone(), format!("{config:?}"));
        if checked.contains(&key) {
            continue;
        }
        crate::provider::preflight(&config, &name)?;
        checked.push(key);
    }
    if args.max_cost.is_some() {
        // A cap cannot be kept on calls whose cost is unknown.
        if let Some(job) = planned
            .iter()
            .find(|j| j.snapshot.manifest().is_none_or(|m| m.price.is_none()))
        {
            anyhow::bail!(
                "--max-cost needs a [price] for every provider: {} has none (job {})",
                job.provider.as_deref().map_or_else(
                    || format!(
                        "the [provider] of {}",
                        job.base_job.as_deref().unwrap_or(&job.id)
                    ),
                    |p| format!("provider {p}")
                ),
                job.id
            );
        }
    }
    // Providers of kind `oracle` and `noop` become each job's own script,
    // written under DATA/oracles once nothing above refused the batch.
    let offline = |p: &crate::manifest::ProviderConfig| {
        matches!(
            p,
            crate::manifest::ProviderConfig::Oracle | crate::manifest::ProviderConfig::Noop
        )
    };
    let planned = if provider_files.iter().any(|f| offline(&f.provider))
        || manifests
            .iter()
            .any(|m| m.provider.as_ref().is_some_and(offline))
    {
        let dir = args.data.join("oracles");
        let mut resolved = Vec::new();
        // Only the jobs the plan kept (`--family`, `--shard`) get a script.
        let kept = |m: &&crate::manifest::Manifest| {
            planned
                .iter()
                .any(|j| j.base_job.as_deref().unwrap_or(&j.id) == m.id)
        };
        for manifest in manifests.iter().filter(kept) {
            let mut manifest = manifest.clone();
            if let Some(own) = &manifest.provider {
                manifest.provider = Some(offline_provider(own, &manifest, &dir)?);
            }
            let mut files = provider_files.clone();
            for file in &mut files {
                file.provider = offline_provider(&file.provider, &manifest, &dir)?;
            }
            resolved.extend(plan(
                std::slice::from_ref(&manifest),
                &PlanOptions {
                    providers: files,
                    ..plan_options.clone()
                },
            ));
        }
        resolved
    } else {
        planned
    };
    let options = BatchOptions {
        workers: args.parallel.map_or_else(default_workers, |n| n as usize),
        rerun: match args.rerun.as_deref() {
            Some("failed") => Some(Rerun::Failed),
            Some("all") => Some(Rerun::All),
            _ => None,
        },
        replace: args.replace,
        report_dir: args.report,
        progress: ProgressMode::detect(),
        interrupt: install_interrupt(&args.data),
        keep: args.keep,
        max_cost_usd: args.max_cost,
        strict_integrity: args.strict_integrity,
        fresh_baselines: false,
    };
    let summary = run_batch(&args.data, planned, &options).context("batch failed")?;
    print_results(&args.data, &summary, args.show_report)?;
    // Each job's own error is printed above; then what stopped the batch.
    if let Some(e) = &summary.stopped_by {
        anyhow::bail!("batch failed: {e}");
    }
    if let Some(e) = &summary.report_error {
        anyhow::bail!("{e}");
    }
    Ok(completion(&summary))
}

/// `--family F` that no manifest has: the families there are, and the one
/// `F` was probably meant to be.
fn no_such_family(family: &str, manifests: &[crate::manifest::Manifest]) -> String {
    let mut families: Vec<&str> = manifests.iter().map(|m| m.family.as_str()).collect();
    families.sort_unstable();
    families.dedup();
    let near = crate::manifest::did_you_mean(family, families.iter().copied())
        .map(|near| format!("did you mean {near}? "))
        .unwrap_or_default();
    let matched = count(manifests.len(), "manifest");
    let list = families.join(", ");
    format!("no jobs to run: none of the {matched} has family {family:?}; {near}families: {list}")
}

/// The configured providers a batch will use: the `--provider` files, or
/// each manifest's own `[provider]` (named by its kind); a job without one
/// was refused before.
fn providers_used(
    manifests: &[crate::manifest::Manifest],
    files: &[crate::manifest::ProviderFile],
) -> Vec<(String, crate::manifest::ProviderConfig)> {
    if files.is_empty() {
        return manifests
            .iter()
            .filter_map(|m| {
                let config = m.provider.clone()?;
                Some((config.kind().as_str().to_string(), config))
            })
            .collect();
    }
    files
        .iter()
        .map(|f| (f.name.clone(), f.provider.clone()))
        .collect()
}

fn completion(summary: &BatchSummary) -> Completion {
    if summary.interrupted {
        Completion::Interrupted
    } else if summary.all_succeeded() {
        Completion::Success
    } else {
        Completion::JobsFailed
    }
}

/// The results table (the batch's jobs only) and where the reports are.
fn print_results(data: &Path, summary: &BatchSummary, show_report: bool) -> anyhow::Result<()> {
    let dir = DataDir::new(data);
    let snapshot = read_snapshot::<State>(&dir.log())?;
    let stale = super::status::stale_set(&dir, snapshot.state.open_attempts());
    let mut view = StatusView::of_state(&snapshot, &stale);
    view.jobs.retain(|row| summary.planned.contains(&row.id));
    out!(
        "{}",
        summary_text(&view, summary, super::status::table_width())
    );
    for (job, error) in &summary.job_errors {
        errln!("error: job {job} could not run: {error}");
    }
    // Faults of the machine are named apart from the model's failures;
    // every other failed job gets its cause in one line, as the reports
    // say, the first CAUSE_LINES of them.
    let mut causes = Vec::new();
    for job in snapshot.state.jobs() {
        if !summary.planned.contains(&job.id)
            || job.lifecycle.state != crate::state::JobState::Failed
        {
            continue;
        }
        if job.lifecycle.failure_kind != Some(crate::protocol::FailureKind::InfraError) {
            let kind = job.lifecycle.failure_kind.map_or("failed", |k| k.as_str());
            causes.push(match job.failure_cause() {
                Some(cause) => format!("{}: {kind}: {cause}", job.id),
                None => format!("{}: {kind}", job.id),
            });
            continue;
        }
        errln!(
            "error: job {}: infra_error after {}: {}",
            job.id,
            count(job.lifecycle.restarts.saturating_sub(1) as usize, "restart"),
            job.lifecycle
                .infra_cause
                .as_deref()
                .unwrap_or("unknown cause")
        );
    }
    let see = summary.report_dir.join("report.md");
    for cause in crate::status::capped_causes(causes, &see.display().to_string()) {
        super::status::errln_wrapped(&cause);
    }
    if let Some((spent, cap)) = summary.cost {
        outln!(
            "spent ${spent:.4} of the ${cap:.2} cap{}",
            if spent >= cap {
                ": cap reached, no new model call started"
            } else {
                ""
            }
        );
    }
    for job in snapshot.state.jobs() {
        if summary.planned.contains(&job.id)
            && job.lifecycle.failure_kind == Some(crate::protocol::FailureKind::SetupFailed)
        {
            errln!(
                "error: job {}: setup_failed: its [setup] failed (not the model's doing); see {}",
                job.id,
                dir.runs(&job.id, job.lifecycle.attempts_started)
                    .join("setup.log")
                    .display()
            );
        }
    }
    if summary.interrupted {
        super::status::outln_wrapped(
            "interrupted: state is saved; run the same command again to finish",
        )?;
    }
    if summary.report_error.is_none() && show_report {
        outln!(
            "report: {}",
            summary.report_dir.join("report.html").display()
        );
    }
    Ok(())
}

/// The results table of the batch's jobs and the counts under it, fitted
/// to `width` when given (the counts broken at spaces, never in a word).
fn summary_text(view: &StatusView, summary: &BatchSummary, width: Option<usize>) -> String {
    let mut out = render_text(view, width);
    let t = &summary.tally;
    let counts = format!(
        "succeeded {}/{} (failed {}, cancelled {}, pending {}); {} run now",
        t.succeeded,
        t.jobs,
        t.failed,
        t.cancelled,
        t.pending,
        count(summary.attempts_run, "attempt")
    );
    let lines = match width {
        Some(width) => crate::table::wrap(&counts, width),
        None => vec![counts],
    };
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `report --compare DATA_A,DATA_B`: where A − B stands over the tasks
/// both runs finished.
pub(super) fn compare(
    data: &[PathBuf],
    level: f64,
    margin: Option<f64>,
    seed: u64,
) -> anyhow::Result<Completion> {
    let [a, b] = data else {
        anyhow::bail!(
            "--compare takes two data dirs, DATA_A,DATA_B; got {}",
            data.len()
        );
    };
    let arm = |dir: &PathBuf| -> anyhow::Result<_> {
        let logs = fold_logs(std::slice::from_ref(dir))?;
        Ok(report_of(&logs, None).finished_by_task())
    };
    let (results_a, results_b) = (arm(a)?, arm(b)?);
    let rule = match margin {
        Some(m) => crate::decide::Rule::Within(m),
        None => crate::decide::Rule::Differs,
    };
    let standing = crate::decide::posthoc::compare(&results_a, &results_b, level, rule, seed);
    outln!("A: {}", a.display());
    outln!("B: {}", b.display());
    outln!(
        "{}",
        crate::decide::posthoc::words(&standing, level, margin)
    );
    if standing.pairs == 0 {
        outln!("no task finished in both: nothing to compare");
    }
    Ok(Completion::Success)
}

pub(super) fn report(data: &[PathBuf], out: &Path) -> anyhow::Result<Completion> {
    // Each log is folded once, for the report and the exports.
    let logs = fold_logs(data)?;
    let report = report_of(&logs, None);
    for file in write_reports(&report, out)? {
        outln!("wrote {}", file.display());
    }
    let exported = crate::export::write_exports(&logs, &report, out)?;
    for file in exported.inspect.iter().chain(&exported.predictions) {
        outln!("wrote {}", file.display());
    }
    outln!(
        "wrote {} ({} trajectories)",
        exported.atif_dir.display(),
        exported.atif
    );
    let t = crate::state::Tally::of(report.jobs.iter().map(|j| j.outcome));
    outln!(
        "{}/{} {} succeeded",
        t.succeeded,
        t.jobs,
        plural(t.jobs as usize, "job")
    );
    Ok(Completion::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{CheckResult, FailureKind};
    use crate::state::JobState;
    use crate::status::fixture::{batch, row};
    use crate::table::width;

    /// The end of a batch: every job terminal, one failed.
    fn finished() -> (StatusView, BatchSummary) {
        let mut view = batch();
        for r in &mut view.jobs {
            if r.state != JobState::Failed {
                r.state = JobState::Succeeded;
                r.acceptance = Some(CheckResult::Passed);
                r.waiting = None;
            }
        }
        let mut cancelled = row("rust-prefix_format", "rust", JobState::Cancelled);
        cancelled.failure_kind = Some(FailureKind::Cancelled);
        view.jobs.push(cancelled);
        let summary = BatchSummary {
            planned: view.jobs.iter().map(|r| r.id.clone()).collect(),
            tally: crate::state::Tally {
                jobs: 6,
                succeeded: 4,
                failed: 1,
                cancelled: 1,
                pending: 0,
            },
            attempts_run: 9,
            job_errors: Vec::new(),
            interrupted: false,
            stopped_by: None,
            cost: None,
            report_dir: PathBuf::from("data/report"),
            report_files: Vec::new(),
            report_error: None,
        };
        (view, summary)
    }

    #[test]
    fn the_batch_summary_at_120_80_and_60_columns() {
        let (view, summary) = finished();
        for (columns, name) in [(120, "summary_120"), (80, "summary_80"), (60, "summary_60")] {
            let text = summary_text(&view, &summary, Some(columns));
            for line in text.lines() {
                assert!(width(line) <= columns, "{} columns: {line}", width(line));
            }
            insta::assert_snapshot!(name, text);
        }
    }

    #[test]
    fn into_a_pipe_the_batch_summary_is_whole() {
        let (view, summary) = finished();
        let text = summary_text(&view, &summary, None);
        assert!(text.contains("python-wrong_comparator@openai#2"), "{text}");
        assert!(
            text.ends_with(
                "succeeded 4/6 (failed 1, cancelled 1, pending 0); 9 attempts run now\n"
            )
        );
    }
}
