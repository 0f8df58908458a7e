//! What an attempt's phases record: interruptions, replacements, patches,
//! causes and integrity signals.

use super::*;
use crate::protocol::{
    AcceptanceRecord, AgentFinishedRecord, AttemptFinishedRecord, AttemptInterruptedRecord,
    AttemptStartedRecord, BaselineRecord, DecisionRecord, EnqueuedRecord, ModelCallRecord,
    PatchRecord, PatchRejectedRecord, ReplacedRecord,
};

fn agent_done(outcome: Outcome) -> Event {
    Event::AgentFinished(AgentFinishedRecord {
        outcome,
        failure_kind: None,
        steps: 3,
        integrity: Vec::new(),
        cause: None,
        stray_files: Vec::new(),
        agent_ms: None,
    })
}

#[test]
fn an_attempt_interrupted_after_its_agent_phase_resumes_without_using_an_attempt() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    log.start("a", 1);
    log.ok("a", Some(1), agent_done(Outcome::Succeeded));
    let job = log.ok(
        "a",
        Some(1),
        Event::AttemptInterrupted(AttemptInterruptedRecord {
            pid: 101,
            by_runner: false,
            cause: None,
        }),
    );
    assert_eq!(
        job.lifecycle.state,
        JobState::Queued,
        "only attempt, but the agent's work is recorded"
    );
    assert_eq!(job.lifecycle.resume, Some(1));
    assert!(matches!(
        log.err("a", Some(2), start(2)),
        Illegal::WrongAttempt { expected: 1, .. }
    ));
    let job = log.ok("a", Some(1), start(1));
    assert_eq!(job.lifecycle.attempts_started, 1);
    assert!(
        job.attempt().unwrap().phase.agent_done(),
        "the resumed attempt keeps its agent phase"
    );
    assert_eq!(
        log.err("a", Some(1), agent_done(Outcome::Succeeded)),
        Illegal::PhaseTwice {
            job: "a".into(),
            attempt: 1,
            phase: "agent"
        }
    );
    log.ok(
        "a",
        Some(1),
        Event::Acceptance(AcceptanceRecord {
            result: crate::protocol::CheckResult::Passed,
            verdict: None,
            canary: None,
            twins: None,
            integrity: Vec::new(),
            cause: None,
        }),
    );
    assert!(matches!(
        log.err(
            "a",
            Some(1),
            Event::Acceptance(AcceptanceRecord {
                result: crate::protocol::CheckResult::Passed,
                verdict: None,
                canary: None,
                twins: None,
                integrity: Vec::new(),
                cause: None,
            })
        ),
        Illegal::PhaseTwice {
            phase: "acceptance",
            ..
        }
    ));
    assert_eq!(
        log.finish("a", 1, Outcome::Succeeded, None).lifecycle.state,
        JobState::Succeeded
    );
}

#[test]
fn an_attempt_its_runner_interrupted_is_not_counted() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    log.start("a", 1);
    let job = log.ok(
        "a",
        Some(1),
        Event::AttemptInterrupted(AttemptInterruptedRecord {
            pid: 101,
            by_runner: true,
            cause: None,
        }),
    );
    assert_eq!(job.lifecycle.state, JobState::Queued);
    assert_eq!(job.lifecycle.attempts_started, 0);
    assert_eq!(log.start("a", 1).lifecycle.state, JobState::Running);
}

