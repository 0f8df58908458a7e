//! Baselines found by their key.

use super::*;
use crate::protocol::{BaselineRecord, ReplacedRecord};

fn keyed_baseline(
    result: crate::protocol::CheckResult,
    key: Option<&str>,
    reused_from: Option<(&str, u32)>,
) -> Event {
    Event::Baseline(BaselineRecord {
        result,
        inventory: Some(crate::protocol::Inventory {
            fail_to_pass: vec!["t::a".into()],
            pass_to_pass: vec!["t::b".into()],
            from: None,
            flaky: Vec::new(),
        }),
        reason: None,
        timed_out: vec!["t::a".into()],
        canary: None,
        twins: None,
        key: key.map(str::to_string),
        reused_from: reused_from.map(|(job, attempt)| crate::protocol::BaselineOrigin {
            job: job.into(),
            attempt,
        }),
    })
}

#[test]
fn a_baseline_that_ran_is_found_by_its_key_even_after_its_job_is_replaced() {
    use crate::protocol::CheckResult;
    let mut log = Log::new();
    for id in ["a", "b", "c", "d"] {
        log.enqueue(id, 1);
        log.start(id, 1);
    }
    assert!(log.state.baseline_for("k").is_none());
    log.ok(
        "a",
        Some(1),
        keyed_baseline(CheckResult::Failed, Some("k"), None),
    );
    let found = log.state.baseline_for("k").unwrap();
    assert_eq!((found.origin.job.as_str(), found.origin.attempt), ("a", 1));
    assert!(!found.reused);
    assert_eq!(found.timed_out, ["t::a"]);

    // A reusing instance: its job's baseline names where the commands
    // ran, and the key still names the first.
    let job = log.ok(
        "b",
        Some(1),
        keyed_baseline(CheckResult::Failed, Some("k"), Some(("a", 1))),
    );
    let baseline = job.baseline.as_ref().unwrap();
    assert!(baseline.reused);
    assert_eq!(baseline.origin.job, "a");
    assert_eq!(baseline.inventory.as_ref().unwrap().fail_to_pass, ["t::a"]);

    // A broken harness and a baseline of an older log are never reused.
    log.ok(
        "c",
        Some(1),
        keyed_baseline(CheckResult::Error, Some("e"), None),
    );
    assert!(log.state.baseline_for("e").is_none());
    log.ok(
        "d",
        Some(1),
        keyed_baseline(CheckResult::Failed, None, None),
    );
    assert!(
        log.state
            .jobs()
            .iter()
            .all(|j| j.id != "d" || j.baseline.is_some())
    );

    // A rerun clears the job's baseline, not the one of its key.
    log.finish("a", 1, Outcome::Failed, Some(FailureKind::NoEdit));
    log.ok(
        "a",
        None,
        Event::Replaced(ReplacedRecord {
            max_attempts: 1,
            family: None,
            manifest: Box::new(ManifestSnapshot::for_tests(Limits::default(), "h")),
            manifest_hash: "h".into(),
            attempts_before: 1,
        }),
    );
    assert!(log.state.job("a").unwrap().baseline.is_none());
    assert_eq!(log.state.baseline_for("k").unwrap().origin.job, "a");
}
