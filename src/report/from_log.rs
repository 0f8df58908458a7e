//! Deriving the report model from event logs: a pure fold over records.
//! The only other input is a function that returns an attempt's patch text
//! (an artifact beside the log), so reports regenerated later from the same
//! logs are the same reports.
//!
//! The facts `status` and the progress display also show (state, failure
//! kind, steps, cause, times) are read from the reducer's job, applied to
//! the same records in the same pass; this fold adds only what is the
//! report's own (the timeline, token sums, the patch). A record the
//! reducer refuses is skipped here too.

use std::collections::HashMap;

use super::model::{
    AttemptRun, CheckResult, JobOutcome, JobResult, Report, TestVerdict, TimelineEntry,
};
use super::verdict_text;
use crate::log::{self, Event, Outcome, Record};
use crate::state::{self, Job, JobState, State};

/// One source log: its path (as shown in the report) and its records.
#[derive(Debug)]
pub struct LogSource<'a> {
    pub path: String,
    pub records: &'a [Record],
}

#[derive(Debug)]
struct Acc {
    source: String,
    result: JobResult,
    patch_attempt: Option<u32>,
    /// The attempt whose agent phase finished last.
    agent_done: Option<u32>,
    /// Attempts numbered before the current manifest (`replaced`).
    attempt_base: u32,
}

