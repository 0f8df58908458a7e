//! `demo`: the bundled jobs (embedded in the binary), with the scripted
//! provider, in a scratch directory removed afterwards unless `--keep`. A
//! job whose `[setup]` needs the network (to fetch crates from the
//! registry) runs when the registry answers and is left out with the
//! reason when it does not, so the demo passes on a machine without a
//! network and shows the whole set on one with it. One more job, in
//! `evaluation/demo/` and not in `jobs/`, fails on purpose (a fix that
//! special-cases the visible test), so a newcomer sees a failure and its
//! analysis; the demo says so and succeeds when exactly that job failed.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;

use super::args::BatchArgs;
use super::batch::batch;
use super::exit::Completion;
use crate::lifecycle::DataDir;
use crate::log::read_snapshot;
use crate::manifest::{expand_jobs, load_checked};
use crate::protocol::FailureKind;
use crate::state::JobState;

/// Where the bundled jobs fetch their crates from.
const REGISTRY: &str = "index.crates.io:443";
/// How long the registry may take to answer the probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(4);

/// Where the bundled jobs that fail on purpose are, in the unpacked tree.
const ON_PURPOSE: &str = "evaluation/demo";
/// How each of them fails.
const ON_PURPOSE_KIND: FailureKind = FailureKind::TestsFailed;

/// The bundled jobs and what they point to, embedded at build time.
mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
}

/// Writes the embedded jobs, fixtures, hidden tests and scripts under `dir`
/// and returns its `jobs/`.
fn unpack_bundled(dir: &Path) -> anyhow::Result<PathBuf> {
    for (rel, bytes) in bundled::BUNDLED {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("failed to create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes)
            .with_context(|| format!("failed to write {}", path.display()))?;
    }
    Ok(dir.join("jobs"))
}

pub(super) fn demo(
    jobs: Option<PathBuf>,
    parallel: Option<u32>,
    keep: bool,
) -> anyhow::Result<Completion> {
    // One scratch dir holds the unpacked jobs, the data dir and the
    // sandbox's skeleton; it goes away at the end unless --keep.
    let scratch = tempfile::Builder::new()
        .prefix("agent-runtime-demo-")
        .tempdir()
        .context("failed to create a scratch directory")?;
    crate::sandbox::set_skeleton_base(scratch.path());
    let (jobs, on_purpose) = match jobs {
        Some(dir) => (dir, Vec::new()),
        None => {
            let jobs = unpack_bundled(scratch.path())?;
            let failing = expand_jobs(&[scratch.path().join(ON_PURPOSE)])?;
            (jobs, failing)
        }
    };
    if !jobs.is_dir() {
        anyhow::bail!("no jobs directory at {}; pass --jobs DIR", jobs.display());
    }
    let mut files = Vec::new();
    let mut offline: Option<Option<String>> = None;
    let mut failing = Vec::new();
    for file in &on_purpose {
        let manifest = load_checked(file)?;
        super::status::outln_wrapped(&format!(
            "demo: {} fails on purpose: its scripted fix special-cases the visible test, and the hidden tests catch it ({} expected)",
            manifest.id, ON_PURPOSE_KIND
        ))?;
        failing.push(manifest.id);
        files.push(file.clone());
    }
    for file in expand_jobs(std::slice::from_ref(&jobs))? {
        let manifest = load_checked(&file)?;
        if manifest.setup.as_ref().is_some_and(|s| s.network) {
            let why = offline.get_or_insert_with(registry_unreachable);
            if let Some(why) = why {
                super::status::outln_wrapped(&format!(
                    "demo: skipping {}: its [setup] needs the network and {why}",
                    manifest.id
                ))?;
                continue;
            }
        }
        files.push(file);
    }
    let data = scratch.path().join("data");
    super::status::outln_wrapped(&format!(
        "demo: running {} with the scripted provider (no model)",
        crate::words::count(files.len(), "bundled job")
    ))?;
    let result = batch(BatchArgs {
        data: data.clone(),
        jobs: files,
        parallel,
        attempts: None,
        rerun: None,
        replace: false,
        family: None,
        shard: None,
        providers: Vec::new(),
        agents: Vec::new(),
        repeat: 1,
        report: None,
        keep: crate::lifecycle::Keep::Failed,
        max_cost: None,
        strict_integrity: false,
        show_report: keep,
    });
    // The failures meant to happen are the demo working as it should.
    let result = match result {
        Ok(Completion::JobsFailed) if !failing.is_empty() => as_intended(&data, &failing),
        other => other,
    };
    if keep {
        let kept = scratch.keep();
        super::status::outln_wrapped(&format!(
            "demo: kept {}; report: {}",
            kept.display(),
            kept.join("data/report/report.html").display()
        ))?;
    } else {
        let removed = scratch.close();
        if let Err(e) = removed {
            errln!("demo: could not remove its scratch directory: {e}");
        }
        super::status::outln_wrapped(
            "demo: removed its scratch directory (run `agent-runtime demo --keep` to keep the data and the report)",
        )?;
    }
    result
}

/// `Success` when the jobs of `failing` failed as intended and every other
/// job succeeded; else `JobsFailed`, saying which job did not.
fn as_intended(data: &Path, failing: &[String]) -> anyhow::Result<Completion> {
    let snapshot = read_snapshot::<crate::state::State>(&DataDir::new(data).log())?;
    let mut unexpected = Vec::new();
    for job in snapshot.state.jobs() {
        let meant = failing.contains(&job.id);
        let as_meant = if meant {
            job.lifecycle.state == JobState::Failed
                && job.lifecycle.failure_kind == Some(ON_PURPOSE_KIND)
        } else {
            job.lifecycle.state == JobState::Succeeded
        };
        if !as_meant {
            unexpected.push(job.id.as_str());
        }
    }
    if !unexpected.is_empty() {
        errln!(
            "demo: not as expected: {} (only {} should fail)",
            unexpected.join(", "),
            failing.join(", ")
        );
        return Ok(Completion::JobsFailed);
    }
    super::status::outln_wrapped(&format!(
        "demo: {} failed as intended ({ON_PURPOSE_KIND}); every other job succeeded",
        failing.join(", ")
    ))?;
    Ok(Completion::Success)
}

/// Why the registry cannot be reached, or `None` when it answers.
/// `CARGO_NET_OFFLINE=true` in the environment counts as unreachable.
fn registry_unreachable() -> Option<String> {
    if std::env::var("CARGO_NET_OFFLINE").is_ok_and(|v| v == "true") {
        return Some("CARGO_NET_OFFLINE=true says there is no network".into());
    }
    // Name resolution has no timeout of its own: probe on a thread.
    let (send, receive) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("registry-probe".into())
        .spawn(move || {
            let result = REGISTRY
                .to_socket_addrs()
                .map_err(|e| e.to_string())
                .and_then(|mut addrs| addrs.next().ok_or_else(|| "no address".to_string()))
                .and_then(|addr| {
                    TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).map_err(|e| e.to_string())
                });
            let _ = send.send(result.map(|_| ()));
        });
    if let Err(e) = spawned {
        return Some(format!("the registry could not be probed ({e})"));
    }
    match receive.recv_timeout(PROBE_TIMEOUT) {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("the registry ({REGISTRY}) is unreachable: {e}")),
        Err(_) => Some(format!("the registry ({REGISTRY}) did not answer in time")),
    }
}