#[test]
fn attempt_events_need_the_open_attempt() {
    let mut log = Log::new();
    log.enqueue("a", 2);
    let decision_of = |step: u32, kind: &str| {
        Event::Decision(DecisionRecord {
            step,
            kind: serde_json::from_value(serde_json::Value::from(kind)).unwrap(),
            subject: None,
            reason: None,
            call: Some(crate::protocol::CallFigures {
                reply_bytes: 1,
                reply_hash: "x".into(),
                input_tokens: 1,
                cached_input_tokens: 0,
                output_tokens: 1,
                latency_ms: 1,
            }),
        })
    };
    let decision = || decision_of(1, "read_file");
    assert!(matches!(
        log.err("a", Some(1), decision()),
        Illegal::AttemptNotOpen { .. }
    ));
    log.start("a", 1);
    assert!(matches!(
        log.err("a", Some(2), decision()),
        Illegal::AttemptNotOpen { .. }
    ));
    let job = log.ok("a", Some(1), decision());
    assert_eq!(
        (
            job.attempt().unwrap().steps,
            job.attempt().unwrap().last_action.map(|k| k.as_str())
        ),
        (1, Some("read_file"))
    );
    let invalid = decision_of(2, "invalid");
    assert_eq!(
        log.ok("a", Some(1), invalid)
            .attempt()
            .unwrap()
            .invalid_decisions,
        1
    );
    log.ok(
        "a",
        Some(1),
        Event::Baseline(BaselineRecord {
            result: crate::protocol::CheckResult::Failed,
            inventory: None,
            reason: None,
            timed_out: Vec::new(),
            canary: None,
            twins: None,
            key: None,
            reused_from: None,
        }),
    );
    log.finish("a", 1, Outcome::Failed, Some(FailureKind::StepLimit));
    log.ok("a", None, Event::Retried {});
    let job = log.start("a", 2);
    assert_eq!(
        (
            job.attempt().unwrap().steps,
            job.attempt().unwrap().invalid_decisions
        ),
        (0, 0),
        "per-attempt facts reset"
    );
    assert_eq!(
        job.baseline.as_ref().map(|b| b.result),
        Some(crate::protocol::CheckResult::Failed),
        "the baseline is per job"
    );
}

#[test]
fn replace_resets_a_finished_job_but_not_a_running_one() {
    let mut log = Log::new();
    log.enqueue("a", 1);
    log.start("a", 1);
    let replaced = || {
        Event::Replaced(ReplacedRecord {
            max_attempts: 3,
            family: Some("f".into()),
            manifest: Box::new(ManifestSnapshot::for_tests(Limits::default(), "h")),
            manifest_hash: "h2".into(),
            // A version 1 record: numbering restarts.
            attempts_before: 0,
        })
    };
    assert!(matches!(
        log.err("a", None, replaced()),
        Illegal::WrongState {
            state: JobState::Running,
            ..
        }
    ));
    log.finish("a", 1, Outcome::Failed, Some(FailureKind::NoEdit));
    let job = log.ok("a", None, replaced());
    assert_eq!(
        (
            job.lifecycle.state,
            job.lifecycle.attempts_started,
            job.lifecycle.max_attempts
        ),
        (JobState::Queued, 0, 3)
    );
    assert_eq!(job.family, "f");
    assert_eq!(job.manifest_hash.as_deref(), Some("h2"));
}

#[test]
fn a_replaced_manifest_numbers_its_attempts_after_the_earlier_ones() {
    let mut log = Log::new();
    log.enqueue("a", 2);
    log.start("a", 1);
    log.finish("a", 1, Outcome::Failed, Some(FailureKind::NoEdit));
    log.ok("a", None, Event::Retried {});
    log.start("a", 2);
    let job = log.finish("a", 2, Outcome::Failed, Some(FailureKind::NoEdit));
    assert!(!job.attempts_remain());
    let replaced = |before: u32| {
        Event::Replaced(ReplacedRecord {
            max_attempts: 2,
            family: None,
            manifest: Box::new(ManifestSnapshot::for_tests(Limits::default(), "h")),
            manifest_hash: "h2".into(),
            attempts_before: before,
        })
    };
    // Numbers already used cannot be handed out again.
    assert!(matches!(
        log.err("a", None, replaced(1)),
        Illegal::AttemptsRenumbered { highest: 2, .. }
    ));
    let job = log.ok("a", None, replaced(2));
    assert_eq!(
        (
            job.lifecycle.state,
            job.attempts_used(),
            job.lifecycle.attempt_base
        ),
        (JobState::Queued, 0, 2)
    );
    assert!(job.attempts_remain());
    assert!(matches!(
        log.err(
            "a",
            Some(1),
            Event::AttemptStarted(AttemptStartedRecord {
                pid: 1,
                agent: None
            })
        ),
        Illegal::WrongAttempt { expected: 3, .. }
    ));
    let job = log.start("a", 3);
    assert_eq!(
        (job.attempts_used(), job.lifecycle.attempts_started),
        (1, 3)
    );
    log.finish("a", 3, Outcome::Failed, Some(FailureKind::NoEdit));
    log.ok("a", None, Event::Retried {});
    log.start("a", 4);
    let job = log.finish("a", 4, Outcome::Succeeded, None);
    assert_eq!(
        (job.lifecycle.state, job.attempts_used()),
        (JobState::Succeeded, 2)
    );
    assert!(!job.attempts_remain());
}

