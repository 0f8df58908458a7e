//! Running a check: every task's baseline and oracle, `runs` times each,
//! as jobs of an ordinary batch in the check's own data dir (same sandbox,
//! limits and phases as a real run; resumable like any batch), then the
//! judgement of each task from what its runs recorded.

use std::path::Path;

use serde::Serialize;

use super::judge::{RunFacts, TaskJudgement, judge_task, with_leaks};
use super::leaks::find_leaks;
use super::oracle::{OracleError, oracle_script};
use crate::batch::{BatchError, BatchOptions, PlanOptions, plan, run_batch};
use crate::lifecycle::{DataDir, Store, StoreError};
use crate::manifest::{Manifest, ProviderConfig, ProviderFile, ScriptConfig};
use crate::protocol::{FailureKind, Waiver};
use crate::state::{Job, JobState};

/// The provider name of a task's check runs (`<job>@oracle#<k>`).
pub(crate) const ORACLE_PROVIDER: &str = "oracle";

/// Why a check could not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    #[error(transparent)]
    Oracle(#[from] OracleError),
    #[error(transparent)]
    Batch(#[from] BatchError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One task's check.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TaskCheck {
    pub job: String,
    pub family: String,
    pub runs: u32,
    pub has_oracle: bool,
    #[serde(flatten)]
    pub judgement: TaskJudgement,
}

/// Checks `manifests` in the data dir `data`, `runs` times each.
pub(crate) fn check_tasks(
    data: &Path,
    manifests: &[Manifest],
    runs: u32,
    batch: &BatchOptions,
    waive: &[Waiver],
) -> Result<Vec<TaskCheck>, CheckError> {
    let runs = runs.max(1);
    let dir = DataDir::new(data);
    let mut instances = Vec::new();
    let mut planned: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, manifest) in manifests.iter().enumerate() {
        let script = oracle_script(manifest, &data.join("oracles"))?;
        let options = PlanOptions {
            providers: vec![ProviderFile {
                name: ORACLE_PROVIDER.into(),
                provider: ProviderConfig::Script(ScriptConfig {
                    script: vec![script],
                    apply_first: super::oracle::oracle_applies_first(manifest),
                    dialect: None,
                }),
                price: None,
                agent: None,
            }],
            agents: Vec::new(),
            // Repeats are numbered even for one run, so raising --runs
            // later adds runs instead of renaming the first.
            repeat: runs,
            attempts: Some(1),
            family: None,
            shard: None,
        };
        let mut jobs = plan(std::slice::from_ref(manifest), &options);
        if runs == 1 {
            for job in &mut jobs {
                job.id.push_str("#1");
                job.repeat = Some(1);
            }
        }
        planned.push((i, jobs.iter().map(|j| j.id.clone()).collect()));
        instances.extend(jobs);
    }
    // Every run's baseline runs its commands: reusing the first would
    // show one baseline `runs` times, not that it fails stably.
    let batch = BatchOptions {
        fresh_baselines: true,
        ..batch.clone()
    };
    run_batch(data, instances, &batch)?;
    let store = Store::open(dir)?;
    let state = store.state();
    Ok(planned
        .into_iter()
        .map(|(i, ids)| {
            let manifest = &manifests[i];
            let facts: Vec<RunFacts> = ids
                .iter()
                .map(|id| state.job(id).map(run_facts).unwrap_or_default())
                .collect();
            let has_oracle = manifest.oracle.is_some();
            let waive: Vec<Waiver> = manifest.waive.iter().chain(waive).copied().collect();
            TaskCheck {
                job: manifest.id.clone(),
                family: manifest.family.clone(),
                runs,
                has_oracle,
                judgement: with_leaks(judge_task(&facts, has_oracle), find_leaks(manifest), &waive),
            }
        })
        .collect())
}

/// What the log says about one run.
fn run_facts(job: &Job) -> RunFacts {
    let baseline = job.baseline.as_ref();
    let inventory = baseline.and_then(|b| b.inventory.as_ref());
    let reason = baseline.and_then(|b| b.reason.clone());
    let judged = job.attempt().and_then(|a| a.phase.judged());
    let machine_fault = matches!(
        job.lifecycle.failure_kind,
        Some(
            FailureKind::InfraError
                | FailureKind::SetupFailed
                | FailureKind::Interrupted
                | FailureKind::Cancelled
        )
    );
    RunFacts {
        finished: matches!(job.lifecycle.state, JobState::Succeeded | JobState::Failed)
            && !machine_fault,
        baseline: baseline.map(|b| b.result),
        inventory: inventory.cloned(),
        baseline_reason: reason.clone(),
        acceptance: judged.map(|(result, _)| result),
        failing: judged.and_then(|(_, verdict)| verdict).map(|v| {
            let mut names = v.failing.clone();
            names.extend(v.missing.iter().cloned());
            names
        }),
        outcome: job.lifecycle.state.into(),
        inventory_note: inventory
            .filter(|inventory| inventory.from.is_some())
            .and(reason),
        canary_note: baseline
            .and_then(|b| b.canary.as_ref())
            .filter(|c| !c.on)
            .and_then(|c| c.reason.clone()),
        signals: job
            .attempt()
            .map(|a| {
                a.integrity
                    .signals
                    .iter()
                    .map(crate::protocol::Signal::line)
                    .collect()
            })
            .unwrap_or_default(),
    }
}
