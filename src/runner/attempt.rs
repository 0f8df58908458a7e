//! One attempt of a manifest job, phase by phase: baseline (once per job),
//! agent, patch, acceptance, finish. The attempt's phase in the log says
//! which phase is next, so phases already recorded are never run again and
//! a resumed attempt goes straight to what is left.

use std::fs;
use std::path::Path;
use std::time::Instant;

use super::cache_use::{CacheUse, harvest};
use super::carried::Carried;
use super::check_verdict::acceptance_of;
use super::checks::{CheckError, CheckRun, CheckSpec, run_check};
use super::error::RunError;
use super::excerpts::save_excerpts;
use super::harness_output::save_harness_output;
use super::patch::{PatchError, PatchInputs, diff_deadline, take_patch};
use super::setup::{SetupError, run_setup};
use super::tamper::{canary_files, patch_integrity, settle_attempt, twin_request};
use crate::agent::command_event;
use crate::cache::{JobCache, cache_key};
use crate::cancel::CancelToken;
use crate::lifecycle::{Claim, Keep, Store, watch_for_cancel};
use crate::manifest::{Manifest, ProviderConfig, Setup};
use crate::protocol::{CheckResult, CommandFor, Event, FailureKind, Outcome};
use crate::protocol::{PatchRecord, PatchRejectedRecord, SetupRecord};
use crate::state::{Job, Phase};

/// Choices made by whoever runs the job.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunOptions {
    /// Replaces the manifest's `[provider]` (`--provider FILE`): name and config.
    pub provider: Option<(String, ProviderConfig)>,
    /// Set on Ctrl-C: the attempt stops and is recorded interrupted (not
    /// finished), so a rerun continues it.
    pub interrupt: Option<CancelToken>,
    /// Whose workspaces and build dirs stay once an attempt ends.
    pub keep: Keep,
    /// The batch's spending cap (`--max-cost`), shared by its workers.
    pub budget: Option<std::sync::Arc<crate::agent::Budget>>,
    /// Workers of the batch this attempt runs in (0 or 1: alone): the
    /// tests of a check share the cores with them.
    pub workers: usize,
    /// Any tamper signal fails the attempt as `tampered`
    /// (`--strict-integrity`; `[acceptance] strict_integrity` too).
    pub strict_integrity: bool,
    /// Run the baseline's commands even when the data dir holds a
    /// baseline with the same key (`check`, which shows that baselines
    /// fail stably).
    pub fresh_baseline: bool,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttemptReport {
    pub job: String,
    pub attempt: u32,
    pub outcome: Outcome,
    pub failure_kind: Option<FailureKind>,
    /// Stopped by an interrupt and recorded as such; the job is queued again.
    pub interrupted: bool,
    /// Stopped by a fault of the infrastructure and recorded as such: the
    /// job is queued again (or, past `max_restarts`, failed `infra_error`).
    pub restarted: bool,
}

/// The manifest a job was enqueued with.
pub(crate) fn job_manifest(job: &Job) -> Result<Manifest, RunError> {
    let snapshot = job
        .manifest
        .as_ref()
        .ok_or_else(|| RunError::NoManifest(job.id.clone()))?;
    Manifest::from_snapshot(snapshot).map_err(|source| RunError::Manifest {
        job: job.id.clone(),
        source,
    })
}