#[test]
fn a_rejected_patch_is_recorded_once_and_fails_the_attempt() {
    let mut log = Log::new();
    log.enqueue("a", 2);
    log.start("a", 1);
    log.ok("a", Some(1), agent_done(Outcome::Succeeded));
    let rejected = || {
        Event::PatchRejected(PatchRejectedRecord {
            reason: "src/a.rs: is a FIFO, not a regular file".into(),
        })
    };
    let job = log.ok("a", Some(1), rejected());
    let attempt = job.attempt().unwrap();
    assert!(attempt.phase == Phase::Rejected && attempt.patch.is_none());
    assert_eq!(job.last_event, "patch_rejected");
    for twice in [
        rejected(),
        Event::Patch(PatchRecord {
            bytes: 1,
            files: 1,
            hash: "h".into(),
            files_hash: None,
            partial: false,
            integrity: Vec::new(),
        }),
    ] {
        assert!(matches!(
            log.err("a", Some(1), twice),
            Illegal::PhaseTwice { phase: "patch", .. }
        ));
    }
    assert!(matches!(
        log.err("a", Some(2), rejected()),
        Illegal::AttemptNotOpen { .. }
    ));
    let kind = Some(FailureKind::PatchRejected);
    let job = log.finish("a", 1, Outcome::Failed, kind);
    assert_eq!(
        (job.lifecycle.state, job.lifecycle.failure_kind),
        (JobState::Failed, kind)
    );
    log.ok("a", None, Event::Retried {});
    assert!(
        log.start("a", 2).attempt().unwrap().phase == Phase::Agent,
        "a new attempt starts clean"
    );
}

#[test]
fn the_cause_is_the_final_verdicts_reason_not_an_earlier_refusal() {
    let mut log = Log::new();
    log.ok(
        "a",
        None,
        Event::Enqueued(EnqueuedRecord {
            max_attempts: 2,
            family: None,
            manifest: Some(Box::new(ManifestSnapshot::for_tests(
                Limits {
                    max_steps: 16,
                    token_budget: 1000,
                    ..Limits::default()
                },
                "h",
            ))),
            manifest_hash: Some("h".into()),
            base_job: None,
            provider: None,
            repeat: None,
        }),
    );
    log.start("a", 1);
    let decision = |step: u32, reason: Option<&str>, tokens: u64| {
        Event::Decision(DecisionRecord {
            step,
            kind: if reason.is_some() {
                crate::protocol::DecisionKind::Invalid
            } else {
                crate::protocol::DecisionKind::WriteFile
            },
            subject: None,
            reason: reason.map(str::to_string),
            call: Some(crate::protocol::CallFigures {
                reply_bytes: 1,
                reply_hash: "x".into(),
                input_tokens: tokens,
                cached_input_tokens: 0,
                output_tokens: tokens,
                latency_ms: 1,
            }),
        })
    };
    log.ok("a", Some(1), decision(1, None, 5));
    log.ok(
        "a",
        Some(1),
        decision(2, Some("run_tool: `curl` does not match any allow rule"), 5),
    );
    log.ok("a", Some(1), decision(3, None, u64::MAX));
    assert_eq!(
        log.state.job("a").unwrap().attempt().unwrap().tokens,
        u64::MAX,
        "sums saturate"
    );
    log.ok("a", Some(1), agent_done(Outcome::Succeeded));
    log.ok(
        "a",
        Some(1),
        Event::Acceptance(AcceptanceRecord {
            result: crate::protocol::CheckResult::Failed,
            verdict: Some(crate::protocol::Verdict {
                f2p_total: 1,
                failing: vec!["t::value_is_new".into()],
                ..crate::protocol::Verdict::default()
            }),
            canary: None,
            twins: None,
            integrity: Vec::new(),
            cause: None,
        }),
    );
    let job = log.finish("a", 1, Outcome::Failed, Some(FailureKind::TestsFailed));
    assert_eq!(
        job.failure_cause().as_deref(),
        Some("failing: t::value_is_new")
    );
    let refusal = job.attempt().unwrap().causes.refusal.as_deref();
    assert!(refusal.unwrap().contains("curl"), "kept");

    // The same refusal then the step limit: the limit, with its value.
    log.ok("a", None, Event::Retried {});
    log.start("a", 2);
    log.ok("a", Some(2), decision(1, Some("refused"), 1));
    let job = log.finish("a", 2, Outcome::Failed, Some(FailureKind::StepLimit));
    assert_eq!(
        job.failure_cause().as_deref(),
        Some("used all 16 steps (limits.max_steps) without finishing")
    );
    assert_eq!(
        job.attempt().unwrap().phase.judged(),
        None,
        "a new attempt forgets the old verdict"
    );
}

