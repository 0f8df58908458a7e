//! Rows and their renderings.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::escape;
use crate::state::{Illegal, JobState, Snapshot, Summaries, Summary};

/// Version of the `status --json` document.
pub(crate) const STATUS_SCHEMA_VERSION: u32 = 1;

/// One job as `status` shows it: made from its [`Summary`] when it is
/// drawn or written, borrowing from it, so a view of many jobs holds each
/// job once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StatusRow<'a> {
    pub id: &'a str,
    pub family: &'a str,
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
    pub last_event: &'a str,
    /// The last decision of the current or last attempt, if any.
    pub last_step: Option<&'static str>,
    pub failure_kind: Option<&'static str>,
    /// Why a failed job failed, in one line: the reason of its final
    /// verdict (the failing tests, the failed verify, the limit hit...).
    pub cause: Option<&'a str>,
    /// The baseline's verdict (`passed` when the pristine source fails).
    pub baseline: Option<&'static str>,
    pub acceptance: Option<&'static str>,
    /// Why the job is waiting for its provider, while it is.
    pub waiting: Option<String>,
    /// What a running job did last: its last event, in the words the
    /// progress display and the reports use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_said: Option<&'a str>,
    /// The open attempt's runner is gone; the next writer records it interrupted.
    pub stale_lease: bool,
}

/// Everything `status` reports.
#[derive(Debug, Clone)]
pub(crate) struct StatusView {
    pub log: String,
    pub events: u64,
    /// Every job, in the order they were enqueued.
    pub jobs: Vec<Summary>,
    /// The open attempt of each job whose runner is gone, by job.
    pub stale: HashMap<String, u32>,
    /// `{line, bytes}` of an unterminated last line, if any.
    pub torn_tail: Option<serde_json::Value>,
    /// `{line, dropped_bytes}` of each torn tail a writer cut off.
    pub repairs: Vec<serde_json::Value>,
    /// Events the reducer refused on replay, as `seq: reason`.
    pub anomalies: Vec<String>,
    /// Records taken from the writers' checkpoint without being read.
    pub checkpointed: u64,
}

/// What a view says of the log itself.
struct Log<'a> {
    path: &'a std::path::Path,
    events: u64,
    torn: Option<&'a crate::log::TornTail>,
    anomalies: &'a [(u64, Illegal)],
    checkpointed: u64,
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
            checkpointed,
            ..
        } = snapshot;
        let repairs: Vec<(u64, u64)> = state.repairs().copied().collect();
        let log = Log {
            path: &path,
            events,
            torn: torn.as_ref(),
            anomalies: &anomalies,
            checkpointed,
        };
        StatusView::build(log, state.into_rows(), repairs.iter(), stale)
    }

    /// The view of a log folded into its whole state.
    pub(crate) fn of_state(snapshot: &Snapshot, stale: &HashSet<(String, u32)>) -> StatusView {
        let log = Log {
            path: &snapshot.path,
            events: snapshot.events,
            torn: snapshot.torn.as_ref(),
            anomalies: &snapshot.anomalies,
            checkpointed: snapshot.checkpointed,
        };
        let rows = snapshot.state.jobs().iter().map(Summary::of).collect();
        StatusView::build(log, rows, snapshot.state.repairs.iter(), stale)
    }

    fn build<'a>(
        snapshot: Log<'_>,
        jobs: Vec<Summary>,
        repairs: impl Iterator<Item = &'a (u64, u64)>,
        stale: &HashSet<(String, u32)>,
    ) -> StatusView {
        StatusView {
            log: snapshot.path.display().to_string(),
            events: snapshot.events,
            jobs,
            stale: (stale.iter())
                .map(|(id, attempt)| (id.clone(), *attempt))
                .collect(),
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
            checkpointed: snapshot.checkpointed,
        }
    }

    /// Whether every job is terminal (and there is at least one).
    pub(crate) fn all_terminal(&self) -> bool {
        !self.jobs.is_empty()
            && (self.jobs.iter()).all(|j| {
                matches!(
                    j.state,
                    JobState::Succeeded | JobState::Failed | JobState::Cancelled
                )
            })
    }

    /// Every job's row, in order.
    pub(crate) fn rows(&self) -> impl ExactSizeIterator<Item = StatusRow<'_>> + Clone {
        self.jobs.iter().map(|summary| self.row(summary))
    }

    /// `summary`'s row.
    pub(crate) fn row<'a>(&self, summary: &'a Summary) -> StatusRow<'a> {
        let last_step = summary.last_step.map(|k| k.as_str());
        let stale_lease = (summary.open)
            .is_some_and(|open| self.stale.get(summary.id.as_str()) == Some(&open.attempt));
        StatusRow {
            id: &summary.id,
            family: summary.family(),
            state: summary.state.as_str(),
            attempt: summary.attempts_used,
            max_attempts: summary.max_attempts,
            attempt_number: summary.attempt_number,
            steps: summary.steps,
            last_event: last_step.unwrap_or(&*summary.last_event),
            last_step,
            failure_kind: summary.failure_kind.map(|k| k.as_str()),
            cause: summary.cause.as_deref(),
            baseline: summary
                .baseline
                .map(|result| crate::state::baseline_verdict(result).as_str()),
            acceptance: summary.acceptance.map(|r| r.as_str()),
            waiting: (summary.waiting.as_ref())
                .map(|(reason, retries)| format!("{reason} (retry {retries})")),
            last_said: summary.last_said.as_deref(),
            stale_lease,
        }
    }
}

