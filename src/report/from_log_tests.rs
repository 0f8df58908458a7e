//! The fold over real event records: per-test verdicts, the baseline's
//! reason, what a new attempt starts over, and the timeline in the
//! words every view uses.

use super::*;
use crate::protocol::{
    AcceptanceRecord, AgentFinishedRecord, AttemptFinishedRecord, AttemptInterruptedRecord,
    AttemptStartedRecord, BaselineRecord, CommandRecord, DecisionRecord, EditRecord, PatchRecord,
    ProviderRetryRecord, ReplacedRecord, VerifyRecord,
};
use crate::protocol::{
    CheckResult as Check, CommandFor, DecisionKind, Event, FailureKind, Record, VerifyTrigger,
};
use crate::verdict::{Inventory, Verdict};

/// Records of one job, numbered as a writer would.
struct Log(Vec<Record>);

impl Log {
    fn new(job: &str) -> Log {
        let mut log = Log(Vec::new());
        log.push(job, None, Event::bare_enqueued(2));
        log
    }

    fn push(&mut self, job: &str, attempt: Option<u32>, event: Event) -> &mut Log {
        let seq = self.0.len() as u64 + 1;
        self.0.push(Record {
            seq,
            ts_ms: 1_000 + seq * 10,
            job: Some(job.into()),
            attempt,
            event,
        });
        self
    }

    fn report(&self) -> JobResult {
        let details = Details::of(&self.0);
        let sources = [LogSource {
            path: "events.log".into(),
            details: &details,
        }];
        let mut report = report_from_logs(&sources, 0, &NoArtifacts);
        report.jobs.remove(0)
    }
}

fn started(n: u32) -> Event {
    Event::AttemptStarted(AttemptStartedRecord {
        pid: 100 + n,
        agent: None,
    })
}

fn finished(kind: Option<FailureKind>) -> Event {
    Event::AttemptFinished(AttemptFinishedRecord {
        outcome: if kind.is_some() {
            Outcome::Failed
        } else {
            Outcome::Succeeded
        },
        failure_kind: kind,
        integrity: None,
    })
}

fn baseline() -> Event {
    Event::Baseline(BaselineRecord {
        result: Check::Failed,
        inventory: Some(Inventory {
            fail_to_pass: vec!["t::a".into(), "t::b".into()],
            pass_to_pass: vec!["t::c".into(), "t::d".into(), "t::e".into()],
            from: None,
            flaky: Vec::new(),
        }),
        reason: None,
        timed_out: Vec::new(),
        canary: None,
        twins: None,
        key: None,
        reused_from: None,
    })
}

fn acceptance(verdict: Option<Verdict>) -> Event {
    let result = match &verdict {
        Some(v) if v.passed() => Check::Passed,
        _ => Check::Failed,
    };
    Event::Acceptance(AcceptanceRecord {
        result,
        verdict,
        canary: None,
        twins: None,
        integrity: Vec::new(),
        cause: None,
    })
}

fn failing_verdict() -> Verdict {
    Verdict {
        f2p_passed: 1,
        f2p_total: 2,
        p2p_passed: 2,
        p2p_total: 3,
        failing: vec!["t::a".into()],
        missing: vec!["t::e".into()],
        timed_out: Vec::new(),
    }
}