#[test]
fn a_recorded_patch_keeps_its_copy_hash_and_may_be_rejected_before_acceptance_only() {
    let mut log = Log::new();
    log.enqueue("a", 2);
    log.start("a", 1);
    log.ok("a", Some(1), agent_done(Outcome::Succeeded));
    let patch = Event::Patch(PatchRecord {
        bytes: 10,
        files: 1,
        hash: "h".into(),
        files_hash: Some("c0ffee".into()),
        partial: false,
        integrity: Vec::new(),
    });
    let job = log.ok("a", Some(1), patch);
    let patch = job.attempt().unwrap().patch.as_ref();
    assert_eq!(patch.unwrap().files_hash.as_deref(), Some("c0ffee"));
    let rejected = || {
        Event::PatchRejected(PatchRejectedRecord {
            reason: "src/a.rs: cannot be laid on the clean copy".into(),
        })
    };
    let job = log.ok("a", Some(1), rejected());
    let attempt = job.attempt().unwrap();
    assert!(attempt.patch.is_some() && attempt.phase == Phase::Rejected);
    assert!(matches!(
        log.err("a", Some(1), rejected()),
        Illegal::PhaseTwice { phase: "patch", .. }
    ));

    // Once acceptance judged the patch, it is no longer rejected.
    let kind = Some(FailureKind::PatchRejected);
    log.finish("a", 1, Outcome::Failed, kind);
    log.ok("a", None, Event::Retried {});
    let job = log.start("a", 2);
    assert_eq!(
        job.attempt().unwrap().patch,
        None,
        "a new attempt starts clean"
    );
    log.ok("a", Some(2), agent_done(Outcome::Succeeded));
    log.ok(
        "a",
        Some(2),
        Event::Patch(PatchRecord {
            bytes: 1,
            files: 1,
            hash: "h".into(),
            files_hash: None,
            partial: false,
            integrity: Vec::new(),
        }),
    );
    log.ok(
        "a",
        Some(2),
        Event::Acceptance(AcceptanceRecord {
            result: crate::protocol::CheckResult::Failed,
            verdict: None,
            canary: None,
            twins: None,
            integrity: Vec::new(),
            cause: None,
        }),
    );
    assert!(matches!(
        log.err("a", Some(2), rejected()),
        Illegal::PhaseTwice { phase: "patch", .. }
    ));
}