/// The `--json` document: the view, with every job's row.
#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    log: &'a str,
    events: u64,
    jobs: Rows<'a>,
    torn_tail: &'a Option<serde_json::Value>,
    repairs: &'a [serde_json::Value],
    anomalies: &'a [String],
}

/// The rows of a view, written as they are made.
struct Rows<'a>(&'a StatusView);

impl Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.rows())
    }
}

/// Cause lines shown below a table at most: a sweep's hundred failures
/// would bury the table; the reports and `--json` have every one.
pub(crate) const CAUSE_LINES: usize = 20;

/// The first [`CAUSE_LINES`] of `lines`, then one saying how many more
/// and where they are (`see`).
pub(crate) fn capped_causes(mut lines: Vec<String>, see: &str) -> Vec<String> {
    if lines.len() > CAUSE_LINES {
        let more = lines.len() - CAUSE_LINES;
        lines.truncate(CAUSE_LINES);
        lines.push(format!("… {more} more; see {see}"));
    }
    lines
}

/// Notes below the table, one per line: what each running job did last
/// (`JOB: ` and the words of its last event), why each failed job failed
/// (`JOB: KIND: CAUSE`, as the batch summary says it), then about the log
/// itself (torn tail, repairs, anomalies, stale leases).
pub(crate) fn render_notes(view: &StatusView) -> Vec<String> {
    let mut notes = Vec::new();
    // Read from the summaries as they are: most jobs have no note, and a
    // view can hold many.
    for r in &view.jobs {
        if let Some(said) = &r.last_said {
            notes.push(format!("{}: {said}", r.id));
        }
    }
    let causes = (view.jobs.iter())
        .filter_map(|r| {
            let (kind, cause) = (r.failure_kind?, r.cause.as_ref()?);
            Some(format!("{}: {}: {cause}", r.id, kind.as_str()))
        })
        .collect();
    notes.extend(capped_causes(causes, "`status --json` or the report"));
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
    let stale = (view.jobs.iter())
        .filter(|s| s.open.is_some())
        .map(|s| view.row(s))
        .filter(|r| r.stale_lease);
    for r in stale {
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

/// The footer of `status`: how much of the log it took from the writers'
/// checkpoint without reading it again, when it did.
pub(crate) fn checkpoint_note(view: &StatusView) -> Option<String> {
    (view.checkpointed > 0).then(|| {
        format!(
            "note: the first {} were taken from the writers' checkpoint (state.ckpt), not checked again; `status --full` or `doctor DATA` reads and checks every record",
            crate::words::count(
                usize::try_from(view.checkpointed).unwrap_or(usize::MAX),
                "record"
            )
        )
    })
}

/// The `--json` document (exact values; hidden characters as `\uXXXX`).
pub(crate) fn render_json(view: &StatusView) -> String {
    let document = Document {
        schema_version: STATUS_SCHEMA_VERSION,
        log: &view.log,
        events: view.events,
        jobs: Rows(view),
        torn_tail: &view.torn_tail,
        repairs: &view.repairs,
        anomalies: &view.anomalies,
    };
    escape::to_json_pretty(&document).unwrap_or_default()
}
