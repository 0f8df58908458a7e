//! A runner killed after its agent phase: the next run resumes the same
//! attempt at acceptance and never calls the model again.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{BIN, Sandbox, log_lines, runs_below, wait_until};

fn manifest(sb: &Sandbox) -> std::path::PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = sb.path().join("slow_acceptance.toml");
    std::fs::write(
        &file,
        format!(
            r#"prompt = "Make sum_up_to(n) include n."
source = "{root}/evaluation/fixtures/off_by_one"
editable = ["src/**/*.rs"]
allow = ["true"]
verify = ["true"]

[acceptance]
dir = "{root}/evaluation/acceptance/off_by_one"
command = ["sleep", "2"]
baseline = "skip"

[limits]
attempts = 1

[provider]
kind = "script"
script = "{root}/evaluation/controls/scripts/success.jsonl"
"#
        ),
    )
    .unwrap();
    file
}

#[test]
fn a_crash_after_the_agent_phase_resumes_at_acceptance() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "--job", manifest(&sb).to_str().unwrap()])
        .ok();
    let mut runner = Command::new(BIN)
        .args(["run", sb.data().to_str().unwrap(), "slow_acceptance"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !log_lines(&sb).iter().any(|l| l["type"] == "patch") {
        assert!(Instant::now() < deadline, "the agent phase never finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The kill lands while acceptance (`sleep 2`) runs.
    wait_until(Duration::from_secs(60), "the acceptance command", || {
        runs_below(runner.id(), "sleep")
    });
    runner.kill().unwrap();
    runner.wait().unwrap();
    let decisions_before = log_lines(&sb)
        .iter()
        .filter(|l| l["type"] == "decision")
        .count();

    sb.run(&["run", "DATA", "slow_acceptance"])
        .ok()
        .stdout_has("attempt=1 outcome=succeeded");
    let lines = log_lines(&sb);
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let interrupted = types
        .iter()
        .position(|t| *t == "attempt_interrupted")
        .unwrap();
    assert_eq!(types[interrupted + 1], "attempt_started");
    assert_eq!(
        lines[interrupted + 1]["attempt"],
        1,
        "the same attempt resumes"
    );
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "decision").count(),
        decisions_before,
        "no model call after resume"
    );
    assert_eq!(types.iter().filter(|t| **t == "agent_finished").count(), 1);
    assert_eq!(types.iter().filter(|t| **t == "patch").count(), 1);
    assert_eq!(types.iter().filter(|t| **t == "acceptance").count(), 1);
    assert_eq!(*types.last().unwrap(), "attempt_finished");
}
