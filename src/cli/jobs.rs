//! `enqueue --job`, `run` and `replay`: manifest jobs.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::exit::Completion;
use crate::lifecycle::{DataDir, EnqueueResult, NewJob, Store};
use crate::manifest::{expand_jobs, load_provider_file};
use crate::protocol::Outcome;
use crate::runner::{RunOptions, SeedEnv, run_job};

pub(super) fn enqueue_jobs(
    data: &Path,
    jobs: &[PathBuf],
    replace: bool,
) -> anyhow::Result<Completion> {
    let files = expand_jobs(jobs)?;
    // Load everything first: one bad manifest (or two with one id) means
    // nothing is enqueued.
    let manifests = super::validate::load_all(&files)?;
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
        outln!("{word} id={}", m.id);
    }
    Ok(Completion::Success)
}

/// Seed form: the bare task `id` gets a manifest built from the AGENT_*
/// variables, working on a copy of `workspace`; `None` when the job has a
/// manifest already (an earlier run was interrupted). Checks `AGY_BIN`
/// unless another provider is given. Writes nothing.
fn seed_job(
    job: &crate::state::Job,
    workspace: &Path,
    other_provider: bool,
) -> anyhow::Result<(PathBuf, Option<NewJob>)> {
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("workspace {} does not exist", workspace.display()))?;
    if job.manifest.is_some() {
        return Ok((workspace, None));
    }
    let seed = SeedEnv::read(|k| std::env::var(k).ok())?;
    if !other_provider {
        seed.check_agy()?;
    }
    let manifest = seed.manifest(&job.id, &workspace, job.lifecycle.max_attempts)?;
    let new = NewJob {
        id: job.id.clone(),
        family: job.id.clone(),
        max_attempts: job.lifecycle.max_attempts,
        snapshot: manifest.to_snapshot(),
        hash: manifest.hash(),
        base_job: None,
        provider: None,
        repeat: None,
    };
    Ok((workspace, Some(new)))
}

pub(super) fn run(
    data: &Path,
    id: &str,
    workspace: Option<&Path>,
    provider: Option<&Path>,
    keep: crate::lifecycle::Keep,
) -> anyhow::Result<Completion> {
    crate::protocol::validate_instance_id(id)?;
    let dir = DataDir::new(data);
    if !dir.log().is_file() {
        anyhow::bail!("no log at {}", dir.log().display());
    }
    let mut options = RunOptions {
        keep,
        ..RunOptions::default()
    };
    if let Some(file) = provider {
        let file = load_provider_file(file)?;
        options.provider = Some((file.name, file.provider));
    }
    // Everything that could refuse the run is checked on a read-only
    // replay, before anything is written.
    let snapshot = crate::log::read_snapshot::<crate::state::State>(&dir.log())?;
    let job = snapshot
        .state
        .job(id)
        .with_context(|| format!("no job with id {id:?}"))?;
    let seed = match workspace {
        Some(workspace) => Some(seed_job(job, workspace, options.provider.is_some())?),
        None => None,
    };
    // The provider this run will use must work before anything runs.
    let config = match &options.provider {
        Some((name, config)) => Some((name.clone(), config.clone())),
        None => match seed.as_ref().and_then(|(_, new)| new.as_ref()) {
            Some(new) => crate::manifest::Manifest::from_snapshot(&new.snapshot)
                .ok()
                .and_then(|m| m.provider)
                .map(|p| (p.kind().as_str().to_string(), p)),
            None => {
                let manifest = crate::runner::job_manifest(job).ok();
                if manifest.as_ref().is_some_and(|m| m.provider.is_none()) {
                    anyhow::bail!(
                        "job {id:?} has no [provider] in its manifest; give one with --provider FILE"
                    );
                }
                manifest.and_then(|m| m.provider.map(|p| (p.kind().as_str().to_string(), p)))
            }
        },
    };
    if let Some((name, config)) = config {
        crate::provider::preflight(&config, &name)?;
    }
    drop(snapshot);
    let mut store = Store::open(dir)?;
    let seed_workspace = match seed {
        Some((workspace, new)) => {
            if let Some(new) = new {
                store.restart(new)?;
            }
            Some(workspace)
        }
        None => None,
    };
    let report =
        run_job(&mut store, id, &options).with_context(|| format!("failed to run job {id:?}"))?;
    if let (Some(workspace), Outcome::Succeeded) = (&seed_workspace, report.outcome) {
        // The runner's copy of the changed files, checked against the
        // hash its patch event recorded.
        let runs = store.dir().runs(id, report.attempt);
        let files_hash = store
            .state()
            .job(id)
            .and_then(|job| job.attempt_numbered(report.attempt))
            .and_then(|attempt| attempt.patch.as_ref())
            .and_then(|patch| patch.files_hash.clone());
        let all = crate::agent::editable_set(&["**".to_string()])?;
        let applied = crate::runner::Carried::load(&runs, files_hash.as_deref())
            .and_then(|carried| carried.apply(workspace, &all))
            .with_context(|| format!("failed to apply the patch to {}", workspace.display()))?;
        outln!(
            "applied the patch to {} ({})",
            workspace.display(),
            crate::words::count(applied.written.len() + applied.deleted.len(), "file")
        );
    }
    match report.outcome {
        Outcome::Succeeded => {
            outln!(
                "job={} attempt={} outcome=succeeded",
                report.job,
                report.attempt
            );
            Ok(Completion::Success)
        }
        Outcome::Failed => {
            let kind = report.failure_kind.map_or("-", |k| k.as_str());
            outln!(
                "job={} attempt={} outcome=failed failure_kind={kind}",
                report.job,
                report.attempt
            );
            // The cause, as the reports show it: the store's state holds
            // everything this run appended.
            if let Some(cause) = store.state().job(id).and_then(|j| j.failure_cause()) {
                errln!("cause: {cause}");
            }
            Ok(Completion::JobsFailed)
        }
    }
}

/// `gc DATA [--keep]`: removes the workspaces and build dirs of finished
/// attempts the policy does not keep.
pub(super) fn gc(data: &Path, keep: crate::lifecycle::Keep) -> anyhow::Result<Completion> {
    let dir = DataDir::new(data);
    if !dir.log().is_file() {
        anyhow::bail!("no log at {}", dir.log().display());
    }
    let snapshot = crate::log::read_snapshot::<crate::state::State>(&dir.log())?;
    let (attempts, freed) = crate::lifecycle::collect_garbage(&dir, &snapshot.state, keep)
        .with_context(|| format!("failed to clean {}", data.display()))?;
    outln!(
        "removed the directories of {}, {:.1} MiB freed",
        crate::words::count(attempts, "attempt"),
        freed as f64 / (1024.0 * 1024.0)
    );
    let caches = crate::lifecycle::collect_caches(&dir, &snapshot.state)
        .with_context(|| format!("failed to clean the caches of {}", data.display()))?;
    outln!(
        "removed {} no job refers to, {:.1} MiB freed",
        crate::words::count(caches.caches, "cache"),
        caches.bytes as f64 / (1024.0 * 1024.0)
    );
    Ok(Completion::Success)
}

/// `replay`: writes the replay job and says how to run it.
pub(super) fn replay(
    data: &Path,
    instance: &str,
    attempt: Option<u32>,
    out: &Path,
) -> anyhow::Result<Completion> {
    let written = crate::replay::write_replay(data, instance, attempt, out)?;
    outln!(
        "wrote {} ({} replies of attempt {} of {instance}); run it with: agent-runtime batch DATA {}",
        written.manifest.display(),
        written.replies,
        written.attempt,
        written.manifest.display()
    );
    Ok(Completion::Success)
}