/// Claims the next attempt of a queued manifest job and runs it to its end.
pub(crate) fn run_job(
    store: &mut Store,
    id: &str,
    options: &RunOptions,
) -> Result<AttemptReport, RunError> {
    let job = store
        .state()
        .job(id)
        .ok_or_else(|| RunError::UnknownJob(id.to_string()))?;
    let manifest = job_manifest(job)?;
    let claim = store.claim(id)?;
    // Ctrl-C (the interrupt) cancels the attempt; so does a cancel in the log.
    let cancel = options
        .interrupt
        .as_ref()
        .map_or_else(CancelToken::new, CancelToken::child);
    let stop = CancelToken::new();
    let watcher = watch_for_cancel(
        store.follower(&claim)?,
        id.to_string(),
        cancel.clone(),
        stop.clone(),
    )
    .map_err(|e| RunError::Setup {
        job: id.to_string(),
        message: format!("cannot start the cancel watcher: {e}"),
    })?;
    let result = Phases {
        store: &mut *store,
        claim: &claim,
        manifest: &manifest,
        cancel: &cancel,
        options,
    }
    .run();
    stop.cancel();
    let _ = watcher.join();
    let attempt = claim.attempt;
    let interrupted = options
        .interrupt
        .as_ref()
        .is_some_and(CancelToken::is_cancelled);
    let cancelled_in_log = store
        .state()
        .job(id)
        .is_some_and(|j| j.lifecycle.state == crate::state::JobState::Cancelled);
    if interrupted && !cancelled_in_log {
        store.interrupt(claim)?;
        return Ok(AttemptReport {
            job: id.to_string(),
            attempt,
            outcome: Outcome::Failed,
            failure_kind: Some(FailureKind::Interrupted),
            interrupted: true,
            restarted: false,
        });
    }
    let (outcome, failure_kind) = match result {
        Ok(ending) => ending,
        // Faults of the infrastructure never use an attempt: the job goes
        // back to the queue, bounded by max_restarts.
        Err(RunError::Infra { cause, .. }) => return restart(store, claim, id, &cause),
        Err(e @ RunError::Setup { .. }) => return restart(store, claim, id, &e.to_string()),
        Err(e) => return Err(e),
    };
    // The attempt's integrity record (what its phases recorded), settled.
    let strict = options.strict_integrity;
    let (outcome, failure_kind, integrity) = settle_attempt(
        store.state().job(id),
        &manifest,
        strict,
        (outcome, failure_kind),
    );
    store.finish_with(claim, outcome, failure_kind, Some(integrity))?;
    // The attempt is over: its workspace and check copies go by policy
    // (artifacts under runs/ stay). Failing to remove them is not the
    // attempt's failure; the next `gc` tries again.
    let _ = crate::lifecycle::keep_apply(store.dir(), id, attempt, outcome, options.keep);
    Ok(AttemptReport {
        job: id.to_string(),
        attempt,
        outcome,
        failure_kind,
        interrupted: false,
        restarted: false,
    })
}

/// Records a fault of the infrastructure for `claim` and reports it.
fn restart(
    store: &mut Store,
    claim: Claim,
    id: &str,
    cause: &str,
) -> Result<AttemptReport, RunError> {
    let attempt = claim.attempt;
    store.infra_fault(claim, cause)?;
    let failed = store
        .state()
        .job(id)
        .is_some_and(|j| j.lifecycle.state == crate::state::JobState::Failed);
    Ok(AttemptReport {
        job: id.to_string(),
        attempt,
        outcome: Outcome::Failed,
        failure_kind: Some(if failed {
            FailureKind::InfraError
        } else {
            FailureKind::Interrupted
        }),
        interrupted: false,
        restarted: true,
    })
}

pub(super) struct Phases<'a> {
    pub(super) store: &'a mut Store,
    pub(super) claim: &'a Claim,
    pub(super) manifest: &'a Manifest,
    pub(super) cancel: &'a CancelToken,
    pub(super) options: &'a RunOptions,
}

/// How an attempt ends: its outcome and, unless it succeeded, why.
pub(super) type Ending = (Outcome, Option<FailureKind>);

pub(super) fn fail(kind: FailureKind) -> Ending {
    (Outcome::Failed, Some(kind))
}

/// What a phase leaves: the next phase goes on (with what this one
/// produced), or the attempt ends here.
#[derive(Debug)]
pub(super) enum Step<T = ()> {
    Next(T),
    End(Ending),
}

