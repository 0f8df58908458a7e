//! Every legal and illegal lifecycle transition of a job.

use super::*;
use crate::protocol::{AttemptInterruptedRecord, LogRepairedRecord};

#[test]
fn enqueue_creates_a_queued_job() {
    let mut log = Log::new();
    let job = log.enqueue("a", 2);
    assert_eq!(job.lifecycle.state, JobState::Queued);
    assert_eq!(job.lifecycle.attempts_started, 0);
    assert_eq!(job.last_event, "enqueued");
}

#[test]
fn queued_running_succeeded() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    let job = log.start("a", 1);
    assert_eq!(job.lifecycle.state, JobState::Running);
    assert_eq!(
        job.lifecycle.open,
        Some(OpenAttempt {
            attempt: 1,
            pid: 101
        })
    );
    let job = log.finish("a", 1, Outcome::Succeeded, None);
    assert_eq!(job.lifecycle.state, JobState::Succeeded);
    assert_eq!(job.lifecycle.open, None);
    assert!(log.state.all_terminal());
}

#[test]
fn running_failed_records_the_kind() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    log.start("a", 1);
    let job = log.finish("a", 1, Outcome::Failed, Some(FailureKind::StepLimit));
    assert_eq!(job.lifecycle.state, JobState::Failed);
    assert_eq!(job.lifecycle.failure_kind, Some(FailureKind::StepLimit));
}

#[test]
fn retry_requeues_a_failed_job_while_attempts_remain() {
    let mut log = Log::new();
    log.enqueue("a", 2);
    log.start("a", 1);
    log.finish("a", 1, Outcome::Failed, Some(FailureKind::NoEdit));
    let job = log.ok("a", None, Event::Retried {});
    assert_eq!(job.lifecycle.state, JobState::Queued);
    log.start("a", 2);
    log.finish("a", 2, Outcome::Failed, Some(FailureKind::NoEdit));
    let e = log.err("a", None, Event::Retried {});
    assert_eq!(
        e,
        Illegal::NoAttemptsLeft {
            job: "a".into(),
            max: 2
        }
    );
}

#[test]
fn cancel_queued_and_running() {
    let mut log = Log::new();
    log.enqueue("q", 1);
    assert_eq!(
        log.ok("q", None, Event::Cancelled {}).lifecycle.state,
        JobState::Cancelled
    );

    log.enqueue("r", 1);
    log.start("r", 1);
    let job = log.ok("r", None, Event::Cancelled {});
    assert_eq!(job.lifecycle.state, JobState::Cancelled);
    assert!(
        job.lifecycle.open.is_some(),
        "the runner still has to close the attempt"
    );
    let job = log.finish("r", 1, Outcome::Failed, Some(FailureKind::Cancelled));
    assert_eq!(job.lifecycle.state, JobState::Cancelled);
    assert_eq!(job.lifecycle.open, None);
}

#[test]
fn a_finish_racing_a_cancel_does_not_resurrect_the_job() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    log.start("a", 1);
    log.ok("a", None, Event::Cancelled {});
    assert_eq!(
        log.finish("a", 1, Outcome::Succeeded, None).lifecycle.state,
        JobState::Cancelled
    );
}

#[test]
fn faults_of_the_infrastructure_never_use_an_attempt_and_are_bounded() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    // The default max_restarts is 3: three restarts requeue the job on the
    // same attempt number; the fourth fault ends it infra_error.
    for (pid, cause) in [(101, None), (102, Some("provider down")), (103, None)] {
        log.start("a", 1);
        let job = log.ok(
            "a",
            Some(1),
            Event::AttemptInterrupted(AttemptInterruptedRecord {
                pid,
                by_runner: false,
                cause: cause.map(String::from),
            }),
        );
        assert_eq!(job.lifecycle.state, JobState::Queued);
        assert_eq!(
            job.lifecycle.attempts_started, 0,
            "a fault does not use the attempt"
        );
        assert_eq!(job.lifecycle.failure_kind, Some(FailureKind::Interrupted));
    }
    log.start("a", 1);
    let job = log.ok(
        "a",
        Some(1),
        Event::AttemptInterrupted(AttemptInterruptedRecord {
            pid: 104,
            by_runner: false,
            cause: Some("disk full".into()),
        }),
    );
    assert_eq!(job.lifecycle.state, JobState::Failed);
    assert_eq!(job.lifecycle.failure_kind, Some(FailureKind::InfraError));
    assert_eq!(job.lifecycle.restarts, 4);
    assert_eq!(job.lifecycle.infra_cause.as_deref(), Some("disk full"));
}

#[test]
fn interrupted_after_cancel_stays_cancelled() {
    let mut log = Log::new();
    log.enqueue("a", 3);
    log.start("a", 1);
    log.ok("a", None, Event::Cancelled {});
    let job = log.ok(
        "a",
        Some(1),
        Event::AttemptInterrupted(AttemptInterruptedRecord {
            pid: 101,
            by_runner: false,
            cause: None,
        }),
    );
    assert_eq!(job.lifecycle.state, JobState::Cancelled);
    assert_eq!(job.lifecycle.open, None);
}

#[test]
fn illegal_enqueue_twice_and_zero_attempts() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    assert_eq!(
        log.err("a", None, Event::bare_enqueued(1)),
        Illegal::AlreadyExists("a".into())
    );
    assert_eq!(
        log.err("b", None, Event::bare_enqueued(0)),
        Illegal::ZeroAttempts("b".into())
    );
}

