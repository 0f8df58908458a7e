//! How much work a batch does: eight workers run sixteen slow verifies in
//! parallel, and rerunning a finished batch starts no attempt.

use std::time::{Duration, Instant};

use super::{JobSpec, count, states, write_jobs};
use crate::harness::{Sandbox, log_lines};

#[test]
fn sixteen_one_second_verifies_on_eight_workers_run_in_parallel() {
    let sb = Sandbox::new();
    let specs: Vec<JobSpec> = (0..16)
        .map(|i| {
            JobSpec::new(format!("sleepy{i:02}"), "write_verify_finish.jsonl")
                .verify(&["sleep", "1"])
        })
        .collect();
    let jobs = write_jobs(&sb.path().join("jobs"), &specs);
    let started = Instant::now();
    let run = sb.run(&["batch", "DATA", jobs.to_str().unwrap(), "-j", "8"]);
    let took = started.elapsed();
    run.ok();
    let lines = log_lines(&sb);
    assert_eq!(count(&lines, "attempt_finished"), 16);
    assert_eq!(count(&lines, "verify"), 16, "one verify per job");
    // In turn they take 16 s; eight at a time about 2 s. A generous bound
    // that still fails a batch running them one by one, on a loaded host.
    assert!(took < Duration::from_secs(9), "16 jobs took {took:?}");
}

#[test]
fn rerunning_a_finished_batch_does_no_work() {
    let sb = Sandbox::new();
    let jobs = write_jobs(
        &sb.path().join("jobs"),
        &[
            JobSpec::new("good", "write_verify_finish.jsonl"),
            JobSpec::new("accepted", "write_verify_finish.jsonl")
                .acceptance(&["test", "-f", "out.txt"], "must_fail"),
            JobSpec::new("lazy", "no_edit.jsonl"),
        ],
    );
    let args = ["batch", "DATA", jobs.to_str().unwrap(), "-j", "2"];
    let first = sb.run(&args).code(1);
    let before = log_lines(&sb);
    assert_eq!(
        count(&before, "attempt_started"),
        4,
        "lazy uses both attempts"
    );
    let second = sb.run(&args).code(first.code);
    let after = log_lines(&sb);
    assert_eq!(
        count(&after, "attempt_started"),
        4,
        "the rerun started attempts"
    );
    assert!(second.stdout.contains("0 attempts run now"), "{second:#?}");
    assert_eq!(states(sb.path(), &sb.data())["lazy"], "failed");
}
