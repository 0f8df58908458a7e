//! `cargo bench --bench batch`: the runtime's own cost per job in a batch.
//!
//! Sweeps of 200 and 4,000 scripted jobs (`BENCH_BATCH_JOBS=N,M` for other
//! sizes) whose only command is `true` (write a file, verify with `true`,
//! finish; no acceptance) run with `-j` = the number of CPUs, on a fresh
//! data dir each time; the median wall time of the whole `batch` command
//! over the runs (5 of the small one, 3 of the large) is reported, with
//! the runner's peak RSS (the most any of its runs held). The cost per job should not grow with the sweep:
//! `growth` is the large sweep's cost per job over the small one's.
//!
//! Overhead per job is defined as `wall × workers / jobs`: the worker time
//! one job occupies. The commands themselves (`true`) take next to nothing,
//! so this is what the runtime adds per job: startup and enqueue shared out,
//! workspace copy, provider, sandboxed `true`, event appends and fsyncs,
//! patch, reports. The target is under 25 ms.
//!
//! Prints one line to stdout:
//! `BENCH batch jobs=200 wall_s=<s> overhead_ms_per_job=<ms> peak_rss_mb=<mb>
//! jobs_4000=4000 wall_s_4000=<s> overhead_ms_per_job_4000=<ms>
//! peak_rss_mb_4000=<mb> growth=<ratio>`
//! and, on stderr, where the time of the median run went (from the log's
//! timestamps).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The two sweep sizes compared (`BENCH_BATCH_JOBS=200,4000` by default).
const SMALL: usize = 200;
const LARGE: usize = 4000;
/// Runs of the small batch (the large one runs 3 times).
const RUNS: usize = 5;
const BIN: &str = env!("CARGO_BIN_EXE_agent-runtime");

fn fixture(name: &str) -> String {
    format!("{}/evaluation/bench/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn write_jobs(dir: &Path, jobs: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..jobs {
        let id = format!("bench{i:05}");
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

/// What the bench reads of one record of the log.
#[derive(serde::Deserialize)]
struct Rec {
    job: Option<String>,
    #[serde(rename = "type")]
    ty: String,
    ts: Option<u64>,
    outcome: Option<String>,
}

/// Each record of the log, read a line at a time: the bench keeps its own
/// footprint small, since a child it starts (by `vfork`) inherits its
/// high-water RSS, which would then pass for the runner's.
fn each_record(data: &Path, mut f: impl FnMut(Rec)) {
    use std::io::BufRead;
    let log = std::fs::File::open(data.join("events.log")).unwrap();
    for line in std::io::BufReader::new(log).lines() {
        f(serde_json::from_str(&line.unwrap()).unwrap());
    }
}

/// Mean time between consecutive events of an attempt, by transition, and
/// the time before the first attempt and after the last one.
fn breakdown(data: &Path, started_ms: u64, ended_ms: u64) {
    let mut last: BTreeMap<String, (String, u64)> = BTreeMap::new();
    let mut gaps: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let (mut first_start, mut last_finish) = (u64::MAX, 0);
    each_record(data, |r| {
        let (Some(job), ty, Some(ts)) = (r.job, r.ty, r.ts) else {
            return;
        };
        if ty == "attempt_started" {
            first_start = first_start.min(ts);
        }
        if ty == "attempt_finished" {
            last_finish = last_finish.max(ts);
        }
        if let Some((prev, at)) = last.insert(job, (ty.clone(), ts)) {
            let slot = gaps.entry(format!("{prev} -> {ty}")).or_default();
            slot.0 += ts.saturating_sub(at);
            slot.1 += 1;
        }
    });
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

/// One batch of `jobs` trivial jobs on a fresh data dir: its wall time, the
/// data dir, when it started and ended, and the peak RSS of the largest
/// process it ran (the runner), in KiB.
fn run_once(
    root: &Path,
    jobs: usize,
    run: usize,
    workers: usize,
) -> (Duration, PathBuf, u64, u64, i64) {
    let manifests = root.join(format!("jobs{jobs}"));
    if !manifests.exists() {
        write_jobs(&manifests, jobs);
    }
    let data = root.join(format!("data{jobs}-{run}"));
    let started_ms = now_ms();
    let started = Instant::now();
    let mut child = Command::new(BIN)
        .args(["batch", data.to_str().unwrap(), manifests.to_str().unwrap()])
        .args(["-j", &workers.to_string()])
        .env("CI", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (status, peak_kib) = wait_with_rusage(&mut child);
    let wall = started.elapsed();
    assert_eq!(status, 0, "the bench batch failed");
    let mut finished = 0;
    each_record(&data, |r| {
        finished +=
            usize::from(r.ty == "attempt_finished" && r.outcome.as_deref() == Some("succeeded"));
    });
    assert_eq!(finished, jobs, "not every job succeeded");
    (wall, data, started_ms, now_ms(), peak_kib)
}

/// Waits for `child` and returns its exit code and the peak RSS (KiB) of
/// the largest process this bench has waited for so far: sizes run in
/// increasing order, so it is the runner of the largest batch yet.
fn wait_with_rusage(child: &mut std::process::Child) -> (i32, i64) {
    let status = child.wait().unwrap();
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    (status.code().unwrap_or(-1), usage.max_rss())
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let sizes: Vec<usize> = std::env::var("BENCH_BATCH_JOBS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![SMALL, LARGE]);
    let mut line = String::from("BENCH batch");
    let mut per_job = Vec::new();
    for (i, &jobs) in sizes.iter().enumerate() {
        let runs = if jobs <= SMALL { RUNS } else { 3 };
        let mut results: Vec<_> = (0..runs)
            .map(|run| run_once(dir.path(), jobs, run, workers))
            .collect();
        results.sort_by_key(|r| r.0);
        let (wall, data, started_ms, ended_ms, _) = &results[results.len() / 2];
        eprintln!("== {jobs} jobs, -j {workers}");
        breakdown(data, *started_ms, *ended_ms);
        let walls: Vec<String> = results
            .iter()
            .map(|r| format!("{:.3}", r.0.as_secs_f64()))
            .collect();
        eprintln!("walls (s, sorted): {}", walls.join(" "));
        // The most any runner of this size (or a smaller one before it)
        // held: what `RUSAGE_CHILDREN` says after the last of them.
        let peak_mb = results.iter().map(|r| r.4).max().unwrap_or(0) as f64 / 1024.0;
        let ms = wall.as_secs_f64() * 1000.0 * workers as f64 / jobs as f64;
        per_job.push(ms);
        let suffix = if i == 0 {
            String::new()
        } else {
            format!("_{jobs}")
        };
        if i == 0 {
            line.push_str(&format!(" jobs={jobs}"));
        } else {
            line.push_str(&format!(" jobs{suffix}={jobs}"));
        }
        line.push_str(&format!(
            " wall_s{suffix}={:.3} overhead_ms_per_job{suffix}={ms:.1} peak_rss_mb{suffix}={peak_mb:.1}",
            wall.as_secs_f64()
        ));
        for (_, data, ..) in &results {
            let _ = std::fs::remove_dir_all(data);
        }
    }
    if per_job.len() > 1 {
        line.push_str(&format!(
            " growth={:.2}",
            per_job[per_job.len() - 1] / per_job[0]
        ));
    }
    println!("{line}");
}
