//! `cargo bench --bench job`: one bundled job (by default
//! `wrong_comparator`, whose crate has crates.io dependencies) run by hand
//! and through the runtime, side by side.
//!
//! - **bare**: `cargo build` then `cargo test` of the fixed crate (the
//!   job's fixture with the fix of its oracle script and its hidden tests)
//!   in a fresh copy, with a warm registry: what building and testing the
//!   crate by hand costs, its dependencies included.
//! - **runtime, cold**: the whole job through `batch` with the scripted
//!   fix, on a fresh data dir whose job cache holds what setup fetched (so
//!   no time goes to the network; the dependencies are not built yet):
//!   setup (reused), baseline (which builds the dependencies and gives the
//!   job its dependency layer), agent with verify, patch, acceptance,
//!   reports.
//! - **runtime, warm**: the same job again in that data dir
//!   (`batch --rerun all`): the baseline is reused from the cold run (no
//!   command runs for it) and the dependency layer is there, so what is
//!   left is the agent's verify and acceptance, each building the crate
//!   itself.
//!
//! Runs alternate, RUNS of each; the medians are compared. For a job with
//! `[setup]` the first run fetches the crates once (untimed; needs the
//! registry, else the bench says why on stderr and prints nothing).
//!
//! `AGENT_RUNTIME_BENCH_JOB=NAME` measures another bundled job
//! (`jobs/NAME.toml`). `AGENT_RUNTIME_BENCH_BIN=PATH` measures another
//! build of the binary; one that predates `[setup]` gets the manifest
//! without it, the crates being fetched into the runner's own registry
//! instead.
//!
//! Prints one line to stdout (`runtime_ms` and `ratio` are the warm
//! figures):
//! `BENCH job bare_ms=<n> runtime_ms=<n> ratio=<r> runtime_cold_ms=<n> ratio_cold=<r>`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 3;

fn job() -> String {
    std::env::var("AGENT_RUNTIME_BENCH_JOB").unwrap_or_else(|_| "wrong_comparator".into())
}

/// Variables of the bench's own environment that would change the bare build.
const BUILD_VARS: [&str; 7] = [
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_INCREMENTAL",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "CARGO_BUILD_JOBS",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> PathBuf {
    std::env::var_os("AGENT_RUNTIME_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_agent-runtime")))
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