#[test]
fn a_per_test_verdict_gives_counts_and_names() {
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push("a", Some(1), baseline())
        .push("a", Some(1), acceptance(Some(failing_verdict())))
        .push("a", Some(1), finished(Some(FailureKind::TestsFailed)));
    let job = log.report();
    assert_eq!(job.outcome, JobOutcome::Failed);
    assert_eq!(job.failure_kind, Some(FailureKind::TestsFailed));
    let t = &job.tests;
    assert!(t.verified_per_test);
    assert_eq!(
        (t.f2p_passed, t.f2p_total, t.p2p_passed, t.p2p_total),
        (Some(1), Some(2), Some(2), Some(3))
    );
    assert_eq!(
        (t.failing_tests.as_slice(), t.failing_count),
        (&["t::a".to_string()][..], 1)
    );
    assert_eq!(
        (t.missing_tests.as_slice(), t.missing_count),
        (&["t::e".to_string()][..], 1)
    );
    assert_eq!(job.baseline, CheckResult::Passed);
    assert_eq!(job.baseline_reason, None);
    let details: Vec<&str> = flat(&job).iter().map(|t| t.2.text.as_str()).collect();
    assert!(details.contains(&"baseline fails as required (2 fail-to-pass, 3 pass-to-pass)"));
    assert!(details.contains(&"acceptance failed: F2P 1/2, P2P 2/3"));
}

#[test]
fn names_are_capped_and_counted() {
    let many: Vec<String> = (0..30).map(|i| format!("t::{i}")).collect();
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1)).push(
        "a",
        Some(1),
        acceptance(Some(Verdict {
            f2p_total: 30,
            missing: many,
            ..Verdict::default()
        })),
    );
    let t = log.report().tests;
    assert_eq!(t.missing_tests.len(), crate::report::TEST_NAMES_KEPT);
    assert_eq!(t.missing_tests.last().map(String::as_str), Some("t::19"));
    assert_eq!(t.missing_count, 30);
}

#[test]
fn an_exit_status_verdict_is_not_verified_per_test() {
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push(
            "a",
            Some(1),
            Event::Baseline(BaselineRecord {
                result: Check::Failed,
                inventory: None,
                reason: None,
                timed_out: Vec::new(),
                canary: None,
                twins: None,
                key: None,
                reused_from: None,
            }),
        )
        .push("a", Some(1), acceptance(None))
        .push("a", Some(1), finished(Some(FailureKind::AcceptanceFailed)));
    let job = log.report();
    assert_eq!(job.acceptance, CheckResult::Failed);
    assert_eq!(job.tests, TestVerdict::default());
    assert!(
        flat(&job)
            .iter()
            .any(|t| t.2.text == "acceptance failed: not verified per test")
    );
}

#[test]
fn the_baseline_reason_is_kept() {
    let reason = "every test passes at baseline: the task is already solved";
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push(
            "a",
            Some(1),
            Event::Baseline(BaselineRecord {
                result: Check::Passed,
                inventory: None,
                reason: Some(reason.into()),
                timed_out: Vec::new(),
                canary: None,
                twins: None,
                key: None,
                reused_from: None,
            }),
        )
        .push("a", Some(1), finished(Some(FailureKind::InvalidBaseline)));
    let job = log.report();
    assert_eq!(job.baseline, CheckResult::Failed);
    assert_eq!(job.baseline_reason.as_deref(), Some(reason));
    assert!(flat(&job).iter().any(|t| t.2.text.ends_with(reason)));
}

#[test]
fn a_new_attempt_starts_the_verdict_over() {
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push("a", Some(1), baseline())
        .push("a", Some(1), acceptance(Some(failing_verdict())))
        .push("a", Some(1), finished(Some(FailureKind::TestsFailed)))
        .push("a", None, Event::Retried {})
        .push("a", Some(2), started(2))
        .push("a", Some(2), finished(Some(FailureKind::StepLimit)));
    let job = log.report();
    assert_eq!(job.failure_kind, Some(FailureKind::StepLimit));
    assert_eq!(
        job.acceptance,
        CheckResult::NotRun,
        "attempt 2 never got there"
    );
    assert_eq!(job.tests, TestVerdict::default());
    assert_eq!(
        job.baseline,
        CheckResult::Passed,
        "the baseline runs once per job"
    );
}

