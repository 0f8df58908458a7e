//! `enqueue --job`, `run` and `replay`: manifest jobs.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::exit::Completion;
use crate::lifecycle::{DataDir, EnqueueResult, NewJob, Store};
use crate::log::Outcome;
use crate::manifest::{expand_jobs, load_checked, load_provider_file};
use crate::runner::{RunOptions, SeedEnv, run_job};

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
        outln!("{word} id={}", m.id);
    }
    Ok(Completion::Success)
}

/// Seed form: the bare task `id` gets a manifest built from the AGENT_*
/// variables (recorded in the log), working on a copy of `workspace`.
fn prepare_seed(store: &mut Store, id: &str, workspace: &Path) -> anyhow::Result<PathBuf> {
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("workspace {} does not exist", workspace.display()))?;
    let job = store
        .state()
        .job(id)
        .cloned()
        .with_context(|| format!("no job with id {id:?}"))?;
    if job.manifest.is_some() {
        // Already turned into a manifest job (an earlier run was interrupted).
        return Ok(workspace);
    }
    let seed = SeedEnv::read(|k| std::env::var(k).ok())?;
    let manifest = seed.manifest(id, &workspace, job.max_attempts)?;
    store.restart(NewJob {
        id: id.to_string(),
        family: id.to_string(),
        max_attempts: job.max_attempts,
        snapshot: manifest.to_snapshot(),
        hash: manifest.hash(),
        base_job: None,
        provider: None,
        repeat: None,
    })?;
    Ok(workspace)
}

pub fn run(
    data: &Path,
    id: &str,
    workspace: Option<&Path>,
    provider: Option<&Path>,
    keep: crate::lifecycle::Keep,
) -> anyhow::Result<Completion> {
    crate::lifecycle::validate_instance_id(id)?;
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
    let mut store = Store::open(dir)?;
    // The provider this run will use must work before anything runs.
    let config = match &options.provider {
        Some((name, config)) => Some((name.clone(), config.clone())),
        None => store
            .state()
            .job(id)
            .and_then(|job| crate::runner::job_manifest(job).ok())
            .and_then(|m| m.provider.map(|p| (p.kind().as_str().to_string(), p))),
    };
    if let Some((name, config)) = config {
        crate::provider::preflight(&config, &name)?;
    }
    let seed_workspace = match workspace {
        Some(workspace) => Some(prepare_seed(&mut store, id, workspace)?),
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
            .and_then(|job| job.patch_files_hash.clone());
        let all = crate::agent::editable_set(&["**".to_string()])?;
        let applied = crate::runner::Carried::load(&runs, files_hash.as_deref())
            .and_then(|carried| carried.apply(workspace, &all))
            .with_context(|| format!("failed to apply the patch to {}", workspace.display()))?;
        outln!(
            "applied the patch to {} ({} file(s))",
            workspace.display(),
            applied.written.len() + applied.deleted.len()
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
                eprintln!("cause: {cause}");
            }
            Ok(Completion::JobsFailed)
        }
    }
}

/// `gc DATA [--keep]`: removes the workspaces and build dirs of finished
/// attempts the policy does not keep.
pub fn gc(data: &Path, keep: crate::lifecycle::Keep) -> anyhow::Result<Completion> {
    let dir = DataDir::new(data);
    if !dir.log().is_file() {
        anyhow::bail!("no log at {}", dir.log().display());
    }
    let snapshot = crate::log::read_snapshot(&dir.log())?;
    let (attempts, freed) = crate::lifecycle::collect_garbage(&dir, &snapshot.state, keep)
        .with_context(|| format!("failed to clean {}", data.display()))?;
    outln!(
        "removed the directories of {attempts} attempt(s), {:.1} MiB freed",
        freed as f64 / (1024.0 * 1024.0)
    );
    Ok(Completion::Success)
}

/// `replay`: writes the replay job and says how to run it.
pub fn replay(
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
