//! `cargo bench --bench job`: one job whose crate has crates.io
//! dependencies, run by hand and through the runtime, side by side.
//!
//! - **bare**: `cargo build` then `cargo test` of the fixed crate (the
//!   bundled `wrong_comparator` fixture with its fix and hidden tests) in a
//!   fresh copy, with a warm registry: what building and testing the crate
//!   by hand costs.
//! - **runtime**: the whole job through `batch` with the scripted fix, on a
//!   fresh data dir whose job cache holds what setup fetched (so no time
//!   goes to the network; the dependencies are not built yet): setup
//!   (reused), baseline, agent with verify, patch, acceptance, reports.
//!
//! Runs alternate, RUNS of each; the medians are compared. The first run
//! fetches the crates once (untimed; needs the registry, else the bench
//! says why on stderr and prints nothing).
//!
//! `AGENT_RUNTIME_BENCH_BIN=PATH` measures another build of the binary; one
//! that predates `[setup]` gets the manifest without it, the crates being
//! fetched into the runner's own registry instead.
//!
//! Prints one line to stdout:
//! `BENCH job bare_ms=<n> runtime_ms=<n> ratio=<r>`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 3;
const JOB: &str = "wrong_comparator";

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
    let text = std::fs::read_to_string(root().join(format!("jobs/{JOB}.toml"))).unwrap();
    let text = text.replace("\"../", &format!("\"{}/", root().display()));
    let text = if with_setup {
        text
    } else {
        let start = text.find("[setup]").unwrap();
        let end = start + text[start..].find("\n\n").unwrap();
        format!("{}{}", &text[..start], &text[end..])
    };
    let path = dir.join(format!("{JOB}.toml"));
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

/// `cargo build` + `cargo test` of the fixed crate in a fresh copy.
fn bare(dir: &Path, home: &Path, run: usize) -> Duration {
    let copy = dir.join(format!("bare{run}"));
    copy_dir(&root().join(format!("evaluation/fixtures/{JOB}")), &copy);
    copy_dir(
        &root().join(format!("evaluation/acceptance/{JOB}/tests/acceptance.rs")),
        &copy.join("tests/acceptance.rs"),
    );
    let lib = copy.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    let fixed = text.replace("a.1.cmp(&b.1)", "b.1.cmp(&a.1)");
    assert_ne!(text, fixed, "the fix applies");
    std::fs::write(&lib, fixed).unwrap();
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

/// The job through `batch` on a fresh data dir; `seed` is a data dir whose
/// job cache (setup only, no dependency layer) is copied in first.
fn runtime(dir: &Path, manifest: &Path, seed: Option<&Path>, run: usize) -> Duration {
    let data = dir.join(format!("data{run}"));
    std::fs::create_dir_all(&data).unwrap();
    if let Some(seed) = seed {
        copy_dir(&seed.join("cache"), &data.join("cache"));
        for entry in std::fs::read_dir(data.join("cache")).unwrap().flatten() {
            let _ = std::fs::remove_dir_all(entry.path().join("deps"));
        }
    }
    let started = Instant::now();
    let ok = quiet(Command::new(bin()).arg("batch").arg(&data).arg(manifest));
    let wall = started.elapsed();
    assert!(
        ok,
        "the job failed through the runtime ({})",
        data.display()
    );
    wall
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let supports_setup = quiet(
        Command::new(bin())
            .arg("validate")
            .arg(root().join(format!("jobs/{JOB}.toml"))),
    );
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
            .current_dir(root().join(format!("evaluation/fixtures/{JOB}")));
        if !quiet(&mut fetch) {
            eprintln!("skipping: cargo fetch failed (is the registry reachable?)");
            return;
        }
        (home, None)
    };
    let (mut bares, mut runtimes) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        bares.push(bare(dir.path(), &home, run));
        runtimes.push(runtime(dir.path(), &manifest, seed.as_deref(), run));
    }
    let show = |v: &[Duration]| {
        v.iter()
            .map(|d| d.as_millis().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    eprintln!(
        "bare runs (ms): {}; runtime runs (ms): {}; binary {}{}",
        show(&bares),
        show(&runtimes),
        bin().display(),
        if supports_setup {
            ""
        } else {
            " (without [setup])"
        }
    );
    let (bare, runtime) = (median(bares), median(runtimes));
    println!(
        "BENCH job bare_ms={} runtime_ms={} ratio={:.2}",
        bare.as_millis(),
        runtime.as_millis(),
        runtime.as_secs_f64() / bare.as_secs_f64()
    );
}