impl Phases<'_> {
    fn job(&self) -> Result<&Job, RunError> {
        self.store
            .state()
            .job(&self.claim.job)
            .ok_or_else(|| RunError::UnknownJob(self.claim.job.clone()))
    }

    /// Where the claimed attempt is, as the log says: what runs next.
    fn phase(&self) -> Result<Phase, RunError> {
        self.job()?
            .attempt_numbered(self.claim.attempt)
            .map(|a| a.phase.clone())
            .ok_or_else(|| RunError::UnknownJob(self.claim.job.clone()))
    }

    /// The baseline's verdict, once recorded.
    fn baseline(&self) -> Result<Option<CheckResult>, RunError> {
        Ok(self.job()?.baseline.as_ref().map(|b| b.result))
    }

    /// The baseline's test inventory, if it recorded one.
    fn inventory(&self) -> Result<Option<crate::protocol::Inventory>, RunError> {
        Ok(self
            .job()?
            .baseline
            .as_ref()
            .and_then(|b| b.inventory.clone()))
    }

    pub(super) fn record(&mut self, event: Event) -> Result<(), RunError> {
        self.store
            .append(Some(&self.claim.job), Some(self.claim.attempt), event)?;
        Ok(())
    }

    pub(super) fn setup_error(&self, message: impl std::fmt::Display) -> RunError {
        RunError::Setup {
            job: self.claim.job.clone(),
            message: message.to_string(),
        }
    }

    fn run(mut self) -> Result<Ending, RunError> {
        // Every command of the attempt starts from one zygote, ended with it.
        let _zygote = super::attempt_zygote::AttemptZygote::enter();
        let (id, n) = (self.claim.job.clone(), self.claim.attempt);
        let dirs = self.store.dir().clone();
        let runs = dirs.runs(&id, n);
        fs::create_dir_all(&runs)
            .map_err(|e| self.setup_error(format!("cannot create {}: {e}", runs.display())))?;

        // Setup: once per job cache, shared by attempts, repeats and
        // providers; every attempt records whether it ran or was reused.
        let key = cache_key(self.manifest);
        let cache = JobCache::new(&dirs.cache(), &key);
        if let Some(setup) = self.manifest.setup.clone()
            && let Step::End(ending) = self.setup_phase(&setup, &cache, &runs)?
        {
            return Ok(ending);
        }

        // Baseline: once per job, before any model call; once per task
        // in the data dir (reused by key, see `baseline.rs`).
        if let Some(acceptance) = self.manifest.acceptance.clone() {
            if self.baseline()?.is_none()
                && let Step::End(ending) = self.baseline_phase(&acceptance, &runs, &cache, &key)?
            {
                return Ok(ending);
            }
            match self.baseline()? {
                Some(CheckResult::Passed) => return Ok(fail(FailureKind::InvalidBaseline)),
                Some(CheckResult::Error) => return Ok(fail(FailureKind::HarnessError)),
                _ => {}
            }
        }

        // Then whatever the attempt has not recorded yet, in order.
        let agent_started = Instant::now();
        let workspace_dir = dirs.work(&id, n);
        loop {
            match self.phase()? {
                Phase::Agent => {
                    let ending = self.agent_phase(&workspace_dir, &runs, &cache)?;
                    if self.phase()? == Phase::Agent {
                        // Stopped by Ctrl-C before the agent finished:
                        // nothing recorded, the attempt is redone.
                        return Ok(ending);
                    }
                }
                Phase::Patch { agent } if agent.outcome == Outcome::Failed => {
                    return Ok((agent.outcome, agent.failure_kind));
                }
                Phase::Patch { .. } => {
                    if let Step::End(ending) =
                        self.patch_phase(&workspace_dir, &runs, agent_started)?
                    {
                        return Ok(ending);
                    }
                }
                Phase::Acceptance => {
                    let Some(acceptance) = self.manifest.acceptance.clone() else {
                        return Ok((Outcome::Succeeded, None));
                    };
                    if let Step::End(ending) = self.acceptance_phase(&acceptance, &runs, &cache)? {
                        return Ok(ending);
                    }
                }
                Phase::Judged { result, verdict } => {
                    return Ok(match (result, verdict) {
                        (CheckResult::Passed | CheckResult::Skipped, _) => {
                            (Outcome::Succeeded, None)
                        }
                        (_, Some(verdict)) if !verdict.missing.is_empty() => {
                            fail(FailureKind::TestsMissing)
                        }
                        (_, Some(_)) => fail(FailureKind::TestsFailed),
                        (_, None) => fail(FailureKind::AcceptanceFailed),
                    });
                }
                Phase::Rejected => return Ok(fail(FailureKind::PatchRejected)),
            }
        }
    }

    /// The patch phase: what changed among the editable files, saved as
    /// the runner's copy and `patch.diff` (`patch`), or what it holds that
    /// a patch cannot carry (`patch_rejected`, the attempt's verdict). The
    /// workspace stays until then; an I/O error of the runtime stays an
    /// error.
    fn patch_phase(
        &mut self,
        workspace_dir: &Path,
        runs: &Path,
        agent_started: Instant,
    ) -> Result<Step, RunError> {
        let editable =
            crate::agent::editable_set(&self.manifest.editable).map_err(|e| self.setup_error(e))?;
        let inputs = PatchInputs {
            source: &self.manifest.source,
            workspace: workspace_dir,
            editable: &editable,
            named: &self.manifest.editable,
            acceptance: self.manifest.acceptance.as_ref().map(|a| a.dir.as_path()),
            runs,
            deadline: diff_deadline(agent_started + self.manifest.limits.wall_time),
        };
        let saved = match take_patch(&inputs) {
            Ok(saved) => saved,
            Err(PatchError::Rejected(rejection)) => {
                self.record(Event::PatchRejected(PatchRejectedRecord {
                    reason: rejection.to_string(),
                }))?;
                return Ok(Step::End(fail(FailureKind::PatchRejected)));
            }
            Err(e) => return Err(self.setup_error(e)),
        };
        let integrity = patch_integrity(self.manifest, runs, &saved.files_hash);
        self.record(Event::Patch(PatchRecord {
            bytes: saved.diff_bytes,
            files: u32::try_from(saved.files.len()).unwrap_or(u32::MAX),
            hash: saved.diff_hash,
            files_hash: Some(saved.files_hash),
            partial: saved.partial,
            integrity,
        }))?;
        Ok(Step::Next(()))
    }

    /// Acceptance: on a clean copy plus the runner's copy of the changed
    /// files (the one the patch event names), never the workspace.
    /// Records `acceptance`, or returns the attempt's verdict.
    fn acceptance_phase(
        &mut self,
        acceptance: &crate::manifest::Acceptance,
        runs: &Path,
        cache: &JobCache,
    ) -> Result<Step, RunError> {
        let files_hash = self
            .job()?
            .attempt_numbered(self.claim.attempt)
            .and_then(|a| a.patch.as_ref())
            .and_then(|p| p.files_hash.clone());
        let carried =
            Carried::load(runs, files_hash.as_deref()).map_err(|e| self.setup_error(e))?;
        let run = match self.check(
            acceptance,
            Some(&carried),
            runs,
            CommandFor::Acceptance,
            cache,
        )? {
            Step::Next(run) => run,
            Step::End(ending) => return Ok(Step::End(ending)),
        };
        let lang = crate::lang::for_acceptance(acceptance);
        let facts = acceptance_of(&run, self.inventory()?.as_ref(), lang);
        // The excerpts go first: an acceptance recorded always has them.
        if let Some(verdict) = facts.verdict.as_ref().filter(|v| !v.passed()) {
            save_excerpts(runs, &run, verdict, lang).map_err(|e| self.setup_error(e))?;
        }
        if let Some(harness) = &facts.harness {
            save_harness_output(runs, &harness.excerpt).map_err(|e| self.setup_error(e))?;
        }
        self.record(facts.into_event())?;
        Ok(Step::Next(()))
    }

    /// The setup phase: reuses the job cache when an earlier run filled it,
    /// else runs the `[setup]` commands (holding the cache's lock, so
    /// concurrent instances of the job wait and reuse). Records `setup`;
    /// a failure is the attempt's verdict (`setup_failed`).
    fn setup_phase(
        &mut self,
        setup: &Setup,
        cache: &JobCache,
        runs: &Path,
    ) -> Result<Step, RunError> {
        let _lock = cache.lock().map_err(|e| self.setup_error(e))?;
        if cache.setup_marker().is_some() {
            self.record(Event::Setup(SetupRecord {
                result: CheckResult::Passed,
                duration_ms: 0,
                reused: true,
                cause: None,
                cache: Some(cache.key().to_string()),
            }))?;
            return Ok(Step::Next(()));
        }
        let dirs = self.store.dir().clone();
        let dir = dirs.check_dir(&self.claim.job, self.claim.attempt, "setup");
        let run = match run_setup(
            self.manifest,
            setup,
            cache,
            &dir,
            &runs.join("setup.log"),
            vec![dirs.canonical_root()],
            self.cancel,
        ) {
            Ok(run) => run,
            Err(SetupError::Sandbox(_)) => {
                return Ok(Step::End(fail(FailureKind::SandboxUnavailable)));
            }
            Err(e) => return Err(self.setup_error(format!("setup: {e}"))),
        };
        for outcome in &run.commands {
            self.record(command_event(0, CommandFor::Setup, outcome))?;
        }
        if run.cancelled() {
            return Ok(Step::End(fail(FailureKind::Cancelled)));
        }
        let duration_ms = u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX);
        if let Some(cause) = run.failure {
            self.record(Event::Setup(SetupRecord {
                result: CheckResult::Failed,
                duration_ms,
                reused: false,
                cause: Some(cause),
                cache: Some(cache.key().to_string()),
            }))?;
            return Ok(Step::End(fail(FailureKind::SetupFailed)));
        }
        cache
            .mark_setup(&crate::cache::SetupMarker { duration_ms })
            .map_err(|e| self.setup_error(e))?;
        self.record(Event::Setup(SetupRecord {
            result: CheckResult::Passed,
            duration_ms,
            reused: false,
            cause: None,
            cache: Some(cache.key().to_string()),
        }))?;
        Ok(Step::Next(()))
    }

    /// Runs the `role` check (`baseline` or `acceptance`) in its clean copy,
    /// logging to `runs/<role>.log`; its result, or the attempt's verdict.
    /// A baseline (the job author's code only) that built dependencies
    /// gives the job its dependency layer, if it has none yet.
    pub(super) fn check(
        &mut self,
        acceptance: &crate::manifest::Acceptance,
        patch: Option<&Carried>,
        runs: &Path,
        check: CommandFor,
        cache: &JobCache,
    ) -> Result<Step<CheckRun>, RunError> {
        let role = check.as_str();
        let dirs = self.store.dir();
        let dir = dirs.check_dir(&self.claim.job, self.claim.attempt, role);
        let log = runs.join(format!("{role}.log"));
        let bin_dir = runs.join(format!("{role}-tests"));
        let job = self.job()?;
        let lang = crate::lang::for_acceptance(acceptance);
        let canaries = canary_files(acceptance, lang, check, job);
        let twins = twin_request(acceptance, lang, check, job);
        let inventory = self
            .inventory()?
            .filter(|_| check == CommandFor::Acceptance);
        let spec = CheckSpec {
            manifest: self.manifest,
            acceptance,
            dir: &dir,
            patch,
            log: &log,
            bin_dir: &bin_dir,
            data_root: &dirs.canonical_root(),
            cache: &CacheUse::of(self.manifest, cache),
            inventory: inventory.as_ref(),
            parallel: super::per_test::test_parallelism(self.options.workers),
            canaries: canaries.as_deref(),
            twins: twins.as_ref(),
        };
        match run_check(&spec, self.cancel) {
            Ok(run) => {
                if check == CommandFor::Baseline && !run.dependency_hashes.is_empty() {
                    harvest(cache, &dir, &run);
                }
                for command in &run.commands {
                    self.record(command.event(check))?;
                }
                if run.cancelled() {
                    return Ok(Step::End(fail(FailureKind::Cancelled)));
                }
                Ok(Step::Next(run))
            }
            Err(CheckError::Exec(crate::exec::ExecError::SandboxUnavailable { .. })) => {
                Ok(Step::End(fail(FailureKind::SandboxUnavailable)))
            }
            // What the patch holds, not the runtime, kept the clean copy from
            // being built: the model's failure. The acceptance files were
            // laid on the pristine source at the baseline, so a content
            // refusal laying them on the patched copy is the patch's too.
            Err(CheckError::Patch(PatchError::Rejected(rejection))) => {
                self.reject_patch(rejection.to_string())
            }
            Err(CheckError::Copy { from, source, .. })
                if check == CommandFor::Acceptance
                    && from == acceptance.dir
                    && source.error.is_content() =>
            {
                self.reject_patch(format!(
                    "the acceptance files cannot be laid on the patched copy: {source}"
                ))
            }
            Err(e) => Err(self.setup_error(format!("{role}: {e}"))),
        }
    }

    /// Records that the patch cannot be carried onto the clean copy.
    fn reject_patch(&mut self, reason: String) -> Result<Step<CheckRun>, RunError> {
        self.record(Event::PatchRejected(PatchRejectedRecord { reason }))?;
        Ok(Step::End(fail(FailureKind::PatchRejected)))
    }
}
