//! Status views for tests: rows as a batch in the middle of its run has
//! them.

use super::{STATUS_SCHEMA_VERSION, StatusRow, StatusView};

pub(crate) fn row(id: &str, family: &str, state: &'static str) -> StatusRow {
    StatusRow {
        id: id.to_string(),
        family: family.to_string(),
        state,
        attempt: 1,
        max_attempts: 3,
        attempt_number: 1,
        steps: 0,
        last_event: "job_enqueued".into(),
        last_step: None,
        failure_kind: None,
        cause: None,
        baseline: None,
        acceptance: None,
        waiting: None,
        last_said: None,
        stale_lease: false,
    }
}

pub(crate) fn view(jobs: Vec<StatusRow>) -> StatusView {
    StatusView {
        schema_version: STATUS_SCHEMA_VERSION,
        log: "data/events.log".to_string(),
        events: 42,
        jobs,
        torn_tail: None,
        repairs: Vec::new(),
        anomalies: Vec::new(),
    }
}

/// A batch in the middle of its run: jobs done, failed, running (one
/// waiting for its provider), queued; ids of an imported corpus.
pub(crate) fn batch() -> StatusView {
    let mut done = row("rust-off_by_one", "rust", "succeeded");
    done.steps = 6;
    done.last_step = Some("finish");
    done.acceptance = Some("passed");
    let mut failed = row("python-wrong_comparator@openai#2", "python", "failed");
    failed.attempt = 3;
    failed.steps = 31;
    failed.last_step = Some("replace_text");
    failed.failure_kind = Some("acceptance_failed");
    failed.acceptance = Some("failed");
    failed.cause = Some("2 failing tests: tests::edge, tests::empty".into());
    let mut running = row("django__django-11099", "swebench", "running");
    running.steps = 4;
    running.last_step = Some("run_tool");
    running.last_said = Some("step 4: run_tool cargo test (exit 101)".into());
    let mut waiting = row("rust-clamp_range", "rust", "running");
    waiting.waiting = Some("HTTP 429 Too Many Requests (retry 2)".into());
    let queued = row("javascript-two-fer", "javascript", "queued");
    view(vec![done, failed, running, waiting, queued])
}
