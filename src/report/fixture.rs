//! A report covering every case the renderers must handle, for their tests:
//! a job that succeeded, a test failure whose patch and test names hold markup
//! and pipes, a cancelled job, an invalid baseline without a patch, a
//! pending job, two families, and a two-provider sweep repeated three times
//! (with failing tests, missing tests beyond the names kept, a rejected
//! patch and an acceptance judged by its exit status alone).

use super::model::{CheckResult, JobOutcome, JobResult, Report, TestVerdict};
use crate::protocol::FailureKind;
use crate::protocol::{Action, AttemptTimeline, Moment};
use crate::verdict::Verdict;

/// The per-test verdict of a run.
fn verdict(
    f2p: (usize, usize),
    p2p: (usize, usize),
    failing: &[&str],
    missing: &[String],
) -> TestVerdict {
    TestVerdict::of(&Verdict {
        f2p_passed: f2p.0,
        f2p_total: f2p.1,
        p2p_passed: p2p.0,
        p2p_total: p2p.1,
        failing: failing.iter().map(|s| s.to_string()).collect(),
        missing: missing.to_vec(),
        timed_out: Vec::new(),
    })
}

fn step(attempt: u32, step: u32, at: u64, kind: &str, text: &str, ok: bool) -> (u32, u32, Action) {
    let kind = kind.parse().expect("a timeline kind");
    (attempt, step, Action::new(at, kind, text, ok))
}

/// A job's timelines from its lines in order.
fn timeline(lines: Vec<(u32, u32, Action)>) -> Vec<AttemptTimeline> {
    AttemptTimeline::from_flat(lines)
}

fn finished(mut j: JobResult, outcome: JobOutcome, kind: Option<FailureKind>) -> JobResult {
    j.outcome = outcome;
    j.failure_kind = kind;
    j
}

const CLEAN_PATCH: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,3 @@
 pub fn sum_up_to(n: u64) -> u64 {
-    (1..n).sum()
+    (1..=n).sum()
 }
";