#[test]
fn a_passing_verdict_after_a_retry_is_the_one_reported() {
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push("a", Some(1), baseline())
        .push("a", Some(1), acceptance(Some(failing_verdict())))
        .push("a", Some(1), finished(Some(FailureKind::TestsFailed)))
        .push("a", None, Event::Retried {})
        .push("a", Some(2), started(2))
        .push(
            "a",
            Some(2),
            acceptance(Some(Verdict {
                f2p_passed: 2,
                f2p_total: 2,
                p2p_passed: 3,
                p2p_total: 3,
                ..Verdict::default()
            })),
        )
        .push("a", Some(2), finished(None));
    let job = log.report();
    assert_eq!(job.outcome, JobOutcome::Succeeded);
    assert_eq!(
        crate::report::verdict_text::summary(&job).as_deref(),
        Some("F2P 2/2, P2P 3/3")
    );
    assert_eq!((job.tests.failing_count, job.tests.missing_count), (0, 0));
}

fn command(role: crate::protocol::CommandFor, duration_ms: u64) -> Event {
    command_costing(role, duration_ms, None)
}

/// A `command` event that says what it cost (or not, like older logs).
fn command_costing(
    role: crate::protocol::CommandFor,
    duration_ms: u64,
    resources: Option<crate::protocol::Resources>,
) -> Event {
    command_event(0, role, &["sh", "-c"], 0, duration_ms, resources)
}

#[test]
fn setup_time_is_its_own_and_a_replaced_manifest_keeps_the_history() {
    use crate::protocol::CommandFor;
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push("a", Some(1), command(CommandFor::Setup, 400))
        .push("a", Some(1), command(CommandFor::Baseline, 30))
        .push("a", Some(1), finished(Some(FailureKind::NoEdit)))
        .push(
            "a",
            None,
            Event::Replaced(ReplacedRecord {
                max_attempts: 2,
                family: None,
                manifest: Box::new(crate::protocol::ManifestSnapshot::for_tests(
                    crate::protocol::Limits::default(),
                    "h2",
                )),
                manifest_hash: "h2".into(),
                attempts_before: 1,
            }),
        )
        .push("a", Some(2), started(2))
        // A fault of the infrastructure: the same attempt starts over.
        .push(
            "a",
            Some(2),
            Event::AttemptInterrupted(AttemptInterruptedRecord {
                pid: 1,
                by_runner: false,
                cause: Some("disk full".into()),
            }),
        )
        .push("a", Some(2), started(2))
        .push("a", Some(2), command(CommandFor::Setup, 50))
        .push("a", Some(2), command(CommandFor::Acceptance, 20))
        .push("a", Some(2), finished(None));
    let job = log.report();
    assert_eq!(job.outcome, JobOutcome::Succeeded);
    assert_eq!(job.attempts, 1, "counted under the new manifest");
    assert_eq!(job.manifest_hash.as_deref(), Some("h2"));
    assert_eq!(
        (job.time.setup_ms, job.time.acceptance_ms),
        (50, 20),
        "the new manifest's times, setup apart from acceptance"
    );
    assert_eq!(
        job.first_attempt_succeeded,
        Some(true),
        "a restart is the same attempt"
    );
    let history: Vec<(u32, Option<&str>, &str)> = job
        .attempt_history
        .iter()
        .map(|r| (r.attempt, r.manifest_hash.as_deref(), r.status.as_str()))
        .collect();
    assert_eq!(
        history,
        [
            (1, None, "failed"),
            (2, Some("h2"), "interrupted"),
            (2, Some("h2"), "succeeded"),
        ]
    );
    assert_eq!(
        job.attempt_history[0].failure_kind,
        Some(FailureKind::NoEdit)
    );
}

#[test]
fn a_success_on_a_retry_is_not_the_first_attempts() {
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push("a", Some(1), finished(Some(FailureKind::NoEdit)))
        .push("a", None, Event::Retried {})
        .push("a", Some(2), started(2))
        .push("a", Some(2), finished(None));
    let job = log.report();
    assert_eq!(job.outcome, JobOutcome::Succeeded);
    assert_eq!(job.first_attempt_succeeded, Some(false));
}

