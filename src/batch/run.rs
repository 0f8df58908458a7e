//! Running a planned batch: enqueue (idempotent), recover, run queued
//! instances on a pool of workers with automatic retries, then write the
//! reports. Rerunning the same batch skips what is finished.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::progress::{Progress, ProgressMode};
use crate::cancel::CancelToken;
use crate::lifecycle::{DataDir, EnqueueResult, LeaseError, NewJob, Store, StoreError};
use crate::protocol::Outcome;
use crate::report::{FoldedLog, Report, ReportBuildError, fold_logs, report_of, write_reports};
use crate::runner::{RunError, RunOptions, run_job};
use crate::state::{JobOutcome, JobState, State, Tally};

/// `--rerun`: which finished instances to run again from scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rerun {
    Failed,
    All,
}

/// How to run a batch.
#[derive(Debug, Clone)]
pub(crate) struct BatchOptions {
    pub workers: usize,
    pub rerun: Option<Rerun>,
    /// `--replace`: a job whose manifest changed is enqueued again under
    /// the new one (`replaced`); without it a changed manifest is an error.
    pub replace: bool,
    pub report_dir: Option<PathBuf>,
    pub progress: ProgressMode,
    /// Set by the first Ctrl-C.
    pub interrupt: CancelToken,
    /// Whose workspaces and build dirs stay once an attempt ends.
    pub keep: crate::lifecycle::Keep,
    /// `--max-cost`: USD the batch's jobs may spend in all, counting what
    /// earlier runs of them spent.
    pub max_cost_usd: Option<f64>,
    /// `--strict-integrity`: any tamper signal fails an attempt as
    /// `tampered`.
    pub strict_integrity: bool,
    /// Every instance runs its baseline's commands, even where the data
    /// dir holds a baseline with the same key (`check`).
    pub fresh_baselines: bool,
}

/// What a batch did.
#[derive(Debug, Clone)]
pub(crate) struct BatchSummary {
    pub planned: Vec<String>,
    /// How the planned jobs stand.
    pub tally: Tally,
    /// Attempts run by this invocation.
    pub attempts_run: usize,
    /// Jobs that could not be run at all (a source dir that vanished, a
    /// snapshot that no longer loads), with why; the rest of the batch ran.
    pub job_errors: Vec<(String, String)>,
    pub interrupted: bool,
    /// The error that stopped the workers early (a log that cannot be
    /// written, e.g. on a full disk), naming the job it hit.
    pub stopped_by: Option<String>,
    /// Under `--max-cost`: `(spent, cap)` in USD, what the batch's jobs have
    /// spent in all, earlier runs included.
    pub cost: Option<(f64, f64)>,
    pub report_dir: PathBuf,
    pub report_files: Vec<PathBuf>,
    /// Why the reports could not be written, if they could not.
    pub report_error: Option<String>,
}

impl BatchSummary {
    pub(crate) fn all_succeeded(&self) -> bool {
        self.tally.all_succeeded()
    }
}