#[test]
fn the_phases_signals_add_up_to_the_attempts_integrity_and_a_new_attempt_starts_clean() {
    use crate::protocol::{CanaryCheck, Integrity, Signal, SignalKind};
    let signal = |subject: &str| Signal::new(SignalKind::WorkspaceChanged, subject, "changed");
    let mut log = Log::new();
    log.enqueue("a", 2);
    log.start("a", 1);
    log.ok(
        "a",
        Some(1),
        Event::AgentFinished(AgentFinishedRecord {
            outcome: Outcome::Succeeded,
            failure_kind: None,
            steps: 2,
            integrity: vec![signal("tests/visible.rs")],
            cause: None,
            stray_files: Vec::new(),
            agent_ms: None,
        }),
    );
    log.ok(
        "a",
        Some(1),
        Event::Patch(PatchRecord {
            bytes: 1,
            files: 1,
            hash: "h".into(),
            files_hash: None,
            partial: false,
            integrity: vec![signal("conftest.py")],
        }),
    );
    let job = log.ok(
        "a",
        Some(1),
        Event::Acceptance(AcceptanceRecord {
            result: crate::protocol::CheckResult::Passed,
            verdict: None,
            canary: Some(CanaryCheck {
                planted: vec!["t::canary".into()],
                forged: vec!["the canary t::canary was reported passed".into()],
            }),
            twins: None,
            integrity: Vec::new(),
            cause: None,
        }),
    );
    assert_eq!(job.attempt().unwrap().integrity.signal_count, 2);
    assert_eq!(job.attempt().unwrap().integrity.canaries, 1);
    assert!(job.attempt().unwrap().integrity.forged());
    let record = job.attempt().unwrap().integrity.clone();
    let job = log.ok(
        "a",
        Some(1),
        Event::AttemptFinished(AttemptFinishedRecord {
            outcome: Outcome::Failed,
            failure_kind: Some(FailureKind::Tampered),
            integrity: Some(record.clone()),
        }),
    );
    assert_eq!(job.attempt().unwrap().integrity, record);
    assert!(
        job.failure_cause()
            .unwrap()
            .starts_with("forged results: the canary t::canary")
    );
    log.ok("a", None, Event::Retried {});
    let job = log.start("a", 2);
    assert_eq!(job.attempt().unwrap().integrity, Integrity::default());
}

/// A format 2 `decision` carries its model call; format 3 records the call
/// as `model_call` and the decision apart. Both count the same steps,
/// tokens, calls, invalid decisions and cost.
#[test]
fn a_model_call_and_its_decision_count_as_a_format_2_decision_did() {
    let figures = |tokens: u64| crate::protocol::CallFigures {
        reply_bytes: 10,
        reply_hash: "h".into(),
        input_tokens: tokens,
        cached_input_tokens: 0,
        output_tokens: tokens / 2,
        latency_ms: 7,
    };
    let kind = |invalid: bool| {
        if invalid {
            crate::protocol::DecisionKind::Invalid
        } else {
            crate::protocol::DecisionKind::ReadFile
        }
    };
    let run = |split: bool| {
        let mut log = Log::new();
        log.enqueue("a", 2);
        log.start("a", 1);
        for (step, invalid) in [(1u32, false), (2, true), (3, false)] {
            let reason = invalid.then(|| "bad".to_string());
            if split {
                log.ok(
                    "a",
                    Some(1),
                    Event::ModelCall(ModelCallRecord {
                        step,
                        call: figures(100 * u64::from(step)),
                        retries: 0,
                    }),
                );
            }
            let call = (!split).then(|| figures(100 * u64::from(step)));
            log.ok(
                "a",
                Some(1),
                Event::Decision(DecisionRecord {
                    step,
                    kind: kind(invalid),
                    subject: None,
                    reason,
                    call,
                }),
            );
        }
        let job = log.state.job("a").unwrap().clone();
        let attempt = job.attempt().unwrap().clone();
        (
            attempt.steps,
            attempt.tokens,
            attempt.invalid_decisions,
            job.usage.provider_calls,
            job.usage.input_tokens,
            job.usage.output_tokens,
            job.usage.latency_ms,
            job.usage.invalid_decisions,
        )
    };
    assert_eq!(run(true), run(false));
    assert_eq!(run(true).0, 3);
    assert_eq!(run(true).3, 3);
}