fn decision(step: u32, kind: DecisionKind, reason: Option<&str>) -> Event {
    Event::Decision(DecisionRecord {
        step,
        kind,
        subject: None,
        reason: reason.map(String::from),
        call: Some(crate::protocol::CallFigures {
            reply_bytes: 120,
            reply_hash: "0123456789abcdef".into(),
            input_tokens: 900 + u64::from(step) * 40,
            cached_input_tokens: 0,
            output_tokens: 20,
            latency_ms: 350,
        }),
    })
}

fn command_run(step: u32, role: CommandFor, argv: &[&str], exit_code: i32) -> Event {
    command_event(step, role, argv, exit_code, 42, None)
}

fn command_event(
    step: u32,
    role: CommandFor,
    argv: &[&str],
    exit_code: i32,
    duration_ms: u64,
    resources: Option<crate::protocol::Resources>,
) -> Event {
    Event::Command(CommandRecord {
        step,
        role,
        program: argv[0].into(),
        resolved: format!("/usr/bin/{}", argv[0]),
        argc: argv.len() as u32,
        exit_code: Some(exit_code),
        signal: None,
        duration_ms,
        stdout_bytes: 10,
        stderr_bytes: 0,
        truncated: false,
        timed_out: false,
        cancelled: false,
        oom: false,
        sandbox: vec![crate::sandbox::Layer::Landlock(6)],
        tests: None,
        resources,
    })
}

fn verify(step: u32, passed: bool, cause: Option<&str>) -> Event {
    Event::Verify(VerifyRecord {
        step,
        trigger: VerifyTrigger::Decision,
        passed,
        cause: cause.map(String::from),
    })
}