const HOSTILE_PATCH: &str = "\
diff --git a/src/render.rs b/src/render.rs
--- a/src/render.rs
+++ b/src/render.rs
@@ -10,4 +10,5 @@ fn cell(a: bool, b: bool) -> &'static str {
-    if a | b { \"<b>\" } else { \"\" }
+    if a || b { \"<script>alert('x')</script>\" } else { \"&amp;\" }
+    // a | b\tand tabs
 }
";

fn succeeded() -> JobResult {
    let mut j = JobResult::new("off_by_one", "off_by_one", "off_by_one");
    j.attempts = 1;
    j.max_attempts = 2;
    j.steps = 5;
    j.input_tokens = 12_400;
    j.output_tokens = 830;
    j.provider_calls = 5;
    j.provider_latency_ms = 4_210;
    j.cost_usd = Some(0.04965);
    j.first_attempt_clean = true;
    j.time.tool_ms = 6_100;
    j.time.verify_ms = 5_800;
    j.time.acceptance_ms = 2_300;
    j.resources = crate::protocol::Resources {
        cpu_ms: Some(9_870),
        peak_memory_bytes: Some(412 << 20),
        pids_peak: Some(37),
    };
    j.wall_ms = 18_350;
    j.patch_bytes = CLEAN_PATCH.len() as u64;
    j.patch_files = 1;
    j.patch = Some(CLEAN_PATCH.to_string());
    j.acceptance = CheckResult::Passed;
    j.baseline = CheckResult::Passed;
    j.tests = verdict((2, 2), (3, 3), &[], &[]);
    j.integrity = Some(crate::protocol::Integrity {
        canaries: 1,
        ..crate::protocol::Integrity::default()
    });
    let mut command = step(
        1,
        3,
        9_000,
        "command",
        "tool `cargo` (1 arg) exit 0 in 6100 ms, cpu 5.20 s, memory peak 412.0 MiB, pids peak 37",
        true,
    );
    command.2.resources = Some(crate::protocol::Resources {
        cpu_ms: Some(5_200),
        peak_memory_bytes: Some(412 << 20),
        pids_peak: Some(37),
    });
    j.timeline = timeline(vec![
        step(1, 1, 900, "read_file", "src/lib.rs (212 B)", true),
        step(1, 2, 1_800, "replace_text", "src/lib.rs", true),
        step(1, 2, 1_810, "edit", "src/lib.rs 3f2a..9c1d", true),
        step(1, 3, 2_900, "run_tool", "cargo exit 0 in 6.1 s", true),
        command,
        step(1, 4, 9_200, "verify", "cargo exit 0 in 5.8 s", true),
        step(1, 5, 15_300, "finish", "fixed the range", true),
        step(
            1,
            5,
            16_000,
            "baseline",
            "pristine source failed as required",
            true,
        ),
        step(1, 5, 18_300, "acceptance", "passed", true),
    ]);
    if let Some(Moment::Step(edit)) = j.timeline[0].moments.get_mut(1) {
        edit.fields = Some("path=src/lib.rs (4 bytes → 5 bytes)".into());
        edit.reply = Some(
            r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1..n","replacement":"1..=n"}"#
                .into(),
        );
        edit.observation = Some("replaced 1 occurrence in src/lib.rs <ok>".into());
        edit.diff = Some("@@ src/lib.rs\n-1..n\n+1..=n".into());
    }
    finished(j, JobOutcome::Succeeded, None)
}

fn hostile() -> JobResult {
    let mut j = JobResult::new("render_cell", "render_cell", "off_by_one");
    j.attempts = 2;
    j.max_attempts = 2;
    j.steps = 9;
    j.invalid_decisions = 1;
    j.input_tokens = 30_100;
    j.output_tokens = 2_045;
    j.provider_calls = 10;
    j.provider_latency_ms = 12_800;
    j.cost_usd = Some(0.120975);
    j.time.wait_ms = 3_500;
    j.wall_ms = 61_000;
    j.patch_bytes = HOSTILE_PATCH.len() as u64;
    j.patch_files = 1;
    j.patch = Some(HOSTILE_PATCH.to_string());
    j.acceptance = CheckResult::Failed;
    j.baseline = CheckResult::Passed;
    j.tests = verdict(
        (1, 2),
        (3, 4),
        &["render::cell_<b>|</b>", "render::`tick` & <script>\nnext"],
        &[],
    );
    let mut integrity = crate::protocol::Integrity {
        canaries: 1,
        ..crate::protocol::Integrity::default()
    };
    integrity.add([crate::protocol::Signal {
        steps: Some([2, 3]),
        ..crate::protocol::Signal::new(
            crate::protocol::SignalKind::WorkspaceChanged,
            "tests/<script>|x.rs",
            "changed by a command",
        )
    }]);
    j.integrity = Some(integrity);
    j.prompt =
        Some("Make cell(a, b) return \"<b>\" when either is set.\nKeep </script> as it is.".into());
    j.trace = Some("metadata".into());
    j.logs = vec![
        "runs/render_cell/1/baseline.log".into(),
        "runs/render_cell/2/verify-1.log".into(),
        "runs/render_cell/2/acceptance.log".into(),
        "runs/render_cell/2/tests/excerpts.json".into(),
    ];
    j.test_excerpts = Some(crate::verdict::TestExcerpts {
        version: crate::verdict::EXCERPTS_VERSION,
        tests: vec![
            crate::verdict::TestExcerpt {
                name: "render::cell_<b>|</b>".into(),
                status: "failing".into(),
                timed_out: false,
                excerpt: Some(
                    "thread 'cell' panicked at tests/render.rs:4:5:\nassertion `left == right` failed\n  left: \"</script><script>alert(1)</script>\"\n right: \"<b>\"".into(),
                ),
            },
            crate::verdict::TestExcerpt {
                name: "render::`tick` & <script>\nnext".into(),
                status: "failing".into(),
                timed_out: true,
                excerpt: None,
            },
        ],
        left_out: 0,
    });
    j.timeline = timeline(vec![
        step(
            1,
            1,
            1_000,
            "invalid",
            "unknown kind \"<script>\" | bad\nsecond line",
            false,
        ),
        step(1, 2, 2_000, "write_file", "src/render.rs", true),
        step(1, 3, 8_000, "verify", "cargo exit 101 in 5.2 s", false),
        step(1, 3, 30_000, "retry", "attempt 2 after verify_failed", true),
        step(2, 1, 31_000, "replace_text", "src/render.rs", true),
        step(2, 2, 38_000, "verify", "cargo exit 0 in 6.0 s", true),
        step(
            2,
            3,
            52_000,
            "acceptance",
            "acceptance failed: F2P 1/2, P2P 3/4",
            false,
        ),
    ]);
    finished(j, JobOutcome::Failed, Some(FailureKind::TestsFailed))
}

fn cancelled() -> JobResult {
    let mut j = JobResult::new("slow_build", "slow_build", "parsing");
    j.attempts = 1;
    j.max_attempts = 2;
    j.steps = 2;
    j.input_tokens = 4_000;
    j.output_tokens = 120;
    j.provider_calls = 2;
    j.provider_latency_ms = 1_500;
    j.wall_ms = 4_000;
    j.timeline = timeline(vec![
        step(1, 1, 700, "list_files", ".", true),
        step(1, 2, 3_900, "command", "cancelled after 1.2 s", false),
    ]);
    finished(j, JobOutcome::Cancelled, Some(FailureKind::Cancelled))
}

fn invalid_baseline() -> JobResult {
    let mut j = JobResult::new("parse_header", "parse_header", "parsing");
    j.attempts = 1;
    j.max_attempts = 1;
    j.steps = 3;
    j.input_tokens = 6_000;
    j.output_tokens = 300;
    j.provider_calls = 3;
    j.provider_latency_ms = 2_000;
    j.wall_ms = 9_500;
    j.baseline = CheckResult::Failed;
    j.baseline_reason = Some("every test passes at baseline: the task is already solved".into());
    j.timeline = timeline(vec![step(
        1,
        3,
        9_400,
        "baseline",
        "acceptance on the pristine source passed: every test passes at baseline",
        false,
    )]);
    finished(j, JobOutcome::Failed, Some(FailureKind::InvalidBaseline))
}

fn pending() -> JobResult {
    let mut j = JobResult::new("parse_footer", "parse_footer", "parsing");
    j.attempts = 1;
    j.max_attempts = 2;
    j.steps = 1;
    j.input_tokens = 1_000;
    j.output_tokens = 40;
    j.provider_calls = 1;
    j.provider_latency_ms = 600;
    j.wall_ms = 1_200;
    j.timeline = timeline(vec![step(1, 1, 600, "read_file", "src/footer.rs", true)]);
    j
}

fn sweep_run(provider: &str, k: u32, kind: Option<FailureKind>) -> JobResult {
    let mut j = JobResult::new(&format!("tokenize@{provider}#{k}"), "tokenize", "parsing");
    j.provider = Some(provider.to_string());
    j.repeat = Some(k);
    j.attempts = 1;
    j.max_attempts = 1;
    j.steps = 3 + k;
    j.input_tokens = 5_000 + u64::from(k) * 100;
    j.output_tokens = 200 + u64::from(k) * 10;
    j.provider_calls = 3 + k;
    j.provider_latency_ms = 2_000 + u64::from(k) * 300;
    j.wall_ms = 10_000 + u64::from(k) * 1_000;
    j.baseline = CheckResult::Passed;
    j.acceptance = match kind {
        None => CheckResult::Passed,
        Some(
            FailureKind::AcceptanceFailed | FailureKind::TestsFailed | FailureKind::TestsMissing,
        ) => CheckResult::Failed,
        Some(_) => CheckResult::NotRun,
    };
    match kind {
        None => {
            j.baseline_reason = Some(
                "the tests do not build on the pristine source: every test is fail-to-pass".into(),
            );
            j.tests = verdict((4, 4), (0, 0), &[], &[]);
        }
        Some(FailureKind::TestsFailed) => {
            j.tests = verdict((1, 2), (3, 3), &["test/acceptance::sums_to_n"], &[]);
        }
        Some(FailureKind::TestsMissing) => {
            // The build broke: every test of the inventory is missing.
            let missing: Vec<String> = (1..=24)
                .map(|i| format!("test/acceptance::case_{i:02}"))
                .collect();
            j.tests = verdict((0, 2), (0, 22), &[], &missing);
        }
        _ => {}
    }
    if !matches!(
        kind,
        Some(FailureKind::VerifyFailed | FailureKind::PatchRejected)
    ) {
        j.patch = Some("--- a/src/tok.rs\n+++ b/src/tok.rs\n@@ -1 +1 @@\n-old\n+new\n".into());
        j.patch_bytes = 52;
        j.patch_files = 1;
    }
    let outcome = match kind {
        None => JobOutcome::Succeeded,
        Some(_) => JobOutcome::Failed,
    };
    // One attempt each: the first attempt is the outcome.
    j.first_attempt_succeeded = Some(kind.is_none());
    finished(j, outcome, kind)
}

/// The shared fixture: 11 job instances in two families.
pub(super) fn sample() -> Report {
    let mut report = Report::new(
        1_767_225_600_000,
        vec!["data/events.log".into(), "shard-2/events.log".into()],
    );
    report.jobs = vec![
        succeeded(),
        hostile(),
        cancelled(),
        invalid_baseline(),
        pending(),
        sweep_run("alpha", 1, Some(FailureKind::TestsFailed)),
        sweep_run("alpha", 2, None),
        sweep_run("alpha", 3, Some(FailureKind::TestsMissing)),
        sweep_run("beta", 1, Some(FailureKind::VerifyFailed)),
        sweep_run("beta", 2, Some(FailureKind::PatchRejected)),
        sweep_run("beta", 3, Some(FailureKind::AcceptanceFailed)),
    ];
    // Two workers: jobs start in pairs, so the batch's elapsed time is
    // shorter than the summed job time.
    let start = report.generated_at_ms - 3_600_000;
    for (i, job) in report.jobs.iter_mut().enumerate() {
        if job.wall_ms > 0 {
            let began = start + (i as u64 / 2) * 20_000;
            job.started_ms = Some(began);
            job.ended_ms = Some(began + job.wall_ms);
        }
    }
    report
}
