//! Rows and their renderings.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Serialize;

use crate::escape;
use crate::state::{Illegal, Snapshot, Summaries, Summary};

/// Version of the `status --json` document.
pub(crate) const STATUS_SCHEMA_VERSION: u32 = 1;

/// One job as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StatusRow {
    pub id: String,
    pub family: String,
    pub state: &'static str,
    /// Attempts started under the current manifest, of `max_attempts`.
    pub attempt: u32,
    pub max_attempts: u32,
    /// The number of the current or last attempt, as the log and
    /// `DATA/runs/<job>/<n>/` name it (numbers go on after a replaced
    /// manifest, so it can be higher than `attempt`).
    pub attempt_number: u32,
    /// Steps of every attempt, as the reports count them.
    pub steps: u32,
    pub last_event: Cow<'static, str>,
    /// The last decision of the current or last attempt, if any.
    pub last_step: Option<&'static str>,
    pub failure_kind: Option<&'static str>,
    /// Why a failed job failed, in one line: the reason of its final
    /// verdict (the failing tests, the failed verify, the limit hit...).
    pub cause: Option<String>,
    /// The baseline's verdict (`passed` when the pristine source fails).
    pub baseline: Option<&'static str>,
    pub acceptance: Option<&'static str>,
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

/// What a view says of the log itself.
struct Log<'a> {
    path: &'a std::path::Path,
    events: u64,
    torn: Option<&'a crate::log::TornTail>,
    anomalies: &'a [(u64, Illegal)],
}

impl StatusView {
    /// The view of a log folded into its summaries; `stale` holds
    /// `(job, attempt)` pairs without a live lease.
    pub(crate) fn new(
        snapshot: crate::log::Snapshot<Summaries>,
        stale: &HashSet<(String, u32)>,
    ) -> StatusView {
        let crate::log::Snapshot {
            path,
            state,
            anomalies,
            torn,
            events,
            ..
        } = snapshot;
        let repairs: Vec<(u64, u64)> = state.repairs().copied().collect();
        let log = Log {
            path: &path,
            events,
            torn: torn.as_ref(),
            anomalies: &anomalies,
        };
        StatusView::build(log, state.into_rows().into_iter(), repairs.iter(), stale)
    }

    /// The view of a log folded into its whole state.
    pub(crate) fn of_state(snapshot: &Snapshot, stale: &HashSet<(String, u32)>) -> StatusView {
        let log = Log {
            path: &snapshot.path,
            events: snapshot.events,
            torn: snapshot.torn.as_ref(),
            anomalies: &snapshot.anomalies,
        };
        let rows = snapshot.state.jobs().iter().map(Summary::of);
        StatusView::build(log, rows, snapshot.state.repairs.iter(), stale)
    }

    fn build<'a>(
        snapshot: Log<'_>,
        rows: impl Iterator<Item = Summary>,
        repairs: impl Iterator<Item = &'a (u64, u64)>,
        stale: &HashSet<(String, u32)>,
    ) -> StatusView {
        StatusView {
            schema_version: STATUS_SCHEMA_VERSION,
            log: snapshot.path.display().to_string(),
            events: snapshot.events,
            jobs: rows.map(|summary| row(summary, stale)).collect(),
            torn_tail: snapshot
                .torn
                .map(|t| serde_json::json!({"line": t.line, "bytes": t.bytes})),
            repairs: repairs
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
                .all(|j| matches!(j.state, "succeeded" | "failed" | "cancelled"))
    }
}

fn row(summary: Summary, stale: &HashSet<(String, u32)>) -> StatusRow {
    let last_step = summary.last_step.map(|k| k.as_str());
    let stale_lease = summary
        .open
        .is_some_and(|open| stale.contains(&(summary.id.clone(), open.attempt)));
    StatusRow {
        state: summary.state.as_str(),
        attempt: summary.attempts_used,
        max_attempts: summary.max_attempts,
        attempt_number: summary.attempt_number,
        steps: summary.steps,
        last_event: last_step.map_or(summary.last_event, Cow::Borrowed),
        last_step,
        failure_kind: summary.failure_kind.map(|k| k.as_str()),
        cause: summary.cause,
        baseline: summary
            .baseline
            .map(|result| crate::state::baseline_verdict(result).as_str()),
        acceptance: summary.acceptance.map(|r| r.as_str()),
        waiting: (summary.waiting).map(|(reason, retries)| format!("{reason} (retry {retries})")),
        last_said: summary.last_said,
        stale_lease,
        id: summary.id,
        family: summary.family,
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