/// Two attempts as the report's timeline shows them: the first had a
/// command refused, met a provider retry and ended on a failed verify;
/// the second fixed the file and succeeded.
#[test]
fn timeline_snapshot() {
    let edit = |step: u32, bytes: u64| {
        Event::Edit(EditRecord {
            step,
            path: "src/lib.rs".into(),
            before: Some("aaaa".into()),
            after: "bbbb".into(),
            bytes,
        })
    };
    let agent = |steps: u32, kind: Option<FailureKind>| {
        Event::AgentFinished(AgentFinishedRecord {
            outcome: if kind.is_some() {
                Outcome::Failed
            } else {
                Outcome::Succeeded
            },
            failure_kind: kind,
            steps,
            integrity: Vec::new(),
            cause: None,
            stray_files: Vec::new(),
            agent_ms: None,
        })
    };
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push("a", Some(1), baseline())
        .push(
            "a",
            Some(1),
            command_run(0, CommandFor::Baseline, &["cargo", "test"], 101),
        )
        .push("a", Some(1), decision(1, DecisionKind::ReadFile, None))
        .push(
            "a",
            Some(1),
            decision(
                2,
                DecisionKind::RunTool,
                Some("`curl` with 1 argument does not match any allow rule"),
            ),
        )
        .push(
            "a",
            Some(1),
            Event::ProviderRetry(ProviderRetryRecord {
                step: 3,
                retry: 1,
                reason: "HTTP 503".into(),
                wait_ms: 500,
            }),
        )
        .push("a", Some(1), decision(3, DecisionKind::ReplaceText, None))
        .push("a", Some(1), edit(3, 1))
        .push("a", Some(1), decision(4, DecisionKind::Verify, None))
        .push(
            "a",
            Some(1),
            command_run(4, CommandFor::Verify, &["cargo", "test"], 101),
        )
        .push("a", Some(1), verify(4, false, Some("test t::a ... FAILED")))
        .push("a", Some(1), agent(4, Some(FailureKind::VerifyFailed)))
        .push("a", Some(1), finished(Some(FailureKind::VerifyFailed)))
        .push("a", None, Event::Retried {})
        .push("a", Some(2), started(2))
        .push("a", Some(2), decision(1, DecisionKind::WriteFile, None))
        .push("a", Some(2), edit(1, 64))
        .push("a", Some(2), decision(2, DecisionKind::Verify, None))
        .push(
            "a",
            Some(2),
            command_run(2, CommandFor::Verify, &["cargo", "test"], 0),
        )
        .push("a", Some(2), verify(2, true, None))
        .push("a", Some(2), decision(3, DecisionKind::Finish, None))
        .push("a", Some(2), agent(3, None))
        .push(
            "a",
            Some(2),
            Event::Patch(PatchRecord {
                bytes: 210,
                files: 1,
                hash: "cafe".into(),
                files_hash: None,
                partial: false,
                integrity: Vec::new(),
            }),
        )
        .push(
            "a",
            Some(2),
            command_run(0, CommandFor::Acceptance, &["cargo", "test"], 0),
        )
        .push(
            "a",
            Some(2),
            acceptance(Some(Verdict {
                f2p_passed: 2,
                f2p_total: 2,
                p2p_passed: 3,
                p2p_total: 3,
                ..Verdict::default()
            })),
        )
        .push("a", Some(2), finished(None));
    let job = log.report();
    let lines: Vec<String> = flat(&job)
        .iter()
        .map(|(attempt, step, t)| {
            format!(
                "{:>5} ms  attempt {} step {}  {:<12} {:<4} {}",
                t.at_ms,
                attempt,
                step,
                t.kind,
                if t.ok { "ok" } else { "FAIL" },
                t.text
            )
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn what_commands_cost_is_on_their_timeline_entries_and_summed_per_job() {
    use crate::protocol::{CommandFor, Resources};
    let hog = Resources {
        cpu_ms: Some(1_012),
        peak_memory_bytes: Some(213_606_400),
        pids_peak: Some(3),
    };
    let killed = Resources {
        cpu_ms: None,
        peak_memory_bytes: Some(1 << 20),
        pids_peak: Some(9),
    };
    let mut log = Log::new("a");
    log.push("a", Some(1), started(1))
        .push(
            "a",
            Some(1),
            command_costing(CommandFor::Baseline, 1_500, Some(hog)),
        )
        // An older log's command says nothing of it.
        .push("a", Some(1), command(CommandFor::Tool, 10))
        .push(
            "a",
            Some(1),
            command_costing(CommandFor::Acceptance, 1_500, Some(killed)),
        )
        .push("a", Some(1), finished(None));
    let job = log.report();
    assert_eq!(
        job.resources,
        Resources {
            cpu_ms: Some(1_012),
            peak_memory_bytes: Some(213_606_400),
            pids_peak: Some(9),
        }
    );
    let commands: Vec<_> = flat(&job)
        .into_iter()
        .map(|(_, _, e)| e)
        .filter(|e| e.kind == crate::protocol::EntryKind::Command)
        .collect();
    assert_eq!(commands.len(), 3);
    assert_eq!(commands[0].resources, Some(hog));
    assert!(
        commands[0]
            .text
            .ends_with("in 1500 ms, cpu 1.01 s, memory peak 203.7 MiB, pids peak 3"),
        "{}",
        commands[0].text
    );
    assert_eq!(commands[1].resources, None);
    assert!(
        commands[1].text.ends_with("in 10 ms"),
        "{}",
        commands[1].text
    );
    assert!(
        commands[2]
            .text
            .ends_with("in 1500 ms, memory peak 1.0 MiB, pids peak 9"),
        "{}",
        commands[2].text
    );
}

/// Every action of a job's timeline with its attempt and step (0 for a
/// phase), in order.
fn flat(job: &JobResult) -> Vec<(u32, u32, &crate::protocol::Action)> {
    job.timeline
        .iter()
        .flat_map(|a| a.actions().map(move |(step, x)| (a.attempt, step, x)))
        .collect()
}
