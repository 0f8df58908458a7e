//! Rows and their renderings.

use std::collections::HashSet;

use serde::Serialize;

use crate::escape;
use crate::state::Snapshot;
use crate::state::{Job, JobState, describe};

/// Version of the `status --json` document.
pub(crate) const STATUS_SCHEMA_VERSION: u32 = 1;

/// One job as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StatusRow {
    pub id: String,
    pub family: String,
    pub state: String,
    /// Attempts started under the current manifest, of `max_attempts`.
    pub attempt: u32,
    pub max_attempts: u32,
    /// The number of the current or last attempt, as the log and
    /// `DATA/runs/<job>/<n>/` name it (numbers go on after a replaced
    /// manifest, so it can be higher than `attempt`).
    pub attempt_number: u32,
    /// Steps of every attempt, as the reports count them.
    pub steps: u32,
    pub last_event: String,
    /// The last decision of the current or last attempt, if any.
    pub last_step: Option<String>,
    pub failure_kind: Option<String>,
    /// Why a failed job failed, in one line: the reason of its final
    /// verdict (the failing tests, the failed verify, the limit hit...).
    pub cause: Option<String>,
    /// The baseline's verdict (`passed` when the pristine source fails).
    pub baseline: Option<String>,
    pub acceptance: Option<String>,
    /// Why the job is waiting for its provider, while it is.
    pub waiting: Option<String>,
    /// What a running job did last: its last event, in the words the
    /// progress display and the reports use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_said: Option<String>,
    /// The open attempt's runner is gone; the next writer records it interrupted.
    pub stale_lease: bool,
}

/// Everything `status` reports.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatusView {
    pub schema_version: u32,
    pub log: String,
    pub events: u64,
    pub jobs: Vec<StatusRow>,
    /// `{line, bytes}` of an unterminated last line, if any.
    pub torn_tail: Option<serde_json::Value>,
    /// `{line, dropped_bytes}` of each torn tail a writer cut off.
    pub repairs: Vec<serde_json::Value>,
    /// Events the reducer refused on replay, as `seq: reason`.
    pub anomalies: Vec<String>,
}

impl StatusView {
    /// Builds the view; `stale` holds `(job, attempt)` pairs without a live lease.
    pub(crate) fn new(snapshot: &Snapshot, stale: &HashSet<(String, u32)>) -> StatusView {
        let jobs = snapshot
            .state
            .jobs()
            .iter()
            .map(|job| row(job, stale))
            .collect();
        StatusView {
            schema_version: STATUS_SCHEMA_VERSION,
            log: snapshot.path.display().to_string(),
            events: snapshot.events,
            jobs,
            torn_tail: snapshot
                .torn
                .as_ref()
                .map(|t| serde_json::json!({"line": t.line, "bytes": t.bytes})),
            repairs: snapshot
                .state
                .repairs
                .iter()
                .map(|(line, bytes)| serde_json::json!({"line": line, "dropped_bytes": bytes}))
                .collect(),
            anomalies: snapshot
                .anomalies
                .iter()
                .map(|(seq, e)| format!("seq {seq}: {e}"))
                .collect(),
        }
    }

    /// Whether every job is terminal (and there is at least one).
    pub(crate) fn all_terminal(&self) -> bool {
        !self.jobs.is_empty()
            && self
                .jobs
                .iter()
                .all(|j| matches!(j.state.as_str(), "succeeded" | "failed" | "cancelled"))
    }
}

fn row(job: &Job, stale: &HashSet<(String, u32)>) -> StatusRow {
    let attempt = job.attempt();
    let last_step = attempt
        .and_then(|a| a.last_action)
        .map(|k| k.as_str().to_string());
    let stale_lease = job
        .lifecycle
        .open
        .is_some_and(|open| stale.contains(&(job.id.clone(), open.attempt)));
    StatusRow {
        id: job.id.clone(),
        family: job.family.clone(),
        state: job.lifecycle.state.as_str().to_string(),
        attempt: job.attempts_used(),
        max_attempts: job.lifecycle.max_attempts,
        attempt_number: job.lifecycle.attempts_started,
        steps: job.total_steps(),
        last_event: last_step
            .clone()
            .unwrap_or_else(|| job.last_event.to_string()),
        last_step,
        failure_kind: job.lifecycle.failure_kind.map(|k| k.as_str().to_string()),
        cause: job.failure_cause(),
        baseline: job.baseline.as_ref().map(|b| {
            crate::state::baseline_verdict(b.result)
                .as_str()
                .to_string()
        }),
        acceptance: attempt
            .and_then(|a| a.phase.judged())
            .map(|(r, _)| r.as_str().to_string()),
        waiting: job
            .waiting
            .as_ref()
            .map(|w| format!("{} (retry {})", w.reason, w.retries)),
        last_said: job
            .last
            .as_deref()
            .filter(|_| job.lifecycle.state == JobState::Running)
            .and_then(|record| describe(record, job))
            .map(|said| said.text),
        stale_lease,
    }
}

/// Notes below the table, one per line: what each running job did last
/// (`JOB: ` and the words of its last event), why each failed job failed
/// (`JOB: KIND: CAUSE`, as the batch summary says it), then about the log
/// itself (torn tail, repairs, anomalies, stale leases).
pub(crate) fn render_notes(view: &StatusView) -> Vec<String> {
    let mut notes = Vec::new();
    for r in &view.jobs {
        if let Some(said) = &r.last_said {
            notes.push(format!("{}: {said}", r.id));
        }
    }
    for r in &view.jobs {
        if let (Some(kind), Some(cause)) = (&r.failure_kind, &r.cause) {
            notes.push(format!("{}: {kind}: {cause}", r.id));
        }
    }
    if let Some(t) = &view.torn_tail {
        notes.push(format!(
            "note: the log's last line ({} bytes at line {}) is torn, a write cut short; the next writer will repair it",
            t["bytes"], t["line"]
        ));
    }
    for r in &view.repairs {
        notes.push(format!(
            "note: a writer repaired a torn tail at line {} ({} bytes dropped)",
            r["line"], r["dropped_bytes"]
        ));
    }
    for a in &view.anomalies {
        notes.push(format!(
            "warning: the log holds an illegal event, ignored on replay: {a}"
        ));
    }
    for r in view.jobs.iter().filter(|r| r.stale_lease) {
        notes.push(format!(
            "note: job {} attempt {} has no live runner; the next writer will record it interrupted",
            r.id, r.attempt_number
        ));
    }
    notes
        .into_iter()
        .map(|note| escape::line(&note).into_owned())
        .collect()
}

/// The `--json` document (exact values; hidden characters as `\uXXXX`).
pub(crate) fn render_json(view: &StatusView) -> String {
    escape::to_json_pretty(view).unwrap_or_default()
}