/// Builds the report; `artifact(source path, job, attempt, file)` returns
/// an attempt's artifact saved beside that log (`patch.diff`, and with a
/// full trace `transcript.jsonl`).
pub fn report_from_logs(
    sources: &[LogSource<'_>],
    generated_at_ms: u64,
    artifact: &dyn Fn(&str, &str, u32, &str) -> Option<String>,
) -> Report {
    let mut report = Report::new(
        generated_at_ms,
        sources.iter().map(|s| s.path.clone()).collect(),
    );
    let mut order: Vec<String> = Vec::new();
    let mut jobs: HashMap<String, Acc> = HashMap::new();
    let mut finals: HashMap<String, Job> = HashMap::new();
    for source in sources {
        let mut state = State::default();
        for record in source.records {
            if state.apply(record).is_err() {
                continue;
            }
            let Some(id) = record.job.as_deref() else {
                continue;
            };
            let Some(job) = state.job(id) else {
                continue;
            };
            if let Event::Enqueued {
                max_attempts,
                family,
                base_job,
                provider,
                repeat,
                manifest_hash,
                ..
            } = &record.event
            {
                let job = base_job.clone().unwrap_or_else(|| id.to_string());
                let family = family.clone().unwrap_or_else(|| job.clone());
                let mut result = JobResult::new(id, &job, &family);
                result.provider = provider.clone();
                result.repeat = *repeat;
                result.max_attempts = *max_attempts;
                result.manifest_hash = manifest_hash.clone();
                if !jobs.contains_key(id) {
                    order.push(id.to_string());
                }
                jobs.insert(
                    id.to_string(),
                    Acc {
                        source: source.path.clone(),
                        result,
                        patch_attempt: None,
                        agent_done: None,
                        attempt_base: 0,
                    },
                );
                continue;
            }
            if let Some(acc) = jobs.get_mut(id) {
                apply(acc, record, job);
            }
        }
        for job in state.jobs() {
            finals.insert(job.id.clone(), job.clone());
        }
    }
    for id in order {
        if let (Some(mut acc), Some(job)) = (jobs.remove(&id), finals.get(&id)) {
            // The reducer's reading, the same one `status` shows.
            acc.result.outcome = match job.state {
                JobState::Succeeded => JobOutcome::Accepted,
                JobState::Failed => JobOutcome::Failed,
                JobState::Cancelled => JobOutcome::Cancelled,
                JobState::Queued | JobState::Running => JobOutcome::Pending,
            };
            acc.result.failure_kind = match acc.result.outcome {
                JobOutcome::Accepted => None,
                _ => job.failure_kind,
            };
            acc.result.cause = job.failure_cause();
            if let (Some(start), Some(end)) = (job.first_started_ms, job.ended_ms) {
                acc.result.wall_ms = end.saturating_sub(start);
            }
            acc.result.steps = job.total_steps();
            acc.result.first_attempt_clean = acc.result.outcome == JobOutcome::Accepted
                && acc.result.attempts == 1
                && !acc.result.timeline.iter().any(|e| e.kind == "interrupted");
            acc.result.cost_usd = job.price.map(|_| job.cost_usd);
            acc.result.started_ms = job.first_started_ms;
            acc.result.ended_ms = job.ended_ms;
            if let Some(n) = acc.patch_attempt {
                acc.result.patch = artifact(&acc.source, &acc.result.instance, n, "patch.diff");
            }
            for n in acc.attempt_base + 1..=acc.attempt_base + acc.result.attempts {
                if let Some(text) =
                    artifact(&acc.source, &acc.result.instance, n, "transcript.jsonl")
                {
                    let steps = super::trajectory::read_transcript(&text);
                    super::trajectory::attach(&mut acc.result.timeline, n, &steps);
                }
            }
            report.jobs.push(acc.result);
        }
    }
    report
}

/// Adds what `record` means for the report; `job` is the reducer's job
/// with the record applied.
fn apply(acc: &mut Acc, record: &Record, job: &Job) {
    let attempt = record.attempt.unwrap_or(0);
    let at_ms = job
        .first_started_ms
        .map_or(0, |s| record.ts_ms.saturating_sub(s));
    let entry = |acc: &mut Acc, step: u32, kind: &str, detail: String, ok: bool| {
        acc.result.timeline.push(TimelineEntry {
            attempt,
            step,
            at_ms,
            kind: kind.to_string(),
            detail,
            ok,
            fields: None,
            observation: None,
            diff: None,
        });
    };
    match &record.event {
        Event::Replaced {
            max_attempts,
            family,
            manifest_hash,
            attempts_before,
            ..
        } => {
            let (instance, job, provider, repeat) = (
                acc.result.instance.clone(),
                acc.result.job.clone(),
                acc.result.provider.clone(),
                acc.result.repeat,
            );
            let family = family.clone().unwrap_or_else(|| job.clone());
            // The earlier attempts stay in the history; the rest is the
            // new manifest's.
            let history = std::mem::take(&mut acc.result.attempt_history);
            acc.result = JobResult::new(&instance, &job, &family);
            acc.result.provider = provider;
            acc.result.repeat = repeat;
            acc.result.max_attempts = *max_attempts;
            acc.result.manifest_hash = Some(manifest_hash.clone());
            acc.result.attempt_history = history;
            acc.patch_attempt = None;
            acc.attempt_base = *attempts_before;
        }
        Event::AttemptStarted { .. } => {
            // Counted from the current manifest's first attempt.
            let nth = attempt.saturating_sub(acc.attempt_base);
            acc.result.attempt_history.push(AttemptRun {
                attempt,
                manifest_hash: acc.result.manifest_hash.clone(),
                status: "running".into(),
                failure_kind: None,
            });
            if nth <= acc.result.attempts && acc.agent_done != Some(attempt) {
                // The attempt starts over after a fault of the infrastructure
                // (same number, agent phase not done): the new run replaces
                // what the cut-short one did, whose start and interruption
                // stay as markers.
                acc.result.timeline.retain(|e| {
                    e.attempt != attempt || matches!(e.kind.as_str(), "attempt" | "interrupted")
                });
            }
            if nth > acc.result.attempts {
                // A new attempt judges afresh (as the reducer does); a resumed
                // one keeps its number and has not reached acceptance yet.
                acc.result.acceptance = CheckResult::NotRun;
                acc.result.tests = TestVerdict::default();
            }
            acc.result.attempts = acc.result.attempts.max(nth);
            entry(
                acc,
                0,
                "attempt",
                format!("attempt {attempt} started"),
                true,
            );
        }
        Event::AttemptFinished {
            outcome,
            failure_kind,
        } => {
            let detail = match failure_kind {
                Some(kind) => format!("attempt {attempt} failed: {kind}"),
                None => format!("attempt {attempt} succeeded"),
            };
            let status = match outcome {
                Outcome::Succeeded => "succeeded",
                Outcome::Failed => "failed",
            };
            end_run(acc, attempt, status, *failure_kind);
            if attempt.saturating_sub(acc.attempt_base) == 1 {
                acc.result.first_attempt_accepted = match (outcome, failure_kind) {
                    (Outcome::Succeeded, _) => Some(true),
                    // Not the model's doing: no sample.
                    (_, Some(kind))
                        if kind.is_infrastructure()
                            || matches!(
                                kind,
                                log::FailureKind::Cancelled | log::FailureKind::Interrupted
                            ) =>
                    {
                        None
                    }
                    (Outcome::Failed, _) => Some(false),
                };
            }
            entry(acc, 0, "attempt", detail, *outcome == Outcome::Succeeded);
        }
        Event::AttemptInterrupted { .. } => {
            end_run(acc, attempt, "interrupted", None);
            entry(
                acc,
                0,
                "interrupted",
                format!("attempt {attempt} interrupted (its runner stopped)"),
                false,
            );
        }
        Event::Cancelled {} => {
            entry(acc, 0, "cancelled", "cancelled".into(), false);
        }
        Event::Retried {} => {
            entry(acc, 0, "retry", "requeued for another attempt".into(), true);
        }
        Event::Setup {
            result,
            duration_ms,
            reused,
            cause,
            ..
        } => {
            if let Some(cause) = cause {
                acc.result.cause = Some(cause.clone());
            }
            let detail = if *reused {
                "setup reused from the job cache".to_string()
            } else {
                format!("setup {} in {duration_ms} ms", result.as_str())
            };
            entry(acc, 0, "setup", detail, *result != log::CheckResult::Failed);
        }
        Event::Baseline {
            result,
            inventory,
            reason,
            ..
        } => {
            let verdict = state::baseline_verdict(*result);
            acc.result.baseline = CheckResult::from(verdict);
            acc.result.baseline_reason = reason.clone();
            let ok = !matches!(
                verdict,
                state::BaselineVerdict::Failed | state::BaselineVerdict::Error
            );
            let mut detail = state::baseline_wording(*result).to_string();
            if let Some(inventory) = inventory {
                detail.push_str(&format!(
                    " ({} fail-to-pass, {} pass-to-pass)",
                    inventory.fail_to_pass.len(),
                    inventory.pass_to_pass.len()
                ));
            }
            if let Some(reason) = reason {
                detail.push_str(&format!(": {reason}"));
            }
            entry(acc, 0, "baseline", detail, ok);
        }
        Event::Decision {
            step,
            kind,
            reason,
            input_tokens,
            output_tokens,
            latency_ms,
            ..
        } => {
            acc.result.provider_calls += 1;
            // Sums saturate: a log of an older version (or a hand-made
            // one) may hold any count.
            acc.result.input_tokens = acc.result.input_tokens.saturating_add(*input_tokens);
            acc.result.output_tokens = acc.result.output_tokens.saturating_add(*output_tokens);
            acc.result.provider_latency_ms =
                acc.result.provider_latency_ms.saturating_add(*latency_ms);
            let ok = *kind != log::DecisionKind::Invalid;
            if !ok {
                acc.result.invalid_decisions += 1;
            }
            let detail = match reason {
                Some(reason) => reason.clone(),
                None => {
                    format!("{kind} ({input_tokens} in / {output_tokens} out, {latency_ms} ms)")
                }
            };
            entry(acc, *step, kind.as_str(), detail, ok);
        }
        Event::ProviderRetry {
            step,
            retry,
            reason,
            wait_ms,
        } => {
            acc.result.time.wait_ms = acc.result.time.wait_ms.saturating_add(*wait_ms);
            entry(
                acc,
                *step,
                "retry",
                format!("provider retry {retry}: {reason}, waited {wait_ms} ms"),
                false,
            );
        }
        Event::ProviderFailed { step, message, .. } => {
            entry(acc, *step, "provider_error", message.clone(), false);
        }
        Event::Command {
            step,
            role,
            program,
            argc,
            exit_code,
            signal,
            duration_ms,
            timed_out,
            cancelled,
            ..
        } => {
            let status = if *timed_out {
                "timed out".to_string()
            } else if *cancelled {
                "cancelled".to_string()
            } else if let Some(code) = exit_code {
                format!("exit {code}")
            } else {
                format!("signal {}", signal.unwrap_or(0))
            };
            let ok = *exit_code == Some(0) && !timed_out && !cancelled;
            let spent = match role {
                log::CommandFor::Tool => &mut acc.result.time.tool_ms,
                log::CommandFor::Verify => &mut acc.result.time.verify_ms,
                log::CommandFor::Setup => &mut acc.result.time.setup_ms,
                log::CommandFor::Baseline | log::CommandFor::Acceptance => {
                    &mut acc.result.time.acceptance_ms
                }
            };
            *spent = spent.saturating_add(*duration_ms);
            entry(
                acc,
                *step,
                "command",
                format!("{role}: {program} ({argc} args) {status} in {duration_ms} ms"),
                ok,
            );
        }
        Event::Edit {
            step, path, bytes, ..
        } => {
            entry(acc, *step, "edit", format!("{path} ({bytes} bytes)"), true);
        }
        Event::Verify {
            step,
            trigger,
            passed,
            ..
        } => {
            let verdict = if *passed { "passed" } else { "failed" };
            entry(
                acc,
                *step,
                "verify",
                format!("verify ({trigger}) {verdict}"),
                *passed,
            );
        }
        Event::AgentFinished {
            outcome,
            failure_kind,
            steps,
        } => {
            acc.agent_done = Some(attempt);
            let detail = match failure_kind {
                Some(kind) => format!("agent phase failed after {steps} steps: {kind}"),
                None => format!("agent phase done after {steps} steps"),
            };
            entry(acc, *steps, "agent", detail, *outcome == Outcome::Succeeded);
        }
        Event::Patch { bytes, files, .. } => {
            acc.result.patch_bytes = *bytes;
            acc.result.patch_files = *files;
            acc.patch_attempt = Some(attempt);
            entry(
                acc,
                0,
                "patch",
                format!("{files} file(s), {bytes} bytes"),
                true,
            );
        }
        Event::PatchRejected { reason } => {
            entry(acc, 0, "patch", format!("patch rejected: {reason}"), false);
        }
        Event::Acceptance { result, verdict } => {
            acc.result.acceptance = match result {
                log::CheckResult::Passed => CheckResult::Passed,
                log::CheckResult::Failed => CheckResult::Failed,
                log::CheckResult::Skipped => CheckResult::Skipped,
                log::CheckResult::Error => CheckResult::Error,
            };
            acc.result.tests = verdict.as_ref().map(TestVerdict::of).unwrap_or_default();
            let mut detail = format!("acceptance {}", result.as_str());
            if let Some(text) = verdict_text::summary(&acc.result) {
                detail.push_str(&format!(": {text}"));
            }
            entry(
                acc,
                0,
                "acceptance",
                detail,
                *result == log::CheckResult::Passed,
            );
        }
        Event::Enqueued { .. } | Event::LogRepaired { .. } => {}
    }
}

/// Records how the run of `attempt` that is still open in the history ended.
fn end_run(acc: &mut Acc, attempt: u32, status: &str, failure_kind: Option<log::FailureKind>) {
    if let Some(run) = acc
        .result
        .attempt_history
        .iter_mut()
        .rev()
        .find(|r| r.attempt == attempt && r.status == "running")
    {
        run.status = status.to_string();
        run.failure_kind = failure_kind;
    }
}

#[cfg(test)]
#[path = "from_log_tests.rs"]
mod tests;
