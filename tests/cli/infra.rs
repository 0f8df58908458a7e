//! Faults of the machine are not the model's: a runner killed at random
//! moments, a runtime I/O error that repeats, a provider that runs out after
//! a failed verify. Rerunning the same command finishes every job; a fault
//! that repeats ends `infra_error` instead of keeping a job open.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{BIN, Sandbox, log_lines};

/// `count` copies of the off_by_one job with `attempts = 1` and
/// `max_restarts` (the five kills below could all land on the first jobs,
/// in the same phase: each batch starts with them).
fn jobs(sb: &Sandbox, count: usize) -> PathBuf {
    jobs_with(sb, count, 3)
}

fn jobs_with(sb: &Sandbox, count: usize, max_restarts: u32) -> PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = sb.path().join("jobs");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..count {
        std::fs::write(
            dir.join(format!("j{i}.toml")),
            format!(
                r#"prompt = "Make sum_up_to(n) include n."
source = "{root}/evaluation/fixtures/off_by_one"
editable = ["src/**/*.rs"]
allow = ["cargo test **"]
verify = ["cargo", "test", "--offline", "--quiet"]

[acceptance]
dir = "{root}/evaluation/acceptance/off_by_one"
command = ["cargo", "test", "--offline", "--quiet"]

[limits]
attempts = 1
max_restarts = {max_restarts}

[provider]
kind = "script"
script = "{root}/evaluation/scripts/off_by_one.jsonl"
"#
            ),
        )
        .unwrap();
    }
    dir
}

/// Pseudo-random milliseconds in `[lo, hi)` (no dependency needed).
fn random_ms(seed: &mut u64, lo: u64, hi: u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    lo + *seed % (hi - lo)
}

/// Live processes whose working directory lies under `dir`.
fn alive_under(dir: &Path) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd"))
            && cwd.starts_with(dir)
        {
            pids.push(pid);
        }
    }
    pids
}

/// Directories below `root` (one level of job dirs, then attempts).
fn walk_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for job in std::fs::read_dir(root).into_iter().flatten().flatten() {
        out.push(job.path());
        for attempt in std::fs::read_dir(job.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push(attempt.path());
        }
    }
    out
}

fn count_by_job(lines: &[serde_json::Value], kind: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in lines.iter().filter(|l| l["type"] == kind) {
        *counts
            .entry(line["job"].as_str().unwrap_or("").to_string())
            .or_default() += 1;
    }
    counts
}

#[test]
fn a_batch_killed_five_times_then_rerun_finishes_every_job_once() {
    let sb = Sandbox::new();
    let dir = jobs_with(&sb, 10, 5);
    let data = sb.data();
    let args = [
        "batch",
        data.to_str().unwrap(),
        dir.to_str().unwrap(),
        "-j",
        "2",
    ];
    let mut seed = u64::from(std::process::id()) | 1;
    let mut kills = 0;
    for _ in 0..5 {
        let mut batch = Command::new(BIN)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(random_ms(&mut seed, 300, 2500)));
        if batch.try_wait().unwrap().is_none() {
            batch.kill().unwrap();
            kills += 1;
        }
        batch.wait().unwrap();
    }
    let last = sb.run(&["batch", "DATA", dir.to_str().unwrap(), "-j", "2"]);
    assert_eq!(last.code, 0, "{last:#?}");
    assert!(last.stdout.contains("succeeded 10/10"), "{last:#?}");
    let lines = log_lines(&sb);
    // No finished phase ran twice: one baseline and one acceptance per job.
    for kind in ["baseline", "acceptance", "attempt_finished"] {
        let counts = count_by_job(&lines, kind);
        assert_eq!(counts.len(), 10, "{kind}: {counts:?}");
        assert!(counts.values().all(|n| *n == 1), "{kind}: {counts:?}");
    }
    let finished: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "attempt_finished")
        .collect();
    assert!(
        finished
            .iter()
            .all(|l| l["attempt"] == 1 && l["outcome"] == "succeeded")
    );
    assert_eq!(
        alive_under(&data),
        Vec::<i32>::new(),
        "a killed run left processes"
    );
    // `--keep failed` (the default): no workspace or build dir of a
    // succeeded attempt is left, only its artifacts.
    let work = data.join("work");
    let left = walk_dirs(&work);
    assert!(
        left.iter().all(|d| d.parent() == Some(work.as_path())),
        "{left:?}"
    );
    assert!(data.join("runs/j0/1/patch.diff").is_file());
    eprintln!("killed {kids} times", kids = kills);
}

