//! Deriving the report model from event logs: a pure fold over records.
//! The only other input is a function that returns an attempt's patch text
//! (an artifact beside the log), so reports regenerated later from the same
//! logs are the same reports.

use std::collections::HashMap;

use super::model::{CheckResult, JobOutcome, JobResult, Report, TestVerdict, TimelineEntry};
use super::verdict_text;
use crate::log::{self, Event, Outcome, Record};
use crate::state::{JobState, replay};

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
    first_start_ms: Option<u64>,
    end_ms: Option<u64>,
    patch_attempt: Option<u32>,
    /// The attempt whose agent phase finished last.
    agent_done: Option<u32>,
    /// Steps (provider calls) per attempt, as the agent counts them: a
    /// failed provider call is a step too, as `status` says.
    steps: std::collections::BTreeMap<u32, u32>,
    /// The cause of the last failed verify (a `verify_failed` job's cause,
    /// whatever the provider said after it).
    verify_cause: Option<String>,
}

/// Builds the report; `patch_text(source path, job, attempt)` returns the
/// patch saved beside that log.
pub fn report_from_logs(
    sources: &[LogSource<'_>],
    generated_at_ms: u64,
    patch_text: &dyn Fn(&str, &str, u32) -> Option<String>,
) -> Report {
    let mut report = Report::new(
        generated_at_ms,
        sources.iter().map(|s| s.path.clone()).collect(),
    );
    let mut order: Vec<String> = Vec::new();
    let mut jobs: HashMap<String, Acc> = HashMap::new();
    let mut states: HashMap<String, JobState> = HashMap::new();
    for source in sources {
        // The outcome is the reducer's verdict, the same one `status` shows.
        let (state, _) = replay(source.records);
        for job in state.jobs() {
            states.insert(job.id.clone(), job.state);
        }
        for record in source.records {
            let Some(id) = record.job.as_deref() else {
                continue;
            };
            if let Event::Enqueued {
                max_attempts,
                family,
                base_job,
                provider,
                repeat,
                ..
            } = &record.event
            {
                let job = base_job.clone().unwrap_or_else(|| id.to_string());
                let family = family.clone().unwrap_or_else(|| job.clone());
                let mut result = JobResult::new(id, &job, &family);
                result.provider = provider.clone();
                result.repeat = *repeat;
                result.max_attempts = *max_attempts;
                if !jobs.contains_key(id) {
                    order.push(id.to_string());
                }
                jobs.insert(
                    id.to_string(),
                    Acc {
                        source: source.path.clone(),
                        result,
                        first_start_ms: None,
                        end_ms: None,
                        patch_attempt: None,
                        agent_done: None,
                        verify_cause: None,
                        steps: Default::default(),
                    },
                );
                continue;
            }
            if let Some(acc) = jobs.get_mut(id) {
                apply(acc, record);
            }
        }
    }
    for id in order {
        if let Some(mut acc) = jobs.remove(&id) {
            acc.result.outcome = match states.get(&id) {
                Some(JobState::Succeeded) => JobOutcome::Accepted,
                Some(JobState::Failed) => JobOutcome::Failed,
                Some(JobState::Cancelled) => JobOutcome::Cancelled,
                _ => JobOutcome::Pending,
            };
            if acc.result.outcome == JobOutcome::Accepted {
                acc.result.failure_kind = None;
            }
            if acc.result.failure_kind == Some(log::FailureKind::VerifyFailed)
                && acc.verify_cause.is_some()
            {
                acc.result.cause = acc.verify_cause.take();
            }
            if acc.result.outcome != JobOutcome::Failed {
                // Only a failure has a cause to show.
                acc.result.cause = None;
            }
            if let (Some(start), Some(end)) = (acc.first_start_ms, acc.end_ms) {
                acc.result.wall_ms = end.saturating_sub(start);
            }
            acc.result.steps = acc.steps.values().sum();
            acc.result.started_ms = acc.first_start_ms;
            acc.result.ended_ms = acc.end_ms;
            if let Some(n) = acc.patch_attempt {
                acc.result.patch = patch_text(&acc.source, &acc.result.instance, n);
            }
            report.jobs.push(acc.result);
        }
    }
    report
}

fn at(acc: &Acc, record: &Record) -> u64 {
    acc.first_start_ms
        .map_or(0, |s| record.ts_ms.saturating_sub(s))
}

fn apply(acc: &mut Acc, record: &Record) {
    let attempt = record.attempt.unwrap_or(0);
    let entry = |acc: &mut Acc, step: u32, kind: &str, detail: String, ok: bool| {
        let at_ms = at(acc, record);
        acc.result.timeline.push(TimelineEntry {
            attempt,
            step,
            at_ms,
            kind: kind.to_string(),
            detail,
            ok,
        });
    };
    match &record.event {
        Event::Replaced {
            max_attempts,
            family,
            ..
        } => {
            let (instance, job, provider, repeat) = (
                acc.result.instance.clone(),
                acc.result.job.clone(),
                acc.result.provider.clone(),
                acc.result.repeat,
            );
            let family = family.clone().unwrap_or_else(|| job.clone());
            acc.result = JobResult::new(&instance, &job, &family);
            acc.result.provider = provider;
            acc.result.repeat = repeat;
            acc.result.max_attempts = *max_attempts;
            acc.first_start_ms = None;
            acc.end_ms = None;
            acc.patch_attempt = None;
        }
        Event::AttemptStarted { .. } => {
            acc.first_start_ms.get_or_insert(record.ts_ms);
            if attempt <= acc.result.attempts && acc.agent_done != Some(attempt) {
                // The attempt starts over after a fault of the infrastructure
                // (same number, agent phase not done): the new run replaces
                // what the cut-short one did, whose start and interruption
                // stay as markers.
                acc.result.timeline.retain(|e| {
                    e.attempt != attempt || matches!(e.kind.as_str(), "attempt" | "interrupted")
                });
                acc.steps.remove(&attempt);
            }
            if attempt > acc.result.attempts {
                // A new attempt judges afresh (as the reducer does); a resumed
                // one keeps its number and has not reached acceptance yet.
                acc.result.acceptance = CheckResult::NotRun;
                acc.result.tests = TestVerdict::default();
                acc.result.cause = None;
            }
            acc.result.attempts = acc.result.attempts.max(attempt);
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
            acc.result.failure_kind = *failure_kind;
            acc.end_ms = Some(record.ts_ms);
            let detail = match failure_kind {
                Some(kind) => format!("attempt {attempt} failed: {kind}"),
                None => format!("attempt {attempt} succeeded"),
            };
            entry(acc, 0, "attempt", detail, *outcome == Outcome::Succeeded);
        }
        Event::AttemptInterrupted { cause, .. } => {
            if let Some(cause) = cause {
                acc.result.cause = Some(cause.clone());
            }
            acc.result.failure_kind = Some(log::FailureKind::Interrupted);
            acc.end_ms = Some(record.ts_ms);
            entry(
                acc,
                0,
                "interrupted",
                format!("attempt {attempt} interrupted (its runner stopped)"),
                false,
            );
        }
        Event::Cancelled {} => {
            acc.result.failure_kind = Some(log::FailureKind::Cancelled);
            acc.end_ms = Some(record.ts_ms);
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
        } => {
            acc.result.baseline = match result {
                log::CheckResult::Failed => CheckResult::Passed,
                log::CheckResult::Passed => CheckResult::Failed,
                log::CheckResult::Skipped => CheckResult::Skipped,
            };
            acc.result.baseline_reason = reason.clone();
            let ok = *result != log::CheckResult::Passed;
            let mut detail = format!("acceptance on the pristine source {}", result.as_str());
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
            let seen = acc.steps.entry(attempt).or_default();
            *seen = (*seen).max(*step);
            acc.result.provider_calls += 1;
            acc.result.input_tokens += input_tokens;
            acc.result.output_tokens += output_tokens;
            acc.result.provider_latency_ms += latency_ms;
            let ok = *kind != log::DecisionKind::Invalid;
            if !ok {
                acc.result.invalid_decisions += 1;
            }
            if let Some(reason) = reason {
                acc.result.cause = Some(format!("refused: {reason}"));
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
            entry(
                acc,
                *step,
                "retry",
                format!("provider retry {retry}: {reason}, waited {wait_ms} ms"),
                false,
            );
        }
        Event::ProviderFailed { step, message } => {
            let seen = acc.steps.entry(attempt).or_default();
            *seen = (*seen).max(*step);
            acc.result.cause = Some(message.clone());
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
            cause,
        } => {
            if let Some(cause) = cause {
                acc.result.cause = Some(cause.clone());
                acc.verify_cause = Some(cause.clone());
            }
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
            let seen = acc.steps.entry(attempt).or_default();
            *seen = (*seen).max(*steps);
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
            acc.result.cause = Some(reason.clone());
            entry(acc, 0, "patch", format!("patch rejected: {reason}"), false);
        }
        Event::Acceptance { result, verdict } => {
            acc.result.acceptance = match result {
                log::CheckResult::Passed => CheckResult::Passed,
                log::CheckResult::Failed => CheckResult::Failed,
                log::CheckResult::Skipped => CheckResult::Skipped,
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

#[cfg(test)]
#[path = "from_log_tests.rs"]
mod tests;
