//! The words for an event: one line per event, the same in every view —
//! the progress display, the notes of `status` and `watch`, and the
//! timeline of the reports. Pure: the record and the job as the reducer
//! left it after the record.

use super::job::{Job, JobState};
use super::wording::{BaselineVerdict, baseline_verdict, baseline_wording};
use crate::protocol::{
    AcceptanceRecord, AgentFinishedRecord, AttemptFinishedRecord, AttemptInterruptedRecord,
    BaselineRecord, CommandRecord, DecisionRecord, EditRecord, PatchRecord, PatchRejectedRecord,
    ProviderFailedRecord, ProviderRetryRecord, SetupRecord, VerifyRecord,
};
use crate::protocol::{
    CheckResult, DecisionKind, EntryKind, Event, Outcome, Record, Resources, Verdict,
};
use crate::words::count;

/// What an event says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// What kind of entry it is in a timeline: the decision kind
    /// (`read_file`, `invalid`, ...) or the phase (`attempt`, `command`,
    /// `verify`, `baseline`, `acceptance`, `retry`, ...).
    pub kind: EntryKind,
    /// The step it belongs to (0 outside the agent's steps; the agent
    /// phase's end is at its last step).
    pub step: u32,
    /// One line. Text from outside the runtime (paths, causes, provider
    /// messages) is in it as recorded: views escape it.
    pub text: String,
    /// Whether it went as it should.
    pub ok: bool,
    /// A command's result in short (`exit 101`, `timed out`, `cancelled`,
    /// `killed by signal 9`): what a view names when the step failed.
    pub status: Option<String>,
}

