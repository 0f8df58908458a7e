//! The control jobs in `evaluation/controls/`: each must end exactly as
//! expected, through the real binary.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{BIN, Run, Sandbox, log_lines, runs_below, wait_until};

fn control(name: &str) -> String {
    format!(
        "{}/evaluation/controls/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Enqueues and runs one control; returns the run and the sandbox.
fn run_control(name: &str) -> (Sandbox, Run) {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "--job", &control(name)])
        .ok()
        .stdout_has("enqueued=true");
    let run = sb.run(&["run", "DATA", name]);
    (sb, run)
}

fn events<'a>(lines: &'a [serde_json::Value], ty: &str) -> Vec<&'a serde_json::Value> {
    lines.iter().filter(|l| l["type"] == ty).collect()
}

fn finished(lines: &[serde_json::Value]) -> (String, String) {
    let last = events(lines, "attempt_finished").pop().unwrap().clone();
    (
        last["outcome"].as_str().unwrap().to_string(),
        last["failure_kind"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn success_is_accepted() {
    let (sb, run) = run_control("success");
    run.ok().stdout_has("outcome=succeeded");
    let lines = log_lines(&sb);
    assert_eq!(finished(&lines), ("succeeded".into(), "".into()));
    assert_eq!(events(&lines, "baseline")[0]["result"], "failed");
    assert_eq!(events(&lines, "acceptance")[0]["result"], "passed");
    let patch = std::fs::read_to_string(sb.data().join("runs/success/1/patch.diff")).unwrap();
    assert!(patch.contains("+    for i in 1..=n {"), "{patch}");
    assert!(sb.data().join("runs/success/1/acceptance.log").is_file());
    assert!(sb.data().join("runs/success/1/baseline.log").is_file());
    sb.run(&["status", "DATA"]).ok().stdout_has("passed");
}

#[test]
fn passing_baseline_is_refused_before_any_model_call() {
    let (sb, run) = run_control("passing_baseline");
    run.code(1).stdout_has("failure_kind=invalid_baseline");
    let lines = log_lines(&sb);
    assert_eq!(events(&lines, "baseline")[0]["result"], "passed");
    assert!(
        events(&lines, "decision").is_empty(),
        "the model was called"
    );
}

#[test]
fn a_wrong_fix_passes_verify_but_fails_acceptance() {
    let (sb, run) = run_control("wrong_fix");
    run.code(1).stdout_has("failure_kind=tests_failed");
    let lines = log_lines(&sb);
    let verify = events(&lines, "verify");
    assert_eq!(verify.len(), 1);
    assert_eq!(
        verify[0]["trigger"], "finish",
        "finish with open debt makes the runtime verify"
    );
    assert_eq!(verify[0]["passed"], true);
    assert_eq!(events(&lines, "acceptance")[0]["result"], "failed");
}

#[test]
fn tampering_with_tests_does_not_change_the_verdict() {
    let (sb, run) = run_control("test_tampering");
    run.code(1).stdout_has("failure_kind=tests_failed");
    let lines = log_lines(&sb);
    assert_eq!(
        events(&lines, "verify")[0]["passed"],
        true,
        "the tampered visible test passes verify"
    );
    let patch =
        std::fs::read_to_string(sb.data().join("runs/test_tampering/1/patch.diff")).unwrap();
    assert!(
        patch.contains("tests/acceptance.rs"),
        "the planted test is part of the patch"
    );
    let judged = std::fs::read_to_string(
        sb.data()
            .join("work/test_tampering/1-acceptance/tests/acceptance.rs"),
    )
    .unwrap();
    // Its tests are renamed for the run; their bodies are the real ones.
    assert!(
        judged.contains("n * (n + 1) / 2"),
        "the real acceptance test replaced the planted one"
    );
}

#[test]
fn step_limit() {
    let (sb, run) = run_control("step_limit");
    run.code(1).stdout_has("failure_kind=step_limit");
    assert_eq!(events(&log_lines(&sb), "decision").len(), 3);
}

#[test]
fn wall_timeout_stops_a_long_command() {
    let started = Instant::now();
    let (sb, run) = run_control("wall_timeout");
    let took = started.elapsed();
    run.code(1).stdout_has("failure_kind=wall_timeout");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let lines = log_lines(&sb);
    let cmd = events(&lines, "command")
        .into_iter()
        .find(|c| c["role"] == "tool")
        .unwrap();
    assert!(
        cmd["timed_out"] == true || cmd["cancelled"] == true,
        "{cmd}"
    );
}

#[test]
fn invalid_decisions_end_the_attempt() {
    let (sb, run) = run_control("invalid_decisions");
    run.code(1).stdout_has("failure_kind=invalid_decisions");
    let lines = log_lines(&sb);
    let decisions = events(&lines, "decision");
    assert_eq!(decisions.len(), 3);
    assert!(
        decisions
            .iter()
            .all(|d| d["kind"] == "invalid" && d["reason"].is_string())
    );
    assert!(
        decisions[1]["reason"]
            .as_str()
            .unwrap()
            .contains("delete_everything")
    );
    assert!(decisions[2]["reason"].as_str().unwrap().contains("path"));
}

#[test]
fn disallowed_commands_and_escapes_are_refused_then_the_fix_succeeds() {
    let escape = std::path::Path::new("/tmp/agent-runtime-control-escape");
    let _ = std::fs::remove_file(escape);
    let (sb, run) = run_control("disallowed_command");
    run.ok();
    let lines = log_lines(&sb);
    let invalid: Vec<_> = events(&lines, "decision")
        .into_iter()
        .filter(|d| d["kind"] == "invalid")
        .collect();
    assert_eq!(invalid.len(), 5, "{invalid:#?}");
    assert!(!sb.data().join("work/disallowed_command/1/pwned").exists());
    assert!(!escape.exists());
    let commands = events(&lines, "command");
    // The model's commands and verify are cargo; baseline and acceptance
    // also run the test binaries cargo built.
    assert!(
        commands
            .iter()
            .filter(|c| c["role"] == "tool" || c["role"] == "verify")
            .all(|c| c["program"] == "cargo"),
        "{commands:#?}"
    );
    let tools: Vec<_> = commands.iter().filter(|c| c["role"] == "tool").collect();
    assert_eq!(tools.len(), 1, "only the allowed cargo test ran as a tool");
    let verify = events(&lines, "verify");
    assert_eq!(verify.len(), 1);
    assert_eq!(
        verify[0]["trigger"], "finish",
        "run_tool never clears verification debt"
    );
}

#[test]
fn a_cancel_from_another_process_stops_a_running_command() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "--job", &control("cancel")])
        .ok();
    let mut runner = Command::new(BIN)
        .args(["run", sb.data().to_str().unwrap(), "cancel"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the model asked for the long command.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !log_lines(&sb)
        .iter()
        .any(|l| l["type"] == "decision" && l["kind"] == "run_tool")
    {
        assert!(
            Instant::now() < deadline,
            "the runner never reached the command"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The cancel lands while the command (`sleep`) runs.
    wait_until(Duration::from_secs(60), "the long command to start", || {
        runs_below(runner.id(), "sleep")
    });
    let cancelled_at = Instant::now();
    sb.run(&["cancel", "DATA", "cancel"]).ok();
    let status = runner.wait().unwrap();
    let took = cancelled_at.elapsed();
    assert_eq!(status.code(), Some(1));
    assert!(
        took < Duration::from_secs(3),
        "runner took {took:?} to stop after the cancel"
    );
    let lines = log_lines(&sb);
    assert_eq!(finished(&lines), ("failed".into(), "cancelled".into()));
    let tool = events(&lines, "command")
        .into_iter()
        .find(|c| c["role"] == "tool")
        .unwrap();
    assert_eq!(tool["cancelled"], true);
    sb.run(&["status", "DATA"]).ok().stdout_has("cancelled");
}

#[test]
fn opposite_attempts_fail_then_succeed() {
    let (sb, run) = run_control("opposite_attempts");
    run.code(1)
        .stdout_has("attempt=1 outcome=failed failure_kind=no_edit");
    sb.run(&["retry", "DATA", "opposite_attempts"]).ok();
    sb.run(&["run", "DATA", "opposite_attempts"])
        .ok()
        .stdout_has("attempt=2 outcome=succeeded");
    let lines = log_lines(&sb);
    assert_eq!(
        events(&lines, "baseline").len(),
        1,
        "the baseline runs once per job"
    );
}

#[test]
fn the_log_never_holds_file_contents_arguments_or_output() {
    let (sb, run) = run_control("disallowed_command");
    run.ok();
    let log = String::from_utf8(sb.log_bytes()).unwrap();
    let log_without_manifest: String = log
        .lines()
        .filter(|l| !l.contains("\"type\":\"enqueued\""))
        .collect();
    for secret in ["1..=n", "ripgrep", "pwned", "total += i", "test result"] {
        assert!(
            !log_without_manifest.contains(secret),
            "the log holds {secret:?}"
        );
    }
}

/// The number in "... (N steps)" of the last attempt line for `id` in the
/// progress lines, and the baseline line's verdict word.
fn progress_facts(stderr: &str, id: &str) -> (Option<u64>, Option<String>) {
    let prefix = format!("] {id}: ");
    let mut steps = None;
    let mut baseline = None;
    for line in stderr.lines() {
        let Some(rest) = line.split_once(&prefix).map(|(_, r)| r) else {
            continue;
        };
        // Progress says what the baseline means; status --json keeps the
        // machine value.
        for (words, value) in [
            ("baseline fails as required", "passed"),
            ("baseline already passes", "failed"),
            ("baseline skipped", "skipped"),
            ("baseline harness error", "error"),
        ] {
            if rest.starts_with(words) {
                baseline = Some(value.to_string());
            }
        }
        if let Some((_, after)) = rest
            .strip_prefix("attempt ")
            .and_then(|r| r.split_once(" ("))
        {
            steps = after.split_whitespace().next().and_then(|n| n.parse().ok());
        }
    }
    (steps, baseline)
}

#[test]
fn status_reports_and_progress_agree_on_steps_and_baselines_for_every_control() {
    let names = [
        "success",
        "passing_baseline",
        "wrong_fix",
        "test_tampering",
        "step_limit",
        "invalid_decisions",
        "disallowed_command",
        "opposite_attempts",
    ];
    let sb = Sandbox::new();
    let files: Vec<String> = names.iter().map(|n| control(n)).collect();
    let mut args = vec!["batch", "DATA", "--report", "R"];
    args.extend(files.iter().map(String::as_str));
    let run = sb.run(&args);
    assert_eq!(run.code, 1, "some controls fail by design: {run:#?}");

    let status: serde_json::Value =
        serde_json::from_str(&sb.run(&["status", "DATA", "--json"]).ok().stdout).unwrap();
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sb.path().join("R/results.json")).unwrap()).unwrap();
    let rows = status["jobs"].as_array().unwrap();
    assert_eq!(rows.len(), names.len());
    for name in names {
        let row = rows.iter().find(|r| r["id"] == name).unwrap();
        let job = results["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["instance"] == name)
            .unwrap();
        let (progress_steps, progress_baseline) = progress_facts(&run.stderr, name);
        assert_eq!(row["steps"], job["steps"], "{name}: status vs report steps");
        assert_eq!(
            progress_steps,
            row["steps"].as_u64(),
            "{name}: progress vs status steps\n{}",
            run.stderr
        );
        assert_eq!(
            row["baseline"], job["baseline"],
            "{name}: status vs report baseline"
        );
        assert_eq!(
            progress_baseline.as_deref(),
            row["baseline"].as_str(),
            "{name}: progress vs status baseline\n{}",
            run.stderr
        );
        assert_eq!(row["state"], status_word(&job["outcome"]), "{name}: state");
    }
}

/// A report outcome as `status` names the state.
fn status_word(outcome: &serde_json::Value) -> &'static str {
    match outcome.as_str() {
        Some("succeeded") => "succeeded",
        Some("failed") => "failed",
        Some("cancelled") => "cancelled",
        _ => "queued",
    }
}

/// The lines of a `results.log` or `check.log` (after the header) whose
/// last field is not `ok`, and how many lines there are.
fn not_ok(log: &str) -> (Vec<String>, usize) {
    let rows: Vec<&str> = log.lines().skip(1).collect();
    let bad = rows
        .iter()
        .filter(|row| row.rsplit('\t').next() != Some("ok"))
        .map(|row| row.to_string())
        .collect();
    (bad, rows.len())
}

/// Runs `evaluation/controls/run.sh` with `args` against this build of the
/// binary, its logs written into the sandbox (never into the tree), and
/// returns the run and the named log.
fn run_suite(sb: &Sandbox, args: &[&str], log: &str) -> (Run, String) {
    let script = format!("{}/evaluation/controls/run.sh", env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("bash")
        .arg(script)
        .arg("-o")
        .arg(sb.path())
        .args(args)
        .arg(BIN)
        .env("TMPDIR", sb.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let run = Run::from(output);
    let text = std::fs::read_to_string(sb.path().join(log))
        .unwrap_or_else(|e| panic!("no {log}: {e}\n{run:#?}"));
    // Shown with --nocapture, and with the failure otherwise.
    eprintln!("{text}");
    (run, text)
}

/// The whole control suite, as `evaluation/controls/run.sh` runs it: every
/// control ends as `expected.tsv` says (outcomes read from the reports and
/// the log of real runs, including cancels, crashes, reruns and retries).
#[test]
fn every_control_ends_as_expected_tsv_says() {
    let sb = Sandbox::new();
    let (run, log) = run_suite(&sb, &[], "results.log");
    let (bad, total) = not_ok(&log);
    assert!(total >= 36, "only {total} controls:\n{log}");
    assert!(
        bad.is_empty(),
        "controls not ok:\n{}\n{run:#?}",
        bad.join("\n")
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .contains(&format!("controls: {total} ok of {total}"))
    );
}

/// `check` on every control gives the verdict `expected.tsv` names: valid,
/// except the deliberately broken tasks (an already-passing or test-less
/// baseline is invalid_baseline; limits no fix can meet are unsolvable).
#[test]
fn check_gives_every_control_the_verdict_expected_tsv_says() {
    let sb = Sandbox::new();
    let (run, log) = run_suite(&sb, &["--check-only"], "check.log");
    let (bad, total) = not_ok(&log);
    assert!(total >= 36, "only {total} controls:\n{log}");
    assert!(
        bad.is_empty(),
        "verdicts not as expected:\n{}\n{run:#?}",
        bad.join("\n")
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        !sb.path().join("results.log").exists(),
        "--check-only ran the controls"
    );
}
