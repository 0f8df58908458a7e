//! Ctrl-C during a batch: it stops at once (exit 130), saves its state
//! and a partial report without using up the interrupted attempt, and a
//! rerun finishes the batch.

use std::process::Child;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::{JobSpec, run_in, spawn_batch, states, wait_until, write_jobs};
use crate::harness::{Sandbox, log_lines, runs_below};

/// Waits up to `limit` for `child` to exit and returns its exit code; kills
/// and reaps it (returning `None`) if it is still running then.
fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_stops_the_batch_saves_state_and_a_rerun_finishes() {
    let sb = Sandbox::new();
    let jobs = write_jobs(
        &sb.path().join("jobs"),
        &[
            JobSpec::new("long", "long_tool.jsonl"),
            JobSpec::new("quick1", "write_verify_finish.jsonl"),
            JobSpec::new("quick2", "write_verify_finish.jsonl"),
            JobSpec::new("quick3", "write_verify_finish.jsonl"),
        ],
    );
    let data = sb.data();
    let args = [
        "batch",
        data.to_str().unwrap(),
        jobs.to_str().unwrap(),
        "-j",
        "1",
    ];
    let mut child = spawn_batch(sb.path(), &args, "interrupted");
    wait_until(Duration::from_secs(60), "the long tool command", || {
        log_lines(&sb)
            .iter()
            .any(|l| l["job"] == "long" && l["type"] == "decision" && l["kind"] == "run_tool")
    });
    // The interrupt lands while the tool (`sleep`) runs.
    wait_until(Duration::from_secs(60), "the long tool's sleep", || {
        runs_below(child.id(), "sleep")
    });
    let sent = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let code = wait_for_exit(&mut child, Duration::from_secs(15));
    let took = sent.elapsed();
    assert_eq!(code, Some(130), "batch did not exit 130 after SIGINT");
    assert!(took < Duration::from_secs(5), "took {took:?} to stop");
    let stdout = std::fs::read_to_string(sb.path().join("interrupted.stdout")).unwrap();
    assert!(stdout.contains("interrupted: state is saved"), "{stdout}");

    let after = states(sb.path(), &data);
    assert!(after.values().all(|s| s != "running"), "{after:?}");
    assert_eq!(after["long"], "queued");
    let lines = log_lines(&sb);
    let interrupted: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "attempt_interrupted")
        .collect();
    assert_eq!(interrupted.len(), 1, "{interrupted:#?}");
    assert_eq!(interrupted[0]["job"], "long");
    assert_eq!(interrupted[0]["by_runner"], true);
    assert!(
        data.join("report/results.json").is_file(),
        "no partial report"
    );
    assert!(data.join("report/report.md").is_file(), "no partial report");

    let rerun = run_in(sb.path(), &args, &[]);
    assert_eq!(rerun.code, 0, "{rerun:#?}");
    let done = states(sb.path(), &data);
    assert_eq!(done.len(), 4);
    assert!(done.values().all(|s| s == "succeeded"), "{done:?}");
    let long_finished: Vec<_> = log_lines(&sb)
        .into_iter()
        .filter(|l| l["job"] == "long" && l["type"] == "attempt_finished")
        .collect();
    assert_eq!(long_finished.len(), 1);
    assert_eq!(
        long_finished[0]["attempt"], 1,
        "a Ctrl-C'd attempt is not used up"
    );
}
