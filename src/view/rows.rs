//! The jobs page's JSON: one row per job instance of every data dir, and a
//! summary per data dir. Pure: from the state module's summary (where a
//! job is, what it did last, in `describe`'s words) and the report model
//! (outcome, cause, figures). The page filters and sorts the rows itself.

use serde::Serialize;

use super::model::{Model, Run};
use crate::report::{Figures, JobResult, PassAtK, ProviderPass};
use crate::state::{self, Job, JobState};

/// The jobs page.
#[derive(Debug, Serialize)]
pub(super) struct ListView<'a> {
    pub version: u64,
    pub runs: Vec<RunRow<'a>>,
    pub jobs: Vec<JobRow<'a>>,
}

/// One data dir.
#[derive(Debug, Serialize)]
pub(super) struct RunRow<'a> {
    pub index: usize,
    pub label: &'a str,
    pub events: usize,
    /// Why its log cannot be read (yet).
    pub error: Option<&'a str>,
    pub tally: Figures,
    /// The same figures per family, and per provider of a sweep, in name
    /// order (the report's family and provider tables).
    pub families: Vec<Group<'a>>,
    pub providers: Vec<Group<'a>>,
    /// With repeats (`--repeat K`): pass@1 and pass@k per provider, each
    /// with its bootstrap interval (the report's pass@k table, without
    /// its per-job rows).
    pub pass_at_k: Option<PassSummary>,
    pub running: u32,
    pub queued: u32,
}

/// pass@1 and pass@k of a data dir's repeats, per provider.
#[derive(Debug, Serialize)]
pub(super) struct PassSummary {
    pub k: u32,
    pub providers: Vec<ProviderPass>,
}

/// The figures of the jobs of one family or one provider.
#[derive(Debug, Serialize)]
pub(super) struct Group<'a> {
    pub name: &'a str,
    pub tally: Figures,
}

/// `jobs` grouped by `key` (jobs it gives no name left out), in name order.
fn groups<'a>(
    jobs: &'a [JobResult],
    key: impl Fn(&'a JobResult) -> Option<&'a str>,
) -> Vec<Group<'a>> {
    let mut by: std::collections::BTreeMap<&str, Vec<&JobResult>> = Default::default();
    for job in jobs {
        if let Some(name) = key(job) {
            by.entry(name).or_default().push(job);
        }
    }
    by.into_iter()
        .map(|(name, jobs)| Group {
            name,
            tally: Figures::of(jobs),
        })
        .collect()
}

/// One job instance.
#[derive(Debug, Serialize)]
pub(super) struct JobRow<'a> {
    /// Index of its data dir.
    pub run: usize,
    pub instance: &'a str,
    pub job: &'a str,
    pub family: &'a str,
    pub provider: Option<&'a str>,
    pub repeat: Option<u32>,
    /// `queued`, `running`, `succeeded`, `failed`, `cancelled`.
    pub state: &'static str,
    /// `succeeded`, `failed`, `cancelled`, `pending`.
    pub outcome: &'static str,
    pub failure_kind: Option<&'static str>,
    /// Infrastructure failures are counted apart from the model's.
    pub infrastructure: bool,
    pub cause: Option<&'a str>,
    /// What a running job did last, in the words every view uses.
    pub last: Option<String>,
    /// Why its provider is being retried, while it is.
    pub waiting: Option<&'a str>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub steps: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    /// Wall time so far (a running job's until the view was built).
    pub wall_ms: u64,
    /// `F2P 1/2, P2P 3/3` once acceptance judged per test.
    pub tests: Option<String>,
    pub acceptance: &'static str,
    /// Tamper signals of the last attempt, and whether a canary showed
    /// the results forged.
    pub signals: u32,
    pub forged: bool,
    pub integrity: String,
}

/// The jobs page of `model` at `now_ms`.
pub(super) fn list_view(model: &Model, now_ms: u64) -> ListView<'_> {
    let mut runs = Vec::new();
    let mut jobs = Vec::new();
    for (index, run) in model.runs.iter().enumerate() {
        let (mut running, mut queued) = (0, 0);
        for result in &run.report.jobs {
            let row = job_row(index, run, result, now_ms);
            match row.state {
                "running" => running += 1,
                "queued" => queued += 1,
                _ => {}
            }
            jobs.push(row);
        }
        let mut tally = Figures::of(&run.report.jobs);
        // A batch still running has run until now, not until the last of
        // its jobs that ended.
        if running > 0
            && let Some(first) = run.report.jobs.iter().filter_map(|j| j.started_ms).min()
        {
            tally.elapsed_ms = tally.elapsed_ms.max(now_ms.saturating_sub(first));
        }
        runs.push(RunRow {
            index,
            label: &run.label,
            events: run.events(),
            error: run.error.as_deref(),
            tally,
            families: groups(&run.report.jobs, |j| Some(j.family.as_str())),
            providers: groups(&run.report.jobs, |j| j.provider.as_deref()),
            pass_at_k: PassAtK::of(&run.report).map(|p| PassSummary {
                k: p.k,
                providers: p.providers,
            }),
            running,
            queued,
        });
    }
    ListView {
        version: model.version,
        runs,
        jobs,
    }
}

