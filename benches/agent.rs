//! `cargo bench --bench agent`: the time from launching Claude Code to its
//! first model request at the bridge, in the agent's own sandbox (its
//! network namespace, Landlock, seccomp, PID and mount namespaces, cgroup:
//! as a leashed attempt runs it) and as a bare process, RUNS times each,
//! alternating; the medians. Claude Code is installed first with `agents
//! install` into the target dir (the npm registry, or its cache).
//!
//! Prints one line to stdout:
//! `BENCH agent start_ms=<n> bare_ms=<n> ratio=<r>`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const RUNS: usize = 7;
const BIN: &str = env!("CARGO_BIN_EXE_agent-runtime");

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-agents");
    let status = Command::new(BIN)
        .args(["agents", "install"])
        .arg(&data)
        .arg("claude-code")
        .status()
        .unwrap();
    assert!(status.success(), "cannot install claude-code");
    let install = data.join("cache/agents/claude-code@2.1.197");
    let (mut sandboxed, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        sandboxed.push(agent_runtime::cli::bench::agent_start(&install, true).unwrap());
        bare.push(agent_runtime::cli::bench::agent_start(&install, false).unwrap());
    }
    let (sandboxed, bare) = (median(sandboxed), median(bare));
    println!(
        "BENCH agent start_ms={} bare_ms={} ratio={:.2}",
        sandboxed.as_millis(),
        bare.as_millis(),
        sandboxed.as_secs_f64() / bare.as_secs_f64()
    );
}
