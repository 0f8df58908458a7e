//! Status views for tests: rows as a batch in the middle of its run has
//! them.

use std::collections::HashMap;

use super::StatusView;
use crate::protocol::{CheckResult, DecisionKind, FailureKind};
use crate::state::{JobState, Summary};

pub(crate) fn row(id: &str, family: &str, state: JobState) -> Summary {
    Summary {
        id: id.to_string(),
        family: (family != id).then(|| family.to_string()),
        state,
        attempts_used: 1,
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
        open: None,
    }
}

pub(crate) fn view(jobs: Vec<Summary>) -> StatusView {
    StatusView {
        log: "data/events.log".to_string(),
        events: 42,
        jobs,
        stale: HashMap::new(),
        torn_tail: None,
        repairs: Vec::new(),
        anomalies: Vec::new(),
        checkpointed: 0,
    }
}

/// A batch in the middle of its run: jobs done, failed, running (one
/// waiting for its provider), queued; ids of an imported corpus.
pub(crate) fn batch() -> StatusView {
    let mut done = row("rust-off_by_one", "rust", JobState::Succeeded);
    done.steps = 6;
    done.last_step = Some(DecisionKind::Finish);
    done.acceptance = Some(CheckResult::Passed);
    let mut failed = row(
        "python-wrong_comparator@openai#2",
        "python",
        JobState::Failed,
    );
    failed.attempts_used = 3;
    failed.steps = 31;
    failed.last_step = Some(DecisionKind::ReplaceText);
    failed.failure_kind = Some(FailureKind::AcceptanceFailed);
    failed.acceptance = Some(CheckResult::Failed);
    failed.cause = Some("2 failing tests: tests::edge, tests::empty".into());
    let mut running = row("django__django-11099", "swebench", JobState::Running);
    running.steps = 4;
    running.last_step = Some(DecisionKind::RunTool);
    running.last_said = Some("step 4: run_tool cargo test (exit 101)".into());
    let mut waiting = row("rust-clamp_range", "rust", JobState::Running);
    waiting.waiting = Some(("HTTP 429 Too Many Requests".into(), 2));
    let queued = row("javascript-two-fer", "javascript", JobState::Queued);
    view(vec![done, failed, running, waiting, queued])
}
