//! `enqueue --job` and `run`: manifest jobs.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::exit::Completion;
use crate::lifecycle::{DataDir, EnqueueResult, NewJob, Store};
use crate::log::Outcome;
use crate::manifest::{expand_jobs, load_checked, load_provider_file};
use crate::runner::{RunOptions, run_job};

pub fn enqueue_jobs(data: &Path, jobs: &[PathBuf], replace: bool) -> anyhow::Result<Completion> {
    let files = expand_jobs(jobs)?;
    // Load everything first: one bad manifest means nothing is enqueued.
    let manifests = files
        .iter()
        .map(|f| load_checked(f))
        .collect::<Result<Vec<_>, _>>()?;
    let mut store = Store::open(DataDir::new(data))?;
    for m in &manifests {
        let new = NewJob {
            id: m.id.clone(),
            family: m.family.clone(),
            max_attempts: m.limits.attempts,
            snapshot: m.to_snapshot(),
            hash: m.hash(),
            base_job: None,
            provider: None,
            repeat: None,
        };
        let result = store.enqueue_manifest(new, replace)?;
        let word = match result {
            EnqueueResult::Created => "enqueued=true",
            EnqueueResult::Unchanged => "enqueued=false",
            EnqueueResult::Replaced => "enqueued=true replaced=true",
        };
        println!("{word} id={}", m.id);
    }
    Ok(Completion::Success)
}

pub fn run(
    data: &Path,
    id: &str,
    workspace: Option<&Path>,
    provider: Option<&Path>,
) -> anyhow::Result<Completion> {
    crate::lifecycle::validate_instance_id(id)?;
    if workspace.is_some() {
        anyhow::bail!(
            "the seed form `run DATA ID WORKSPACE` needs the command (AGY) provider, which this build does not have yet; enqueue a manifest with `enqueue DATA --job FILE` and `run DATA ID` instead"
        );
    }
    let dir = DataDir::new(data);
    if !dir.log().is_file() {
        anyhow::bail!("no log at {}", dir.log().display());
    }
    let mut options = RunOptions::default();
    if let Some(file) = provider {
        let file = load_provider_file(file)?;
        options.provider = Some((file.name, file.provider));
    }
    let mut store = Store::open(dir)?;
    let report =
        run_job(&mut store, id, &options).with_context(|| format!("failed to run job {id:?}"))?;
    match report.outcome {
        Outcome::Succeeded => {
            println!(
                "job={} attempt={} outcome=succeeded",
                report.job, report.attempt
            );
            Ok(Completion::Success)
        }
        Outcome::Failed => {
            let kind = report.failure_kind.map_or("-", |k| k.as_str());
            println!(
                "job={} attempt={} outcome=failed failure_kind={kind}",
                report.job, report.attempt
            );
            Ok(Completion::JobsFailed)
        }
    }
}
