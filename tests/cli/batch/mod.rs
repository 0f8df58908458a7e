//! `batch` and `report` through the real binary, one concept per file:
//! crash recovery under SIGKILL (`kills`), Ctrl-C (`interrupt`), parallel
//! workers and idempotent reruns (`workers`), provider sweeps, families and
//! shards (`selection`) and plain progress lines (`progress`). This module
//! holds what they share: generated manifests, running the binary, status.
//!
//! The jobs are generated in the temp dir and use only `true`, `false`,
//! `sleep` and `test`, with the scripted provider and the small fixtures in
//! `evaluation/bench/`, so nothing here needs cargo, a network or a model.

mod interrupt;
mod kills;
mod progress;
mod selection;
mod workers;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{BIN, Run};

fn fixture(name: &str) -> String {
    format!("{}/evaluation/bench/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// One generated manifest.
struct JobSpec {
    id: String,
    family: String,
    script: &'static str,
    verify: &'static [&'static str],
    /// Acceptance command and baseline mode.
    acceptance: Option<(&'static [&'static str], &'static str)>,
    attempts: u32,
}

impl JobSpec {
    fn new(id: impl Into<String>, script: &'static str) -> JobSpec {
        JobSpec {
            id: id.into(),
            family: "batch".into(),
            script,
            verify: &["true"],
            acceptance: None,
            attempts: 2,
        }
    }

    fn family(mut self, family: &str) -> JobSpec {
        self.family = family.into();
        self
    }

    fn verify(mut self, verify: &'static [&'static str]) -> JobSpec {
        self.verify = verify;
        self
    }

    fn acceptance(mut self, command: &'static [&'static str], baseline: &'static str) -> JobSpec {
        self.acceptance = Some((command, baseline));
        self
    }

    fn attempts(mut self, attempts: u32) -> JobSpec {
        self.attempts = attempts;
        self
    }

    fn toml(&self) -> String {
        let list = |items: &[&str]| {
            items
                .iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!(
            "id = {id:?}\nfamily = {family:?}\nprompt = \"Write out.txt, verify, finish.\"\n\
             source = {source:?}\neditable = [\"**\"]\n\
             allow = [\"true\", \"false\", \"sleep **\"]\nverify = [{verify}]\n\n\
             [limits]\nattempts = {attempts}\n\n\
             [provider]\nkind = \"script\"\nscript = {script:?}\n",
            id = self.id,
            family = self.family,
            source = fixture("source"),
            verify = list(self.verify),
            attempts = self.attempts,
            script = fixture(self.script),
        );
        if let Some((command, baseline)) = self.acceptance {
            text.push_str(&format!(
                "\n[acceptance]\ndir = {dir:?}\ncommand = [{command}]\nbaseline = {baseline:?}\n",
                dir = fixture("acceptance"),
                command = list(command),
            ));
        }
        text
    }
}

/// Writes the manifests into `dir` (created) and returns it.
fn write_jobs(dir: &Path, jobs: &[JobSpec]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for job in jobs {
        std::fs::write(dir.join(format!("{}.toml", job.id)), job.toml()).unwrap();
    }
    dir.to_path_buf()
}

/// Runs the binary with `args` in `cwd`, output captured.
fn run_in(cwd: &Path, args: &[&str], envs: &[(&str, &str)]) -> Run {
    let output = Command::new(BIN)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(cwd)
        .output()
        .unwrap();
    Run::from(output)
}

fn status_json(cwd: &Path, data: &Path) -> serde_json::Value {
    let run = run_in(cwd, &["status", data.to_str().unwrap(), "--json"], &[]).ok();
    serde_json::from_str(&run.stdout).unwrap()
}

/// `(id, state)` of every job in `status --json`.
fn states(cwd: &Path, data: &Path) -> BTreeMap<String, String> {
    status_json(cwd, data)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["id"].as_str().unwrap().to_string(),
                j["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn count(lines: &[serde_json::Value], ty: &str) -> usize {
    lines.iter().filter(|l| l["type"] == ty).count()
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Polls `cond` every 20 ms until it holds or `limit` passes.
fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A `batch` run in the background, its output in files beside the data dir.
fn spawn_batch(cwd: &Path, args: &[&str], tag: &str) -> Child {
    let out = File::create(cwd.join(format!("{tag}.stdout"))).unwrap();
    let err = File::create(cwd.join(format!("{tag}.stderr"))).unwrap();
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap()
}

fn jobs_by_instance(results: &serde_json::Value) -> BTreeMap<String, serde_json::Value> {
    results["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["instance"].as_str().unwrap().to_string(), j.clone()))
        .collect()
}
