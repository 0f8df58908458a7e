//! The progress a batch prints: in CI, one plain line per event with no
//! redraws or escape codes, and a snapshot of those lines.

use super::{JobSpec, run_in, write_jobs};
use crate::harness::{Run, Sandbox};

/// A batch in CI mode, with `args` after the data dir and the jobs: a job
/// that writes, verifies and is done, and one that finishes without an
/// edit (so the batch exits 1).
fn batch_in_ci(sb: &Sandbox, args: &[&str]) -> Run {
    let jobs = write_jobs(
        &sb.path().join("jobs"),
        &[
            JobSpec::new("shown", "write_verify_finish.jsonl"),
            JobSpec::new("lazy", "no_edit.jsonl").attempts(1),
        ],
    );
    let mut argv = vec!["batch", "DATA", jobs.to_str().unwrap()];
    argv.extend(args);
    run_in(sb.path(), &argv, &[("CI", "true")]).code(1)
}

#[test]
fn progress_is_one_plain_line_per_event_in_ci() {
    let sb = Sandbox::new();
    let run = batch_in_ci(&sb, &[]);
    for needle in [
        "shown: attempt 1 started",
        "shown: step 1: write_file",
        "shown: step 2: verify",
        "shown: attempt 1 succeeded",
        "lazy: attempt 1 failed: no_edit",
    ] {
        assert!(
            run.stderr.lines().any(|l| l.contains(needle)),
            "no line with {needle:?} in:\n{}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains('\r'), "bar redraws in CI mode");
    assert!(!run.stderr.contains('\x1b'), "escape codes in CI mode");
    let prefixed = run
        .stderr
        .lines()
        .filter(|l| l.starts_with('[') && l.contains("] "))
        .count();
    assert!(prefixed >= 8, "{}", run.stderr);
}

/// The plain progress lines of a small scripted batch, one worker so their
/// order is fixed: a job that finishes without an edit, and one that
/// writes, verifies and is done.
#[test]
fn progress_lines_snapshot() {
    let sb = Sandbox::new();
    let run = batch_in_ci(&sb, &["-j", "1"]);
    let progress: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with('[')).collect();
    crate::snapshot::redacted(Some(sb.path()))
        .bind(|| insta::assert_snapshot!(progress.join("\n")));
}
