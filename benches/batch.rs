//! `cargo bench --bench batch`: the runtime's own cost per job in a batch.
//!
//! 100 scripted jobs whose only command is `true` (write a file, verify with
//! `true`, finish; no acceptance) run with `-j` = the number of CPUs, on a
//! fresh data dir each time; the median wall time of the whole `batch`
//! command over the runs is reported.
//!
//! Overhead per job is defined as `wall × workers / jobs`: the worker time
//! one job occupies. The commands themselves (`true`) take next to nothing,
//! so this is what the runtime adds per job: startup and enqueue shared out,
//! workspace copy, provider, sandboxed `true`, event appends and fsyncs,
//! patch, reports. The target is under 25 ms.
//!
//! Prints one line to stdout:
//! `BENCH batch jobs=<n> wall_s=<s> overhead_ms_per_job=<ms>`
//! and, on stderr, where the time of the median run went (from the log's
//! timestamps).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const JOBS: usize = 100;
const RUNS: usize = 5;
const BIN: &str = env!("CARGO_BIN_EXE_agent-runtime");

fn fixture(name: &str) -> String {
    format!("{}/evaluation/bench/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn write_jobs(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..JOBS {
        let id = format!("bench{i:03}");
        let manifest = format!(
            "id = {id:?}\nfamily = \"bench\"\nprompt = \"Write out.txt, verify, finish.\"\n\
             source = {source:?}\neditable = [\"**\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n\
             [provider]\nkind = \"script\"\nscript = {script:?}\n",
            source = fixture("source"),
            script = fixture("write_verify_finish.jsonl"),
        );
        std::fs::write(dir.join(format!("{id}.toml")), manifest).unwrap();
    }
}

fn log_records(data: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(data.join("events.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Mean time between consecutive events of an attempt, by transition, and
/// the time before the first attempt and after the last one.
fn breakdown(data: &Path, started_ms: u64, ended_ms: u64) {
    let records = log_records(data);
    let mut last: BTreeMap<String, (String, u64)> = BTreeMap::new();
    let mut gaps: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let (mut first_start, mut last_finish) = (u64::MAX, 0);
    for r in &records {
        let (Some(job), Some(ty), Some(ts)) =
            (r["job"].as_str(), r["type"].as_str(), r["ts"].as_u64())
        else {
            continue;
        };
        if ty == "attempt_started" {
            first_start = first_start.min(ts);
        }
        if ty == "attempt_finished" {
            last_finish = last_finish.max(ts);
        }
        if let Some((prev, at)) = last.insert(job.to_string(), (ty.to_string(), ts)) {
            let slot = gaps.entry(format!("{prev} -> {ty}")).or_default();
            slot.0 += ts.saturating_sub(at);
            slot.1 += 1;
        }
    }
    eprintln!("where the time of the median run went (ms, from the log's timestamps):");
    eprintln!(
        "  start, parse and enqueue until the first attempt: {}",
        first_start.saturating_sub(started_ms)
    );
    eprintln!(
        "  after the last attempt (reports, exit): {}",
        ended_ms.saturating_sub(last_finish)
    );
    let mut rows: Vec<_> = gaps.into_iter().collect();
    rows.sort_by_key(|(_, (total, _))| std::cmp::Reverse(*total));
    for (transition, (total, n)) in rows {
        eprintln!(
            "  {transition:<36} mean {:>6.1}  total {total:>6}  (n={n})",
            total as f64 / n as f64
        );
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs");
    write_jobs(&jobs);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());

    let mut runs: Vec<(Duration, std::path::PathBuf, u64, u64)> = Vec::new();
    for run in 0..RUNS {
        let data = dir.path().join(format!("data{run}"));
        let started_ms = now_ms();
        let started = Instant::now();
        let status = Command::new(BIN)
            .args(["batch", data.to_str().unwrap(), jobs.to_str().unwrap()])
            .args(["-j", &workers.to_string()])
            .env("CI", "true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        let wall = started.elapsed();
        assert_eq!(status.code(), Some(0), "the bench batch failed");
        let finished = log_records(&data)
            .iter()
            .filter(|r| r["type"] == "attempt_finished" && r["outcome"] == "succeeded")
            .count();
        assert_eq!(finished, JOBS, "not every job succeeded");
        runs.push((wall, data, started_ms, now_ms()));
    }
    runs.sort_by_key(|r| r.0);
    let (wall, data, started_ms, ended_ms) = &runs[runs.len() / 2];
    breakdown(data, *started_ms, *ended_ms);
    let walls: Vec<String> = runs
        .iter()
        .map(|r| format!("{:.3}", r.0.as_secs_f64()))
        .collect();
    eprintln!("walls (s, sorted): {} with -j {workers}", walls.join(" "));
    let overhead_ms = wall.as_secs_f64() * 1000.0 * workers as f64 / JOBS as f64;
    println!(
        "BENCH batch jobs={JOBS} wall_s={:.3} overhead_ms_per_job={overhead_ms:.1}",
        wall.as_secs_f64()
    );
}