#[test]
fn a_fault_that_repeats_ends_infra_error_and_the_batch_exits() {
    let sb = Sandbox::new();
    let dir = jobs(&sb, 1);
    // The patch can never be written: its path is a directory.
    std::fs::create_dir_all(sb.data().join("runs/j0/1/patch.diff")).unwrap();
    let started = Instant::now();
    let run = sb.run(&["batch", "DATA", dir.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(started.elapsed() < Duration::from_secs(120));
    let lines = log_lines(&sb);
    let faults: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "attempt_interrupted")
        .collect();
    assert_eq!(faults.len(), 4, "three restarts, then the end: {faults:#?}");
    assert!(faults.iter().all(|f| f["attempt"] == 1), "no attempt used");
    assert!(
        faults[0]["cause"]
            .as_str()
            .unwrap_or("")
            .contains("patch.diff"),
        "{:#?}",
        faults[0]
    );
    let doc: serde_json::Value =
        serde_json::from_str(&sb.run(&["status", "DATA", "--json"]).ok().stdout).unwrap();
    let job = &doc["jobs"][0];
    assert_eq!(job["state"], "failed");
    assert_eq!(job["failure_kind"], "infra_error");
    // Rerunning does not loop: the job is finished.
    let again = sb.run(&["batch", "DATA", dir.to_str().unwrap()]);
    assert_eq!(again.code, 1);
    assert_eq!(
        log_lines(&sb)
            .iter()
            .filter(|l| l["type"] == "attempt_interrupted")
            .count(),
        4
    );
}

#[test]
fn a_failed_verify_then_an_exhausted_script_is_verify_failed() {
    let sb = Sandbox::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let script = sb.path().join("bad.jsonl");
    std::fs::write(
        &script,
        "{\"kind\":\"replace_text\",\"path\":\"src/lib.rs\",\"expected\":\"1..n\",\"replacement\":\"1..=n +\"}\n\
         {\"kind\":\"finish\",\"summary\":\"done\"}\n",
    )
    .unwrap();
    let job = sb.path().join("vf.toml");
    std::fs::write(
        &job,
        format!(
            r#"prompt = "Make sum_up_to(n) include n."
source = "{root}/evaluation/fixtures/off_by_one"
editable = ["src/**/*.rs"]
allow = ["cargo test **"]
verify = ["cargo", "test", "--offline", "--quiet"]

[limits]
attempts = 1

[provider]
kind = "script"
script = {script:?}
"#
        ),
    )
    .unwrap();
    sb.run(&["enqueue", "DATA", "--job", job.to_str().unwrap()])
        .ok();
    sb.run(&["run", "DATA", "vf"])
        .code(1)
        .stdout_has("failure_kind=verify_failed");
    // The compiler error is kept with the attempt, whatever the trace, and
    // named in the log, the JUnit message and the HTML details.
    let kept = std::fs::read_to_string(sb.data().join("runs/vf/1/verify-1.log")).unwrap();
    assert!(kept.contains("error"), "{kept}");
    let verify = log_lines(&sb)
        .into_iter()
        .find(|l| l["type"] == "verify")
        .unwrap();
    let cause = verify["cause"].as_str().unwrap().to_string();
    assert!(cause.starts_with("error"), "{cause}");
    let out = sb.path().join("report");
    sb.run(&["report", "DATA", "--out", out.to_str().unwrap()])
        .ok();
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("message=\"verify_failed: error"), "{junit}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let data = crate::harness::html_data(&html);
    assert!(
        data["details"][0]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["n"][0][0] == "cause:"),
        "no cause in the HTML details"
    );
    // status and the reports count the same steps (the failed provider
    // call is one).
    let status: serde_json::Value =
        serde_json::from_str(&sb.run(&["status", "DATA", "--json"]).ok().stdout).unwrap();
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(status["jobs"][0]["steps"], 3);
    assert_eq!(results["jobs"][0]["steps"], status["jobs"][0]["steps"]);
}

#[test]
fn gc_removes_what_keep_all_left_and_keeps_the_artifacts() {
    let sb = Sandbox::new();
    let dir = jobs(&sb, 1);
    sb.run(&["batch", "DATA", dir.to_str().unwrap(), "--keep", "all"])
        .ok();
    let data = sb.data();
    assert!(data.join("work/j0/1/src/lib.rs").is_file());
    assert!(data.join("work/j0/1-acceptance").is_dir());
    sb.run(&["gc", "DATA"])
        .ok()
        .stdout_has("removed the directories of 1 attempt,");
    assert!(!data.join("work/j0/1").exists());
    assert!(!data.join("work/j0/1-acceptance").exists());
    assert!(data.join("runs/j0/1/patch.diff").is_file());
    assert!(data.join("runs/j0/1/acceptance.log").is_file());
    sb.run(&["gc", "DATA"])
        .ok()
        .stdout_has("removed the directories of 0 attempts,");
}

/// Unmounts the small file system below when the test ends.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn on_a_full_disk_each_jobs_error_is_printed_before_the_report_error() {
    let sb = Sandbox::new();
    let data = sb.data();
    std::fs::create_dir_all(&data).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&data)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        agent_runtime_test_support::skip(
            agent_runtime_test_support::Need::Tool,
            "on_a_full_disk_each_jobs_error_is_printed_before_the_report_error",
            "cannot mount a small tmpfs here (needs root) to fill up",
        );
        return;
    }
    let _guard = Mounted(data.clone());
    let source = sb.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("a.txt"), "old\n").unwrap();
    // Bigger than the file system: copying the source runs out of space.
    std::fs::write(source.join("big.bin"), vec![7u8; 400 * 1024]).unwrap();
    std::fs::write(
        sb.path().join("s.jsonl"),
        "{\"kind\":\"finish\",\"summary\":\"done\"}\n",
    )
    .unwrap();
    let job = sb.path().join("full.toml");
    std::fs::write(
        &job,
        "id = \"full\"\nprompt = \"x\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n[provider]\nkind = \"script\"\nscript = \"s.jsonl\"\n",
    )
    .unwrap();
    let run = sb.run(&["batch", "DATA", job.to_str().unwrap()]);
    assert_ne!(run.code, 0, "{run:#?}");
    let job_error = run
        .stderr
        .find("error: job full: infra_error")
        .unwrap_or_else(|| panic!("the job's error is not printed:\n{}", run.stderr));
    assert!(
        run.stderr[job_error..].contains("No space left on device"),
        "{}",
        run.stderr
    );
    let report_error = run
        .stderr
        .find("failed to write the reports")
        .unwrap_or_else(|| panic!("the report error is not printed:\n{}", run.stderr));
    assert!(job_error < report_error, "{}", run.stderr);
    assert_eq!(crate::harness::job_state(&sb, "full"), "failed");
}