/// The row of `result`, a job of data dir `index`.
pub(super) fn job_row<'a>(
    index: usize,
    run: &'a Run,
    result: &'a JobResult,
    now_ms: u64,
) -> JobRow<'a> {
    let job = run.details.state.job(&result.instance);
    let state = job.map_or(JobState::Queued, |j| j.lifecycle.state);
    let wall_ms = match (result.started_ms, result.ended_ms) {
        (Some(start), None) if state == JobState::Running => now_ms.saturating_sub(start),
        _ => result.wall_ms,
    };
    let integrity = result.integrity.as_ref();
    JobRow {
        run: index,
        instance: &result.instance,
        job: &result.job,
        family: &result.family,
        provider: result.provider.as_deref(),
        repeat: result.repeat,
        state: state.as_str(),
        outcome: result.outcome.as_str(),
        failure_kind: result.failure_kind.map(|k| k.as_str()),
        infrastructure: result.failure_kind.is_some_and(|k| k.is_infrastructure()),
        cause: result.cause.as_deref(),
        last: job
            .filter(|_| state == JobState::Running)
            .and_then(last_said),
        waiting: job
            .and_then(|j| j.waiting.as_ref())
            .map(|w| w.reason.as_str()),
        attempts: result.attempts,
        max_attempts: result.max_attempts,
        steps: result.steps,
        input_tokens: result.input_tokens,
        output_tokens: result.output_tokens,
        cost_usd: result.cost_usd,
        wall_ms,
        tests: tests_summary(result),
        acceptance: result.acceptance.as_str(),
        signals: integrity.map_or(0, |i| i.signal_count),
        forged: integrity.is_some_and(|i| i.forged()),
        integrity: result.integrity_summary(),
    }
}

/// What the job's last event says.
fn last_said(job: &Job) -> Option<String> {
    let record = job.last.as_deref()?;
    state::describe(record, job).map(|said| said.text)
}

fn tests_summary(result: &JobResult) -> Option<String> {
    let t = &result.tests;
    match (t.f2p_passed, t.f2p_total, t.p2p_passed, t.p2p_total) {
        (Some(f), Some(ft), Some(p), Some(pt)) => Some(format!("F2P {f}/{ft}, P2P {p}/{pt}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AttemptStartedRecord;
    use crate::protocol::{Event, Record};

    fn log(dir: &std::path::Path, records: &[Record]) {
        let bytes: Vec<u8> = records.iter().flat_map(Record::encode).collect();
        std::fs::write(dir.join("events.log"), bytes).unwrap();
    }

    fn record(seq: u64, id: &str, attempt: Option<u32>, event: Event) -> Record {
        Record {
            seq,
            ts_ms: 1000 * seq,
            job: Some(id.to_string()),
            attempt,
            event,
        }
    }

    #[test]
    fn rows_say_where_each_job_is_and_runs_count_them() {
        let tmp = tempfile::tempdir().unwrap();
        log(
            tmp.path(),
            &[
                record(1, "a", None, Event::bare_enqueued(2)),
                record(2, "b<script>", None, Event::bare_enqueued(2)),
                record(
                    3,
                    "a",
                    Some(1),
                    Event::AttemptStarted(AttemptStartedRecord {
                        pid: 7,
                        agent: None,
                    }),
                ),
            ],
        );
        let mut model = Model::new(&[tmp.path().to_path_buf()]);
        model.refresh(10_000);
        let view = list_view(&model, 10_000);
        assert_eq!(view.version, 1);
        assert_eq!(view.jobs.len(), 2);
        let a = &view.jobs[0];
        assert_eq!(
            (a.instance, a.state, a.outcome),
            ("a", "running", "pending")
        );
        assert_eq!(a.wall_ms, 7_000, "a running job's time so far");
        assert!(
            a.last.as_deref().unwrap().contains("attempt 1"),
            "{:?}",
            a.last
        );
        assert_eq!(view.jobs[1].state, "queued");
        let run = &view.runs[0];
        assert_eq!(
            (run.events, run.running, run.queued, run.tally.tally.jobs),
            (3, 1, 1, 2)
        );
        assert_eq!(run.error, None);
        // Started at 3 s, nothing ended yet: running for 7 s at 10 s.
        assert_eq!(run.tally.elapsed_ms, 7_000);
        // A bare task is its own family; no provider of a sweep.
        let families: Vec<(&str, u32)> = run
            .families
            .iter()
            .map(|g| (g.name, g.tally.tally.jobs))
            .collect();
        assert_eq!(families, [("a", 1), ("b<script>", 1)]);
        assert!(run.providers.is_empty());
    }
}
