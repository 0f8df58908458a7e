//! The report model from event logs. The report keeps no reading of the
//! log of its own: each log is folded once by the state module, and every
//! figure comes from its summary (state, kind, cause, steps, tokens, times,
//! the patch, the verdicts, every attempt) and its detail fold (the
//! timeline, in the words every view uses). The only other input is a
//! function that returns an attempt's artifacts (saved beside the log), so
//! reports regenerated later from the same logs are the same reports.

use super::model::{AttemptRun, CheckResult, JobOutcome, JobResult, Report, TestVerdict};
use crate::protocol::{self, FailureKind, Outcome};
use crate::state::{self, Details, Entry, Job, JobState, RunEnd};

/// One source log: its path (as shown in the report) and its fold.
#[derive(Debug)]
pub struct LogSource<'a> {
    pub path: String,
    pub details: &'a Details,
}

/// An attempt's files saved beside a log (`DATA/runs/<job>/<n>/`), as
/// reports read them.
pub trait Artifacts {
    /// The text of `file` (`patch.diff`, `transcript.jsonl`,
    /// `tests/excerpts.json`) of attempt `attempt` of `job`, beside the log
    /// at `source`; `None` when it is not there.
    fn read(&self, source: &str, job: &str, attempt: u32, file: &str) -> Option<String>;
    /// Whether that file is there, without reading it.
    fn exists(&self, source: &str, job: &str, attempt: u32, file: &str) -> bool;
    /// How much of a full trace's text the timelines keep: excerpts for a
    /// report of many jobs.
    fn texts(&self) -> super::Texts {
        super::Texts::Excerpts
    }
}

/// A log without its artifacts (a shard copied on its own, a test).
#[derive(Debug, Clone, Copy)]
pub struct NoArtifacts;

impl Artifacts for NoArtifacts {
    fn read(&self, _: &str, _: &str, _: u32, _: &str) -> Option<String> {
        None
    }

    fn exists(&self, _: &str, _: &str, _: u32, _: &str) -> bool {
        false
    }
}

/// The logs an attempt may have, in the order a job runs them; `verify-<k>`
/// logs follow the setup and baseline ones.
const LOGS_BEFORE: [&str; 2] = ["setup.log", "baseline.log"];
const LOGS_AFTER: [&str; 10] = [
    "agent.log",
    "agent-2.log",
    "agent-3.log",
    "agent-trajectory.json",
    "bridge.jsonl",
    "acceptance.log",
    crate::verdict::HARNESS_OUTPUT_FILE,
    "patch.diff",
    "transcript.jsonl",
    crate::verdict::EXCERPTS_FILE,
];
/// `verify-<k>.log` files looked for per attempt.
const VERIFY_LOGS: u32 = 64;