/// The job's manifest with absolute paths, with or without `[setup]`.
fn manifest(dir: &Path, with_setup: bool) -> PathBuf {
    let job = job();
    let text = std::fs::read_to_string(root().join(format!("jobs/{job}.toml"))).unwrap();
    let text = text.replace("\"../", &format!("\"{}/", root().display()));
    let text = match text.find("[setup]") {
        Some(start) if !with_setup => {
            let end = start + text[start..].find("\n\n").unwrap();
            format!("{}{}", &text[..start], &text[end..])
        }
        _ => text,
    };
    let path = dir.join(format!("{job}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn quiet(command: &mut Command) -> bool {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env("CI", "true")
        .status()
        .is_ok_and(|s| s.success())
}

/// The oracle script's edits (`write_file`, `replace_text`) applied to
/// the crate at `copy`.
fn apply_fix(copy: &Path) {
    let script = root().join(format!("evaluation/scripts/{}.jsonl", job()));
    let mut edits = 0;
    for line in std::fs::read_to_string(&script).unwrap().lines() {
        let Ok(step) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let str_of = |key: &str| step[key].as_str().unwrap_or_default().to_string();
        let file = copy.join(str_of("path"));
        match step["kind"].as_str() {
            Some("write_file") => std::fs::write(&file, str_of("content")).unwrap(),
            Some("replace_text") => {
                let text = std::fs::read_to_string(&file).unwrap();
                let expected = str_of("expected");
                assert!(
                    text.contains(&expected),
                    "the fix applies to {}",
                    file.display()
                );
                std::fs::write(&file, text.replacen(&expected, &str_of("replacement"), 1)).unwrap();
            }
            _ => continue,
        }
        edits += 1;
    }
    assert!(edits > 0, "{} holds a fix", script.display());
}

/// `cargo build` + `cargo test` of the fixed crate in a fresh copy.
fn bare(dir: &Path, home: &Path, run: usize) -> Duration {
    let job = job();
    let copy = dir.join(format!("bare{run}"));
    copy_dir(&root().join(format!("evaluation/fixtures/{job}")), &copy);
    // The hidden tests on top, as acceptance lays them.
    let status = Command::new("cp")
        .arg("-a")
        .arg(root().join(format!("evaluation/acceptance/{job}/.")))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success(), "the hidden tests copy");
    apply_fix(&copy);
    let started = Instant::now();
    for args in [
        &["build", "--offline"][..],
        &["test", "--offline", "--quiet"][..],
    ] {
        let mut command = Command::new(cargo());
        command
            .args(args)
            .current_dir(&copy)
            .env("CARGO_HOME", home);
        // As by hand: nothing `cargo bench` itself set (a shared target
        // dir would make every run after the first warm).
        for var in BUILD_VARS {
            command.env_remove(var);
        }
        assert!(quiet(&mut command), "bare cargo {args:?} failed");
    }
    started.elapsed()
}

/// The job through `batch` on a fresh data dir (cold), then again in
/// that data dir with its baseline reused (warm); `seed` is a data dir
/// whose job cache (setup only, no dependency layer) is copied in first.
fn runtime(dir: &Path, manifest: &Path, seed: Option<&Path>, run: usize) -> (Duration, Duration) {
    let data = dir.join(format!("data{run}"));
    std::fs::create_dir_all(&data).unwrap();
    if let Some(seed) = seed {
        copy_dir(&seed.join("cache"), &data.join("cache"));
        for entry in std::fs::read_dir(data.join("cache")).unwrap().flatten() {
            let _ = std::fs::remove_dir_all(entry.path().join("deps"));
        }
    }
    let timed = |extra: &[&str]| {
        let started = Instant::now();
        let ok = quiet(
            Command::new(bin())
                .arg("batch")
                .arg(&data)
                .arg(manifest)
                .args(extra),
        );
        let wall = started.elapsed();
        assert!(
            ok,
            "the job failed through the runtime ({})",
            data.display()
        );
        wall
    };
    let cold = timed(&[]);
    let warm = timed(&["--rerun", "all"]);
    (cold, warm)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let job = job();
    let job_file = root().join(format!("jobs/{job}.toml"));
    let has_setup = std::fs::read_to_string(&job_file)
        .unwrap()
        .contains("[setup]");
    let supports_setup = has_setup && quiet(Command::new(bin()).arg("validate").arg(&job_file));
    let manifest = manifest(dir.path(), supports_setup);
    // Untimed: fetch the crates once (the job's own cache, or the runner's
    // registry for a binary without [setup]) and build nothing yet.
    let (home, seed) = if supports_setup {
        let warm = dir.path().join("warm");
        if !quiet(Command::new(bin()).arg("batch").arg(&warm).arg(&manifest)) {
            eprintln!(
                "skipping: the job's setup could not fetch its crates (is the registry reachable?)"
            );
            return;
        }
        let cache = std::fs::read_dir(warm.join("cache"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.is_dir())
            .unwrap();
        (cache.join("setup/cargo"), Some(warm))
    } else {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo"));
        let mut fetch = Command::new(cargo());
        fetch
            .args(["fetch", "--locked"])
            .current_dir(root().join(format!("evaluation/fixtures/{job}")));
        if !quiet(&mut fetch) {
            eprintln!("skipping: cargo fetch failed (is the registry reachable?)");
            return;
        }
        (home, None)
    };
    let (mut bares, mut colds, mut warms) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..RUNS {
        bares.push(bare(dir.path(), &home, run));
        let (cold, warm) = runtime(dir.path(), &manifest, seed.as_deref(), run);
        colds.push(cold);
        warms.push(warm);
    }
    let show = |v: &[Duration]| {
        v.iter()
            .map(|d| d.as_millis().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    eprintln!(
        "{job}: bare runs (ms): {}; runtime runs, cold (ms): {}; warm (ms): {}; binary {}{}",
        show(&bares),
        show(&colds),
        show(&warms),
        bin().display(),
        if has_setup && !supports_setup {
            " (without [setup])"
        } else {
            ""
        }
    );
    let (bare, cold, warm) = (median(bares), median(colds), median(warms));
    let ratio = |d: Duration| d.as_secs_f64() / bare.as_secs_f64();
    println!(
        "BENCH job bare_ms={} runtime_ms={} ratio={:.2} runtime_cold_ms={} ratio_cold={:.2}",
        bare.as_millis(),
        warm.as_millis(),
        ratio(warm),
        cold.as_millis(),
        ratio(cold)
    );
}