/// Failures that stop a batch.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BatchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("job {job}: {source}")]
    Job {
        job: String,
        #[source]
        source: Box<RunError>,
    },
    #[error("failed to write the reports: {0}")]
    Report(#[from] ReportBuildError),
    #[error("failed to export the runs: {0}")]
    Export(#[from] crate::export::ExportError),
    #[error("failed to start the worker pool: {0}")]
    Pool(String),
}

/// How long a worker waits for a job's lease that is still held.
const LEASE_WAIT: Duration = Duration::from_secs(120);

/// A failed job the batch tries again: attempts remain, and another
/// attempt could change the verdict (a passing baseline or a broken
/// harness, decided once per job, cannot).
pub(super) fn retryable(job: &crate::state::Job) -> bool {
    job.lifecycle.state == JobState::Failed
        && job.attempts_remain()
        && !matches!(
            job.lifecycle.failure_kind,
            Some(
                crate::protocol::FailureKind::InvalidBaseline
                    | crate::protocol::FailureKind::HarnessError
            )
        )
}

/// Runs `plan` in the data dir `data`.
pub(crate) fn run_batch(
    data: &Path,
    plan: Vec<NewJob>,
    options: &BatchOptions,
) -> Result<BatchSummary, BatchError> {
    let dir = DataDir::new(data);
    let mut store = Store::open(dir.clone())?;
    let planned: Vec<String> = plan.iter().map(|j| j.id.clone()).collect();
    // Whatever would refuse a job is found before anything is written.
    check_replacements(store.state(), &plan, options.replace)?;
    let mut notice = Resuming::default();
    for job in plan {
        let id = job.id.clone();
        let known = store.state().job(&id).is_some();
        let rerun = options.rerun.is_some_and(|r| {
            match store.state().job(&id).map(|j| j.lifecycle.state) {
                Some(JobState::Failed | JobState::Cancelled) => true,
                Some(JobState::Succeeded) => r == Rerun::All,
                _ => false,
            }
        });
        match (store.enqueue_manifest(job.clone(), options.replace)?, rerun) {
            (EnqueueResult::Unchanged, true) => {
                // Same manifest, recorded again: the job starts over.
                store.restart(job)?;
            }
            (EnqueueResult::Replaced, _) => notice.replaced += 1,
            _ => {}
        }
        notice.known |= known;
    }

    // Failed jobs with attempts left (a runner died between finishing and
    // retrying) are requeued; queued ones are run.
    let mut queue = VecDeque::new();
    for id in &planned {
        let Some(job) = store.state().job(id) else {
            continue;
        };
        if retryable(job) {
            store.retry(id)?;
        }
        match store.state().job(id) {
            Some(job) if job.lifecycle.state == JobState::Queued => {
                if job.lifecycle.failure_kind == Some(crate::protocol::FailureKind::Interrupted) {
                    notice.recovered += 1;
                } else {
                    notice.queued += 1;
                }
                queue.push_back(id.clone());
            }
            Some(job) if job.lifecycle.state.is_terminal() => notice.done += 1,
            _ => {}
        }
    }
    store.sync()?;

    // Spending counts what the log says these jobs already spent.
    let budget = options.max_cost_usd.map(|cap| {
        let spent: f64 = planned
            .iter()
            .filter_map(|id| store.state().job(id))
            .map(|j| j.cost_usd)
            .sum();
        std::sync::Arc::new(crate::agent::Budget::new(cap, spent))
    });
    let progress = Progress::start(
        &dir.log(),
        std::fs::metadata(dir.log()).map(|m| m.len()).unwrap_or(0),
        store.state().last_seq,
        store.state().clone(),
        planned.clone(),
        options.progress,
        notice.known.then(|| notice.line()),
    );
    // The workers' handles are forks of this one, which the last of them
    // takes: one replay of the log, and the manifests shared by all.
    let outcome = run_workers(store, queue, options, budget.clone());
    // Jobs of this batch that another runner holds (a second batch on the
    // same data dir): wait for them, so the summary and the report say how
    // they ended.
    if outcome
        .as_ref()
        .is_ok_and(|(_, _, stopped)| stopped.is_none())
    {
        wait_for_other_runners(&dir, &planned, &options.interrupt, &progress)?;
    }
    progress.finish();
    let (attempts_run, job_errors, stopped_by) = outcome?;

    let store = Store::open(dir.clone())?;
    // An attempt finished by a run killed before its clean-up: clean it
    // now, so reruns converge on disk too. Best effort, like the clean-up.
    let wanted: std::collections::HashSet<&str> = planned.iter().map(String::as_str).collect();
    let _ =
        crate::lifecycle::collect_some(&dir, store.state(), options.keep, |id| wanted.contains(id));
    let mut summary = BatchSummary {
        planned: planned.clone(),
        tally: Tally::default(),
        attempts_run,
        job_errors,
        interrupted: options.interrupt.is_cancelled() && stopped_by.is_none(),
        stopped_by: stopped_by.map(|e| e.to_string()),
        cost: budget.as_ref().map(|b| (b.spent_usd(), b.cap_usd())),
        report_error: None,
        report_dir: options
            .report_dir
            .clone()
            .unwrap_or_else(|| data.join("report")),
        report_files: Vec::new(),
    };
    summary.tally = Tally::of(planned.iter().map(|id| {
        store
            .state()
            .job(id)
            .map_or(JobOutcome::Pending, |j| j.lifecycle.state.into())
    }));
    drop(store);
    // A report that cannot be written does not hide what the jobs did:
    // the summary carries both.
    // The report covers what this batch planned, not every job of the log.
    match write_batch_report(data, &planned, &summary.report_dir) {
        Ok((logs, report, files)) => {
            summary.report_files = files;
            // The viewers' formats beside the report, from the same rows
            // and the same fold of the log.
            match crate::export::write_exports(&logs, &report, &summary.report_dir) {
                Ok(exported) => {
                    summary.report_files.extend(exported.inspect);
                    summary.report_files.extend(exported.predictions);
                }
                Err(e) => summary.report_error = Some(BatchError::Export(e).to_string()),
            }
        }
        Err(e) => summary.report_error = Some(BatchError::Report(e).to_string()),
    }
    Ok(summary)
}

/// The report of the instances a batch planned, written into `out`, with
/// the fold of the log it came from.
fn write_batch_report(
    data: &Path,
    planned: &[String],
    out: &Path,
) -> Result<(Vec<FoldedLog>, Report, Vec<PathBuf>), ReportBuildError> {
    let logs = fold_logs(&[data.to_path_buf()])?;
    let report = report_of(&logs, Some(planned));
    let files = write_reports(&report, out)?;
    Ok((logs, report, files))
}

/// What a rerun of a batch found: jobs already finished, interrupted ones
/// it recovers, and the rest it runs (those under a replaced manifest
/// among them).
#[derive(Debug, Default)]
struct Resuming {
    /// Some planned job was in the log already: this run resumes one.
    known: bool,
    done: usize,
    recovered: usize,
    queued: usize,
    replaced: usize,
}

impl Resuming {
    /// `resuming: 3 done, 1 recovered, 2 queued (1 under a new manifest)`.
    fn line(&self) -> String {
        let mut line = format!(
            "resuming: {} done, {} recovered, {} queued",
            self.done, self.recovered, self.queued
        );
        if self.replaced > 0 {
            line.push_str(&format!(" ({} under a new manifest)", self.replaced));
        }
        line
    }
}

/// Refuses, before anything is written, a planned job whose manifest
/// changed unless `replace`, and a replacement of a job that is running.
fn check_replacements(state: &State, plan: &[NewJob], replace: bool) -> Result<(), StoreError> {
    for job in plan {
        let Some(existing) = state.job(&job.id) else {
            continue;
        };
        if existing.manifest_hash.as_deref() == Some(job.hash.as_str()) {
            continue;
        }
        if !replace {
            return Err(StoreError::ManifestChanged { id: job.id.clone() });
        }
        if existing.lifecycle.open.is_some() {
            return Err(crate::state::Illegal::WrongState {
                job: job.id.clone(),
                action: "replace the manifest of",
                state: existing.lifecycle.state,
            }
            .into());
        }
    }
    Ok(())
}

/// Waits while a planned job is running under another live runner; says
/// once which ones. A running job whose runner is gone is not waited for
/// (the next run recovers it).
fn wait_for_other_runners(
    dir: &DataDir,
    planned: &[String],
    interrupt: &CancelToken,
    progress: &Progress,
) -> Result<(), BatchError> {
    let mut announced = false;
    let mut store = Store::open(dir.clone())?;
    loop {
        // Reads only what was appended since (and reaps dead runners).
        store.transact(|_| Ok(()))?;
        let state = store.state();
        let held: Vec<&str> = planned
            .iter()
            .filter_map(|id| state.job(id))
            .filter(|job| {
                job.lifecycle.state == JobState::Running
                    && job.lifecycle.open.is_some_and(|open| {
                        crate::lifecycle::is_live(&dir.lease(&job.id, open.attempt))
                    })
            })
            .map(|job| job.id.as_str())
            .collect();
        if held.is_empty() {
            return Ok(());
        }
        if !announced {
            progress.note(format!(
                "waiting for {} another runner is running in this data dir: {}",
                crate::words::count(held.len(), "job"),
                held.join(", ")
            ));
            announced = true;
        }
        if interrupt.wait_timeout(Duration::from_millis(500)) {
            return Ok(());
        }
    }
}

/// What the workers did: attempts run, jobs they could not run, and the
/// error that stopped them early, if one did.
type WorkerOutcome = (usize, Vec<(String, String)>, Option<BatchError>);

/// Runs the queue on `options.workers` workers.
fn run_workers(
    store: Store,
    queue: VecDeque<String>,
    options: &BatchOptions,
    budget: Option<std::sync::Arc<crate::agent::Budget>>,
) -> Result<WorkerOutcome, BatchError> {
    let workers = options.workers.max(1).min(queue.len().max(1));
    let mut stores = (1..workers)
        .map(|_| store.fork())
        .collect::<Result<Vec<_>, _>>()?;
    stores.push(store);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("batch-worker-{i}"))
        .build()
        .map_err(|e| BatchError::Pool(e.to_string()))?;
    let queue = Mutex::new(queue);
    let attempts = Mutex::new(0usize);
    let job_errors = Mutex::new(Vec::new());
    let first_error: Mutex<Option<BatchError>> = Mutex::new(None);
    pool.scope(|scope| {
        for store in stores {
            let (queue, attempts, job_errors, first_error, budget) =
                (&queue, &attempts, &job_errors, &first_error, &budget);
            scope.spawn(move |_| {
                if let Err(e) = worker(store, queue, attempts, job_errors, options, budget) {
                    options.interrupt.cancel();
                    let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                    slot.get_or_insert(e);
                }
            });
        }
    });
    Ok((
        attempts.into_inner().unwrap_or_else(|p| p.into_inner()),
        job_errors.into_inner().unwrap_or_else(|p| p.into_inner()),
        first_error.into_inner().unwrap_or_else(|p| p.into_inner()),
    ))
}

