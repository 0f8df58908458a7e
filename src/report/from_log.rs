//! The report model from event logs. The report keeps no reading of the
//! log of its own: each log is folded once by the state module, and every
//! figure comes from its summary (state, kind, cause, steps, tokens, times,
//! the patch, the verdicts, every attempt) and its detail fold (the
//! timeline, in the words every view uses). The only other input is a
//! function that returns an attempt's artifacts (saved beside the log), so
//! reports regenerated later from the same logs are the same reports.

use super::model::TimelineEntry;
use super::model::{AttemptRun, CheckResult, JobOutcome, JobResult, Report, TestVerdict};
use crate::protocol::{self, FailureKind, Outcome, Record};
use crate::state::{self, Details, Entry, Job, JobState, RunEnd};

/// One source log: its path (as shown in the report) and its records.
#[derive(Debug)]
pub struct LogSource<'a> {
    pub path: String,
    pub records: &'a [Record],
}

/// Builds the report; `artifact(source path, job, attempt, file)` returns
/// an attempt's artifact saved beside that log (`patch.diff`, and with a
/// full trace `transcript.jsonl`). An instance in several logs is reported
/// as the last of them has it, in the place of its first.
pub fn report_from_logs(
    sources: &[LogSource<'_>],
    generated_at_ms: u64,
    artifact: &dyn Fn(&str, &str, u32, &str) -> Option<String>,
) -> Report {
    let mut report = Report::new(
        generated_at_ms,
        sources.iter().map(|s| s.path.clone()).collect(),
    );
    // Where each instance is in the report, so a sweep's report costs the
    // same per job at any size.
    let mut placed: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for source in sources {
        let details = Details::of(source.records);
        for job in details.state.jobs() {
            let result = job_result(job, details.timeline(&job.id), &|n, file| {
                artifact(&source.path, &job.id, n, file)
            });
            match placed.get(&job.id) {
                Some(&i) => report.jobs[i] = result,
                None => {
                    placed.insert(job.id.clone(), report.jobs.len());
                    report.jobs.push(result);
                }
            }
        }
    }
    report
}

/// One job's row: the summary's figures, the detail fold's timeline, and
/// the artifacts of its attempts.
fn job_result(
    job: &Job,
    timeline: &[Entry],
    artifact: &dyn Fn(u32, &str) -> Option<String>,
) -> JobResult {
    let base = job.base_job.as_deref().unwrap_or(&job.id);
    let mut result = JobResult::new(&job.id, base, &job.family);
    result.provider = job.provider.clone();
    result.repeat = job.repeat;
    result.max_attempts = job.lifecycle.max_attempts;
    result.manifest_hash = job.manifest_hash.clone();
    // The reducer's reading, the same one `status` shows.
    result.outcome = match job.lifecycle.state {
        JobState::Succeeded => JobOutcome::Accepted,
        JobState::Failed => JobOutcome::Failed,
        JobState::Cancelled => JobOutcome::Cancelled,
        JobState::Queued | JobState::Running => JobOutcome::Pending,
    };
    result.failure_kind = match result.outcome {
        JobOutcome::Accepted => None,
        _ => job.lifecycle.failure_kind,
    };
    result.cause = job.failure_cause();
    // Counted from the current manifest's first attempt.
    result.attempts = job
        .last_attempt()
        .saturating_sub(job.lifecycle.attempt_base);
    result.steps = job.total_steps();
    let usage = &job.usage;
    result.provider_calls = usage.provider_calls;
    result.invalid_decisions = usage.invalid_decisions;
    result.input_tokens = usage.input_tokens;
    result.output_tokens = usage.output_tokens;
    result.provider_latency_ms = usage.latency_ms;
    result.time = usage.time;
    result.cost_usd = job.price.map(|_| job.cost_usd);
    if let (Some(start), Some(end)) = (job.first_started_ms, job.ended_ms) {
        result.wall_ms = end.saturating_sub(start);
    }
    result.started_ms = job.first_started_ms;
    result.ended_ms = job.ended_ms;
    if let Some(baseline) = &job.baseline {
        result.baseline = CheckResult::from(state::baseline_verdict(baseline.result));
        result.baseline_reason = baseline.reason.clone();
    }
    if let Some((check, verdict)) = job.attempt().and_then(|a| a.phase.judged()) {
        result.acceptance = match check {
            protocol::CheckResult::Passed => CheckResult::Passed,
            protocol::CheckResult::Failed => CheckResult::Failed,
            protocol::CheckResult::Skipped => CheckResult::Skipped,
            protocol::CheckResult::Error => CheckResult::Error,
        };
        result.tests = verdict.map(TestVerdict::of).unwrap_or_default();
    }
    if let Some((n, patch)) = job.last_patch() {
        result.patch_bytes = patch.bytes;
        result.patch_files = patch.files;
        result.patch = artifact(n, "patch.diff");
    }
    let first = job.attempts.first();
    result.first_attempt_clean = result.outcome == JobOutcome::Accepted
        && result.attempts == 1
        && !first.is_some_and(state::Attempt::was_interrupted);
    result.first_attempt_accepted =
        first
            .and_then(state::Attempt::finished)
            .and_then(|(outcome, kind)| match (outcome, kind) {
                (Outcome::Succeeded, _) => Some(true),
                // Not the model's doing: no sample.
                (_, Some(kind))
                    if kind.is_infrastructure()
                        || matches!(kind, FailureKind::Cancelled | FailureKind::Interrupted) =>
                {
                    None
                }
                (Outcome::Failed, _) => Some(false),
            });
    result.integrity = job
        .attempt()
        .and_then(state::Attempt::integrity_record)
        .cloned();
    result.attempt_history = history(job);
    if let Some(manifest) = job.manifest.as_deref().and_then(|m| m.manifest()) {
        result.metadata = manifest.metadata.clone();
    }
    result.timeline = timeline.iter().map(entry).collect();
    for attempt in &job.attempts {
        if let Some(text) = artifact(attempt.number, "transcript.jsonl") {
            let steps = super::trajectory::read_transcript(&text);
            super::trajectory::attach(&mut result.timeline, attempt.number, &steps);
        }
    }
    result
}

/// Every run of every attempt the log holds, earlier manifests' included.
fn history(job: &Job) -> Vec<AttemptRun> {
    let mut runs = Vec::new();
    for attempt in job.earlier_attempts.iter().chain(&job.attempts) {
        let run = |status: &str, failure_kind| AttemptRun {
            attempt: attempt.number,
            manifest_hash: attempt.manifest_hash.clone(),
            status: status.to_string(),
            failure_kind,
        };
        for end in &attempt.runs {
            runs.push(match end {
                RunEnd::Interrupted => run("interrupted", None),
                RunEnd::Finished {
                    outcome: Outcome::Succeeded,
                    failure_kind,
                } => run("succeeded", *failure_kind),
                RunEnd::Finished {
                    outcome: Outcome::Failed,
                    failure_kind,
                } => run("failed", *failure_kind),
            });
        }
        if job
            .lifecycle
            .open
            .is_some_and(|open| open.attempt == attempt.number)
        {
            runs.push(run("running", None));
        }
    }
    runs
}

fn entry(e: &Entry) -> TimelineEntry {
    TimelineEntry {
        attempt: e.attempt,
        step: e.said.step,
        at_ms: e.at_ms,
        kind: e.said.kind.to_string(),
        detail: e.said.text.clone(),
        ok: e.said.ok,
        fields: None,
        observation: None,
        diff: None,
    }
}

#[cfg(test)]
#[path = "from_log_tests.rs"]
mod tests;
