//! `cargo bench --bench agent`: what the agent's sandbox and the runtime
//! cost an external agent.
//!
//! 1. The time from launching an agent to its first model request at the
//!    bridge, in the agent's own sandbox (its network namespace, Landlock,
//!    seccomp, PID and mount namespaces, cgroup: as an attempt runs it) and
//!    as a bare process, RUNS times each, alternating; the medians and
//!    their ratio. Claude Code leashed (`start_ms`, `bare_ms`, `ratio`),
//!    then each agent contained (`<agent>_ms`, `<agent>_bare_ms`,
//!    `<agent>_ratio`).
//! 2. The bundled jobs × the three agents contained under the `oracle`
//!    provider, one job at a time, through the binary: per job its wall
//!    time, the agent's own (its process, every round: `agent_finished`'s
//!    `agent_ms`), the rest (`overhead_ms`, the runtime's) and how much of
//!    that rest is the job's own test runs (baseline, verify, acceptance:
//!    `judge_ms`); medians over the jobs.
//!
//! The agents are installed first with `agents install` into the target
//! dir (the registries, or their caches).
//!
//! Prints one line to stdout:
//! `BENCH agent start_ms=<n> bare_ms=<n> ratio=<r> claude_code_ms=<n> ...
//! sweep_jobs=<n> wall_ms=<n> agent_ms=<n> overhead_ms=<n> judge_ms=<n>`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const RUNS: usize = 7;
const BIN: &str = env!("CARGO_BIN_EXE_agent-runtime");
const AGENTS: [(&str, &str); 3] = [
    ("claude-code", "2.1.197"),
    ("codex", "0.171.0"),
    ("mini-swe-agent", "2.4.6"),
];

fn median<T: Ord + Copy>(mut samples: Vec<T>) -> T {
    samples.sort();
    samples[samples.len() / 2]
}

/// Medians of `RUNS` launches, sandboxed and bare, alternating.
fn start(name: &str, contained: bool, install: &Path) -> (Duration, Duration) {
    let (mut sandboxed, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        sandboxed
            .push(agent_runtime::cli::bench::agent_start(name, contained, install, true).unwrap());
        bare.push(agent_runtime::cli::bench::agent_start(name, contained, install, false).unwrap());
    }
    (median(sandboxed), median(bare))
}

fn main() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-agents");
    let mut install = Command::new(BIN);
    install.args(["agents", "install"]).arg(&data);
    for (name, _) in AGENTS {
        install.arg(name);
    }
    assert!(
        install.status().unwrap().success(),
        "cannot install the agents"
    );
    let installed = |name: &str, version: &str| data.join(format!("cache/agents/{name}@{version}"));

    let mut line = String::from("BENCH agent");
    let (sandboxed, bare) = start("claude-code", false, &installed("claude-code", "2.1.197"));
    line.push_str(&format!(
        " start_ms={} bare_ms={} ratio={:.2}",
        sandboxed.as_millis(),
        bare.as_millis(),
        sandboxed.as_secs_f64() / bare.as_secs_f64()
    ));
    for (name, version) in AGENTS {
        let (sandboxed, bare) = start(name, true, &installed(name, version));
        let key = name.replace('-', "_");
        line.push_str(&format!(
            " {key}_ms={} {key}_bare_ms={} {key}_ratio={:.2}",
            sandboxed.as_millis(),
            bare.as_millis(),
            sandboxed.as_secs_f64() / bare.as_secs_f64()
        ));
    }

    let sweep = sweep(&data);
    line.push_str(&sweep);
    println!("{line}");
}

/// The bundled sweep, contained, through the binary; its figures.
fn sweep(data: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let sweep_data = dir.path().join("data");
    // The installs are shared: linked, not installed again.
    std::fs::create_dir_all(sweep_data.join("cache")).unwrap();
    std::os::unix::fs::symlink(data.join("cache/agents"), sweep_data.join("cache/agents")).unwrap();
    let oracle = dir.path().join("oracle.toml");
    std::fs::write(
        &oracle,
        "name = \"oracle\"\n\n[provider]\nkind = \"oracle\"\n",
    )
    .unwrap();
    let jobs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("jobs");
    let mut batch = Command::new(BIN);
    batch
        .arg("batch")
        .arg(&sweep_data)
        .arg(&jobs)
        .arg("--provider")
        .arg(&oracle)
        .args(["-j", "1"]);
    for (name, _) in AGENTS {
        batch.args(["--agent", &format!("{name}:contained")]);
    }
    let out = batch.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Per job: wall (attempt started to finished) and the agent's own.
    let log = std::fs::read_to_string(sweep_data.join("events.log")).unwrap();
    let mut started: BTreeMap<String, u64> = BTreeMap::new();
    let mut agent: BTreeMap<String, u64> = BTreeMap::new();
    let mut wall: BTreeMap<String, u64> = BTreeMap::new();
    for record in log.lines() {
        let record: serde_json::Value = serde_json::from_str(record).unwrap();
        let job = record["job"].as_str().unwrap_or_default().to_string();
        let ts = record["ts"].as_u64().unwrap_or(0);
        match record["type"].as_str() {
            Some("attempt_started") => {
                started.insert(job, ts);
            }
            Some("agent_finished") => {
                agent.insert(job, record["agent_ms"].as_u64().unwrap());
            }
            Some("attempt_finished") => {
                wall.insert(job.clone(), ts - started[&job]);
            }
            _ => {}
        }
    }
    // The job's own test runs, from the report.
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sweep_data.join("report/results.json")).unwrap(),
    )
    .unwrap();
    let mut judge: BTreeMap<String, u64> = BTreeMap::new();
    for job in results["jobs"].as_array().unwrap() {
        let ms = ["acceptance_ms", "verify_ms", "setup_ms"]
            .iter()
            .map(|k| job[*k].as_u64().unwrap_or(0))
            .sum();
        judge.insert(job["instance"].as_str().unwrap().to_string(), ms);
    }
    assert_eq!(wall.len(), 27, "{wall:?}");
    let overhead: Vec<u64> = wall
        .iter()
        .map(|(job, ms)| ms.saturating_sub(agent[job]))
        .collect();
    format!(
        " sweep_jobs={} wall_ms={} agent_ms={} overhead_ms={} judge_ms={}",
        wall.len(),
        median(wall.values().copied().collect()),
        median(agent.values().copied().collect()),
        median(overhead),
        median(judge.values().copied().collect()),
    )
}