/// What a command cost, in words (`cpu 1.13 s, memory peak 203.7 MiB,
/// pids peak 3`), the known figures only; `None` when none is known.
pub fn resources_words(used: &Resources) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(ms) = used.cpu_ms {
        parts.push(if ms < 1_000 {
            format!("cpu {ms} ms")
        } else {
            format!("cpu {:.2} s", ms as f64 / 1_000.0)
        });
    }
    if let Some(bytes) = used.peak_memory_bytes {
        const KIB: f64 = 1024.0;
        let n = bytes as f64;
        let size = if bytes < 1024 {
            format!("{bytes} B")
        } else if n < KIB * KIB {
            format!("{:.1} KiB", n / KIB)
        } else if n < KIB * KIB * KIB {
            format!("{:.1} MiB", n / (KIB * KIB))
        } else {
            format!("{:.2} GiB", n / (KIB * KIB * KIB))
        };
        parts.push(format!("memory peak {size}"));
    }
    if let Some(pids) = used.pids_peak {
        parts.push(format!("pids peak {pids}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Said of an acceptance run judged by its exit status alone.
pub const NOT_VERIFIED: &str = "not verified per test";

/// The words for `record`, where `job` is the job with the record applied;
/// `None` for events that are not part of a job's story (`enqueued`,
/// `replaced`, a repaired log).
pub fn describe(record: &Record, job: &Job) -> Option<Said> {
    let n = record.attempt.unwrap_or(0);
    let said = |kind: EntryKind, step: u32, text: String, ok: bool| {
        Some(Said {
            kind,
            step,
            text,
            ok,
            status: None,
        })
    };
    match &record.event {
        Event::Enqueued(_) | Event::Replaced(_) | Event::LogRepaired(_) => None,
        Event::AttemptStarted(_) => {
            said(EntryKind::Attempt, 0, format!("attempt {n} started"), true)
        }
        Event::AttemptFinished(AttemptFinishedRecord {
            outcome,
            failure_kind,
            ..
        }) => {
            // Every attempt's, as `status` and the reports count steps.
            let steps = job.total_steps();
            let steps = count(steps as usize, "step");
            let text = match (outcome, failure_kind) {
                (Outcome::Succeeded, _) => format!("attempt {n} succeeded ({steps})"),
                (Outcome::Failed, kind) => {
                    let kind = kind.map_or("failed", |k| k.as_str());
                    match job.failure_cause() {
                        Some(cause) => format!("attempt {n} failed: {kind} ({steps}): {cause}"),
                        None => format!("attempt {n} failed: {kind} ({steps})"),
                    }
                }
            };
            said(EntryKind::Attempt, 0, text, *outcome == Outcome::Succeeded)
        }
        Event::AttemptInterrupted(AttemptInterruptedRecord {
            by_runner, cause, ..
        }) => {
            let mut text = match (by_runner, cause) {
                (true, _) => format!("attempt {n} interrupted (stopped by its runner)"),
                (false, Some(cause)) => format!("attempt {n} interrupted: {cause}"),
                (false, None) => format!("attempt {n} interrupted (its runner stopped)"),
            };
            if job.lifecycle.state == JobState::Failed {
                text.push_str(&format!(
                    "; infra_error after {}",
                    crate::words::count(
                        job.lifecycle.restarts.saturating_sub(1) as usize,
                        "restart"
                    )
                ));
            }
            said(EntryKind::Interrupted, 0, text, false)
        }
        Event::Cancelled {} => said(EntryKind::Cancelled, 0, "cancelled".into(), false),
        Event::Retried {} => said(
            EntryKind::Retry,
            0,
            "requeued for another attempt".into(),
            true,
        ),
        Event::Setup(SetupRecord {
            result,
            duration_ms,
            reused,
            cause,
            ..
        }) => {
            let text = match (reused, cause) {
                (true, _) => "setup reused from the job cache".to_string(),
                (false, Some(cause)) => {
                    format!("setup {} in {duration_ms} ms: {cause}", result.as_str())
                }
                (false, None) => format!("setup {} in {duration_ms} ms", result.as_str()),
            };
            said(EntryKind::Setup, 0, text, *result != CheckResult::Failed)
        }
        Event::Baseline(BaselineRecord {
            result,
            inventory,
            reason,
            reused_from,
            ..
        }) => {
            let mut text = baseline_wording(*result).to_string();
            if let Some(inventory) = inventory {
                text.push_str(&format!(
                    " ({} fail-to-pass, {} pass-to-pass)",
                    inventory.fail_to_pass.len(),
                    inventory.pass_to_pass.len()
                ));
            }
            if let Some(reason) = reason {
                text.push_str(&format!(": {reason}"));
            }
            if let Some(from) = reused_from {
                text.push_str(&format!(
                    "; reused from {} attempt {}",
                    from.job, from.attempt
                ));
            }
            let ok = !matches!(
                baseline_verdict(*result),
                BaselineVerdict::Failed | BaselineVerdict::Error
            );
            said(EntryKind::Baseline, 0, text, ok)
        }
        // A model call is told with the decisions it brought.
        Event::ModelCall(_) => None,
        Event::Decision(DecisionRecord {
            step,
            kind,
            subject,
            reason,
            call,
        }) => {
            let call = call
                .as_ref()
                .or_else(|| job.attempt().and_then(|a| a.last_call.as_ref()));
            let usage = call.map_or_else(
                || "no model call".to_string(),
                |c| {
                    format!(
                        "{} in / {} out, {} ms",
                        c.input_tokens, c.output_tokens, c.latency_ms
                    )
                },
            );
            let text = match (kind, reason) {
                // A refusal says why first, as the model was told.
                (DecisionKind::Invalid, Some(reason)) => {
                    format!("step {step}: invalid decision: {reason} ({usage})")
                }
                (_, Some(reason)) => format!("step {step}: {kind} ({usage}): {reason}"),
                // The headline names what it acts on: `read_file src/lib.rs`.
                (_, None) => match subject {
                    Some(subject) => format!("step {step}: {kind} {subject} ({usage})"),
                    None => format!("step {step}: {kind} ({usage})"),
                },
            };
            said((*kind).into(), *step, text, *kind != DecisionKind::Invalid)
        }
        Event::ProviderRetry(ProviderRetryRecord {
            step,
            retry,
            reason,
            wait_ms,
        }) => {
            let provider = job.provider.as_deref().unwrap_or("the provider");
            let waited = job
                .waiting
                .as_ref()
                .map_or(0, |w| record.ts_ms.saturating_sub(w.since_ms) / 1000);
            let text = format!(
                "waiting for {provider}: {reason} (provider retry {retry}, waiting {waited} s so far, next try in {:.1} s)",
                *wait_ms as f64 / 1000.0
            );
            said(EntryKind::Retry, *step, text, false)
        }
        // The message names the provider already ("openai provider: ...").
        Event::ProviderFailed(ProviderFailedRecord { step, message, .. }) => {
            said(EntryKind::ProviderError, *step, message.clone(), false)
        }
        Event::Command(CommandRecord {
            step,
            role,
            program,
            argc,
            exit_code,
            signal,
            duration_ms,
            timed_out,
            cancelled,
            resources,
            ..
        }) => {
            let status = match (timed_out, cancelled, exit_code, signal) {
                (true, _, _, _) => "timed out".to_string(),
                (_, true, _, _) => "cancelled".to_string(),
                (_, _, Some(code), _) => format!("exit {code}"),
                (_, _, None, Some(signal)) => format!("killed by signal {signal}"),
                (_, _, None, None) => "killed".to_string(),
            };
            let ok = *exit_code == Some(0) && !timed_out && !cancelled;
            // `argc` counts the program too.
            let args = count((*argc as usize).saturating_sub(1), "arg");
            let mut text = format!("{role} `{program}` ({args}) {status} in {duration_ms} ms");
            if let Some(used) = resources.as_ref().and_then(resources_words) {
                text.push_str(", ");
                text.push_str(&used);
            }
            Some(Said {
                status: Some(status),
                ..said(EntryKind::Command, *step, text, ok)?
            })
        }
        Event::Edit(EditRecord {
            step, path, bytes, ..
        }) => said(
            EntryKind::Edit,
            *step,
            format!("edited {path} ({})", count(*bytes as usize, "byte")),
            true,
        ),
        Event::Verify(VerifyRecord {
            step,
            trigger,
            passed,
            cause,
        }) => {
            let text = match (passed, cause) {
                (true, _) => format!("verify ({trigger}) passed"),
                (false, Some(cause)) => format!("verify ({trigger}) failed: {cause}"),
                (false, None) => format!("verify ({trigger}) failed"),
            };
            said(EntryKind::Verify, *step, text, *passed)
        }
        Event::AgentFinished(AgentFinishedRecord {
            outcome,
            failure_kind,
            steps,
            ..
        }) => {
            let text = match failure_kind {
                Some(kind) => format!(
                    "agent phase failed after {}: {kind}",
                    count(*steps as usize, "step")
                ),
                None => format!("agent phase done after {}", count(*steps as usize, "step")),
            };
            said(
                EntryKind::Agent,
                *steps,
                text,
                *outcome == Outcome::Succeeded,
            )
        }
        Event::Patch(PatchRecord {
            bytes,
            files,
            partial,
            ..
        }) => {
            let partial = if *partial { " (partial diff)" } else { "" };
            said(
                EntryKind::Patch,
                0,
                format!(
                    "patch: {}, {bytes} bytes{partial}",
                    crate::words::count(*files as usize, "file")
                ),
                true,
            )
        }
        Event::PatchRejected(PatchRejectedRecord { reason }) => said(
            EntryKind::Patch,
            0,
            format!("patch rejected: {reason}"),
            false,
        ),
        Event::Acceptance(AcceptanceRecord {
            result, verdict, ..
        }) => {
            let mut text = format!("acceptance {}", result.as_str());
            if let Some(summary) = verdict_summary(*result, verdict.as_ref()) {
                text.push_str(&format!(": {summary}"));
            }
            said(
                EntryKind::Acceptance,
                0,
                text,
                *result == CheckResult::Passed,
            )
        }
    }
}

/// `F2P 1/2, P2P 3/3` for a verdict read per test, [`NOT_VERIFIED`] for
/// a run judged by its exit status, nothing for one that did not run.
pub fn verdict_summary(result: CheckResult, verdict: Option<&Verdict>) -> Option<String> {
    match verdict {
        Some(v) => Some(format!(
            "F2P {}/{}, P2P {}/{}",
            v.f2p_passed, v.f2p_total, v.p2p_passed, v.p2p_total
        )),
        None => matches!(result, CheckResult::Passed | CheckResult::Failed)
            .then(|| NOT_VERIFIED.to_string()),
    }
}

/// The evidence of the integrity record an `attempt_finished` carries, one
/// entry each (forged canaries, then the signals kept), placed before the
/// attempt's end in the timeline.
pub(super) fn integrity_evidence(record: &Record) -> Vec<Said> {
    let Event::AttemptFinished(AttemptFinishedRecord {
        integrity: Some(integrity),
        ..
    }) = &record.event
    else {
        return Vec::new();
    };
    let said = |text: String, ok: bool| Said {
        kind: EntryKind::Integrity,
        step: 0,
        text,
        ok,
        status: None,
    };
    let mut all: Vec<Said> = integrity
        .forged
        .iter()
        .cloned()
        .chain(integrity.signals.iter().map(crate::protocol::Signal::line))
        .map(|text| said(text, false))
        .collect();
    if !integrity.stray_files.is_empty() {
        all.push(said(
            format!(
                "stray files (a note, not a signal; not in the patch): {}",
                integrity.stray_files.join(" ")
            ),
            true,
        ));
    }
    all
}