/// Builds the report from `sources`, reading their artifacts through
/// `artifacts`. An instance in several logs is reported as the last of
/// them has it, in the place of its first.
pub fn report_from_logs(
    sources: &[LogSource<'_>],
    generated_at_ms: u64,
    artifacts: &dyn Artifacts,
) -> Report {
    let mut report = Report::new(
        generated_at_ms,
        sources.iter().map(|s| s.path.clone()).collect(),
    );
    // Where each instance is in the report, so a sweep's report costs the
    // same per job at any size.
    let mut placed: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (index, source) in sources.iter().enumerate() {
        let details = source.details;
        for job in details.state.jobs() {
            let files = Files {
                artifacts,
                source: &source.path,
                job: &job.id,
            };
            let mut result = job_result(job, details.timeline(&job.id), &files);
            result.source = index;
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

/// One job's artifacts, beside its log.
struct Files<'a> {
    artifacts: &'a dyn Artifacts,
    source: &'a str,
    job: &'a str,
}

impl Files<'_> {
    fn read(&self, attempt: u32, file: &str) -> Option<String> {
        self.artifacts.read(self.source, self.job, attempt, file)
    }

    fn path_if_there(&self, attempt: u32, file: &str) -> Option<String> {
        self.artifacts
            .exists(self.source, self.job, attempt, file)
            .then(|| format!("runs/{}/{attempt}/{file}", self.job))
    }

    /// The logs and artifacts of attempt `last` found, with the baseline's
    /// and the setup's from the earliest attempt that has them when `last`
    /// has not (they run once per job).
    fn logs(&self, attempts: &[u32], last: u32) -> Vec<String> {
        let mut logs = Vec::new();
        for file in LOGS_BEFORE {
            let found = std::iter::once(last)
                .chain(attempts.iter().copied().filter(|n| *n != last))
                .find_map(|n| self.path_if_there(n, file));
            logs.extend(found);
        }
        logs.extend(
            (1..=VERIFY_LOGS).map_while(|k| self.path_if_there(last, &format!("verify-{k}.log"))),
        );
        logs.extend(
            LOGS_AFTER
                .iter()
                .filter_map(|f| self.path_if_there(last, f)),
        );
        logs
    }
}

/// Bytes of the prompt kept in a report.
pub const PROMPT_KEPT: usize = 16 * 1024;

/// One job's row: the summary's figures, the detail fold's timeline, and
/// the artifacts of its attempts.
fn job_result(job: &Job, timeline: &[Entry], files: &Files<'_>) -> JobResult {
    let base = job.base_job.as_deref().unwrap_or(&job.id);
    let mut result = JobResult::new(&job.id, base, &job.family);
    result.provider = job.provider.clone();
    result.repeat = job.repeat;
    result.max_attempts = job.lifecycle.max_attempts;
    result.manifest_hash = job.manifest_hash.clone();
    // The reducer's reading, the same one `status` shows.
    result.outcome = match job.lifecycle.state {
        JobState::Succeeded => JobOutcome::Succeeded,
        JobState::Failed => JobOutcome::Failed,
        JobState::Cancelled => JobOutcome::Cancelled,
        JobState::Queued | JobState::Running => JobOutcome::Pending,
    };
    result.failure_kind = match result.outcome {
        JobOutcome::Succeeded => None,
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
    result.resources = usage.resources;
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
        result.patch = files.read(n, "patch.diff");
    }
    let first = job.attempts.first();
    result.first_attempt_clean = result.outcome == JobOutcome::Succeeded
        && result.attempts == 1
        && !first.is_some_and(state::Attempt::was_interrupted);
    result.first_attempt_succeeded =
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
        result.agent = manifest.agent.clone();
    }
    if let Some(manifest) = job.manifest.as_ref().and_then(|m| m.manifest()) {
        result.prompt = Some(crate::verdict::cap(&manifest.prompt, PROMPT_KEPT));
        result.trace = Some(
            match manifest.trace {
                protocol::Trace::Metadata => "metadata",
                protocol::Trace::Full => "full",
            }
            .to_string(),
        );
    }
    if let Some(last) = job.attempt() {
        let numbers: Vec<u32> = job.attempts.iter().map(|a| a.number).collect();
        result.logs = files.logs(&numbers, last.number);
        if result.tests.failing_count + result.tests.missing_count > 0 {
            result.test_excerpts = files
                .read(last.number, crate::verdict::EXCERPTS_FILE)
                .and_then(|text| crate::verdict::read_excerpts(&text));
        }
        result.harness_output = files
            .read(last.number, crate::verdict::HARNESS_OUTPUT_FILE)
            .map(|text| crate::escape::block(&text).into_owned());
    }
    let transcript = |n: u32| {
        files
            .read(n, "transcript.jsonl")
            .map(|text| protocol::TranscriptLine::read_all(&text))
    };
    result.timeline =
        super::timeline::attempts(job, timeline, &transcript, files.artifacts.texts());
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

#[cfg(test)]
#[path = "from_log_tests.rs"]
mod tests;