#[test]
fn illegal_events_on_unknown_jobs() {
    let mut log = Log::new();
    for event in [
        Event::Cancelled {},
        Event::Retried {},
        start(1),
        succeeded(),
    ] {
        assert_eq!(
            log.err("ghost", Some(1), event),
            Illegal::UnknownJob("ghost".into())
        );
    }
}

#[test]
fn illegal_cancel_of_terminal_jobs() {
    let mut log = Log::new();
    log.enqueue("s", 1);
    log.start("s", 1);
    log.finish("s", 1, Outcome::Succeeded, None);
    log.enqueue("f", 1);
    log.start("f", 1);
    log.finish("f", 1, Outcome::Failed, None);
    log.enqueue("c", 1);
    log.ok("c", None, Event::Cancelled {});
    for (id, state) in [
        ("s", JobState::Succeeded),
        ("f", JobState::Failed),
        ("c", JobState::Cancelled),
    ] {
        let e = log.err(id, None, Event::Cancelled {});
        assert_eq!(
            e,
            Illegal::WrongState {
                job: id.into(),
                action: "cancel",
                state
            }
        );
        assert_eq!(
            e.to_string(),
            format!("cannot cancel job \"{id}\": it {}", state.phrase())
        );
    }
}

#[test]
fn illegal_retry_unless_failed() {
    let mut log = Log::new();
    log.enqueue("q", 2);
    log.enqueue("r", 2);
    log.start("r", 1);
    log.enqueue("s", 2);
    log.start("s", 1);
    log.finish("s", 1, Outcome::Succeeded, None);
    log.enqueue("c", 2);
    log.ok("c", None, Event::Cancelled {});
    for (id, state) in [
        ("q", JobState::Queued),
        ("r", JobState::Running),
        ("s", JobState::Succeeded),
        ("c", JobState::Cancelled),
    ] {
        assert_eq!(
            log.err(id, None, Event::Retried {}),
            Illegal::WrongState {
                job: id.into(),
                action: "retry",
                state
            }
        );
    }
}

#[test]
fn illegal_start_unless_queued_or_out_of_order() {
    let mut log = Log::new();
    log.enqueue("a", 3);
    assert_eq!(
        log.err("a", Some(2), start(2)),
        Illegal::WrongAttempt {
            job: "a".into(),
            got: 2,
            expected: 1
        }
    );
    assert_eq!(
        log.err("a", None, start(1)),
        Illegal::MissingAttempt {
            job: "a".into(),
            event: "attempt_started"
        }
    );
    log.start("a", 1);
    assert!(matches!(
        log.err("a", Some(2), start(2)),
        Illegal::WrongState {
            state: JobState::Running,
            ..
        }
    ));
    log.finish("a", 1, Outcome::Succeeded, None);
    assert!(matches!(
        log.err("a", Some(2), start(2)),
        Illegal::WrongState {
            state: JobState::Succeeded,
            ..
        }
    ));
}

#[test]
fn illegal_finish_or_interrupt_without_an_open_attempt() {
    let mut log = Log::new();
    log.enqueue("a", 2);
    assert_eq!(
        log.err("a", Some(1), succeeded()),
        Illegal::AttemptNotOpen {
            job: "a".into(),
            attempt: 1
        }
    );
    log.start("a", 1);
    assert_eq!(
        log.err("a", Some(2), succeeded()),
        Illegal::AttemptNotOpen {
            job: "a".into(),
            attempt: 2
        }
    );
    assert_eq!(
        log.err(
            "a",
            Some(2),
            Event::AttemptInterrupted(AttemptInterruptedRecord {
                pid: 1,
                by_runner: false,
                cause: None,
            })
        ),
        Illegal::AttemptNotOpen {
            job: "a".into(),
            attempt: 2
        }
    );
    log.finish("a", 1, Outcome::Succeeded, None);
    assert_eq!(
        log.err("a", Some(1), succeeded()),
        Illegal::AttemptNotOpen {
            job: "a".into(),
            attempt: 1
        }
    );
}

#[test]
fn job_events_need_a_job_and_repairs_do_not() {
    let mut state = State::default();
    let orphan = Record {
        seq: 1,
        ts_ms: 0,
        job: None,
        attempt: None,
        event: Event::Cancelled {},
    };
    assert_eq!(
        state.apply(&orphan),
        Err(Illegal::MissingJob { event: "cancelled" })
    );
    let repair = Record {
        seq: 2,
        ts_ms: 0,
        job: None,
        attempt: None,
        event: Event::LogRepaired(LogRepairedRecord {
            line: 4,
            dropped_bytes: 17,
        }),
    };
    state.apply(&repair).unwrap();
    assert_eq!(state.repairs, vec![(4, 17)]);
    assert_eq!(state.last_seq, 2);
}

#[test]
fn replay_collects_anomalies_and_keeps_going() {
    let mut log = Log::new();
    let records = vec![
        log.record("a", None, Event::bare_enqueued(1)),
        log.record("a", None, Event::Retried {}),
        log.record("a", None, Event::Cancelled {}),
    ];
    let (state, anomalies) = replay(&records);
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0].0, 2);
    assert_eq!(state.job("a").unwrap().lifecycle.state, JobState::Cancelled);
    assert_eq!(state.last_seq, 3);
}

#[test]
fn all_terminal_needs_jobs() {
    assert!(!State::default().all_terminal());
}