/// Takes jobs from the queue until it is empty or the batch is interrupted;
/// retries a failed job while it has attempts left.
fn worker(
    mut store: Store,
    queue: &Mutex<VecDeque<String>>,
    attempts: &Mutex<usize>,
    job_errors: &Mutex<Vec<(String, String)>>,
    options: &BatchOptions,
    budget: &Option<std::sync::Arc<crate::agent::Budget>>,
) -> Result<(), BatchError> {
    let run_options = RunOptions {
        provider: None,
        interrupt: Some(options.interrupt.clone()),
        keep: options.keep,
        budget: budget.clone(),
        workers: options.workers,
        strict_integrity: options.strict_integrity,
        fresh_baseline: options.fresh_baselines,
    };
    // Claims refused because the lease is still held: a child that another
    // worker forked while this job's last attempt held the lease keeps the
    // lock file open until that child's command ends.
    let mut held_since: Option<std::time::Instant>;
    loop {
        if options.interrupt.is_cancelled() {
            return Ok(());
        }
        if budget.as_ref().is_some_and(|b| b.exhausted()) {
            // The cap is reached: no job starts (those queued stay queued).
            return Ok(());
        }
        let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
        let Some(id) = next else { return Ok(()) };
        held_since = None;
        loop {
            // Another process may have taken or cancelled it meanwhile.
            store.transact(|_| Ok(()))?;
            if store
                .state()
                .job(&id)
                .is_none_or(|j| j.lifecycle.state != JobState::Queued)
            {
                break;
            }
            let report = match run_job(&mut store, &id, &run_options) {
                Ok(report) => report,
                // Another runner claimed or cancelled it first.
                Err(RunError::Store(StoreError::Illegal(crate::state::Illegal::WrongState {
                    ..
                }))) => break,
                // The lease is still held: wait for it a while (the holder
                // is a command's short-lived process or another runner);
                // then leave the job to a later run, without stopping the
                // batch.
                Err(e @ RunError::Store(StoreError::Lease(LeaseError::Held(_)))) => {
                    let since = *held_since.get_or_insert_with(std::time::Instant::now);
                    if since.elapsed() < LEASE_WAIT {
                        if options.interrupt.wait_timeout(Duration::from_millis(200)) {
                            return Ok(());
                        }
                        continue;
                    }
                    let mut errors = job_errors.lock().unwrap_or_else(|p| p.into_inner());
                    errors.push((id.clone(), e.to_string()));
                    break;
                }
                // This job cannot run; the others can. Its attempt is
                // recorded interrupted by the next writer.
                Err(
                    e @ (RunError::Setup { .. }
                    | RunError::Infra { .. }
                    | RunError::Manifest { .. }
                    | RunError::NoManifest(_)
                    | RunError::UnknownJob(_)),
                ) => {
                    let mut errors = job_errors.lock().unwrap_or_else(|p| p.into_inner());
                    errors.push((id.clone(), e.to_string()));
                    break;
                }
                Err(e) => {
                    return Err(BatchError::Job {
                        job: id.clone(),
                        source: Box::new(e),
                    });
                }
            };
            *attempts.lock().unwrap_or_else(|p| p.into_inner()) += 1;
            if report.restarted {
                // Queued again (no attempt used) unless its restarts ran
                // out: the loop runs it again or moves on.
                continue;
            }
            if report.interrupted || report.outcome == Outcome::Succeeded {
                break;
            }
            let retry = store.state().job(&id).is_some_and(retryable);
            let broke = budget.as_ref().is_some_and(|b| b.exhausted());
            if !retry || broke || options.interrupt.is_cancelled() {
                break;
            }
            store.retry(&id)?;
        }
    }
}
