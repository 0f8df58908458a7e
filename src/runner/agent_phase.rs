//! The agent phase of an attempt: a fresh workspace, the provider, the
//! loop under the attempt's deadline, and what it leaves (transcript,
//! `agent_finished`).

use std::fs;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Instant;

use super::agent_external::{External, ExternalError, run_external};
use super::attempt::{Ending, Phases, fail};
use super::cache_use::CacheUse;
use super::commands::{AttemptCommands, policy_for};
use super::error::RunError;
use super::recorder::StoreRecorder;
use super::tamper::workspace_guard;
use crate::agent::{
    AgentRun, LoopLimits, PromptFacts, Transcript, Workspace, WorkspaceError, run_agent,
    secret_values_from_env,
};
use crate::cache::JobCache;
use crate::cancel::CancelToken;
use crate::decision::decision_schema;
use crate::exec::AllowList;
use crate::manifest::{ProviderConfig, Trace};
use crate::protocol::{AgentFinishedRecord, ProviderFailedRecord};
use crate::protocol::{Event, FailureKind};
use crate::provider::{Provider, build_provider};

impl Phases<'_> {
    /// The agent loop on a fresh workspace; records `agent_finished`.
    pub(super) fn agent_phase(
        &mut self,
        workspace_dir: &Path,
        runs: &Path,
        cache: &JobCache,
    ) -> Result<Ending, RunError> {
        let (id, n) = (self.claim.job.clone(), self.claim.attempt);
        let manifest = self.manifest;
        if workspace_dir.exists() {
            fs::remove_dir_all(workspace_dir).map_err(|e| {
                self.setup_error(format!("cannot clear {}: {e}", workspace_dir.display()))
            })?;
        }
        let workspace = Workspace::create(&manifest.source, workspace_dir, &manifest.editable)
            .map_err(|e: WorkspaceError| self.setup_error(e))?;
        // A trusted patch the provider wants applied first (`check`'s
        // patch oracle, whose deletions decisions cannot make).
        if let Some(patch) = self.apply_first() {
            let text = fs::read_to_string(&patch)
                .map_err(|e| self.setup_error(format!("cannot read {}: {e}", patch.display())))?;
            let editable =
                crate::agent::editable_set(&manifest.editable).map_err(|e| self.setup_error(e))?;
            super::carried::apply_patch(workspace.root(), &text, &editable)
                .map_err(|e| self.setup_error(format!("{}: {e}", patch.display())))?;
        }
        // The workspace's build starts from its own copy of the dependency
        // layer: whatever the agent's commands do to it stays here.
        let cache_use = CacheUse::of(manifest, cache);
        // Only a workspace whose commands build gets the layer: the
        // verify command, or a command an allow rule names.
        let rules: Vec<Vec<String>> = manifest
            .allow
            .iter()
            .map(|rule| rule.split_whitespace().map(String::from).collect())
            .collect();
        let builds = cache_use.builds(
            std::iter::once(manifest.verify.as_slice()).chain(rules.iter().map(Vec::as_slice)),
        );
        cache_use
            .seed(workspace_dir, builds)
            .map_err(|e| self.setup_error(format!("cannot copy the dependency layer: {e}")))?;
        let deadline = Instant::now() + manifest.limits.wall_time;
        let mut guard =
            workspace_guard(manifest, workspace_dir).map_err(|e| self.setup_error(e))?;
        if manifest
            .agent
            .as_ref()
            .is_some_and(|a| a.mode == crate::protocol::AgentMode::Contained)
        {
            guard = guard.noting_strays();
        }
        let verdict = match self.build_provider() {
            Err(why) => {
                self.record(Event::ProviderFailed(ProviderFailedRecord {
                    step: 0,
                    message: why.to_string(),
                    input_tokens: 0,
                    output_tokens: 0,
                }))?;
                (fail(FailureKind::ProviderError), 0, None, None)
            }
            Ok(mut provider) => {
                let allow = AllowList::parse(&manifest.allow).map_err(|e| self.setup_error(e))?;
                let mut deny = vec![self.store.dir().canonical_root()];
                if let Some(acceptance) = &manifest.acceptance {
                    deny.push(acceptance.dir.clone());
                }
                let policy = policy_for(manifest, deny);
                let external_policy = policy.clone();
                let mut commands =
                    AttemptCommands::new(manifest, workspace.root(), allow, policy, deadline);
                commands.artifacts = Some(runs.to_path_buf());
                cache_use.apply(&mut commands, manifest);
                let (files, files_complete) = workspace.list(".").unwrap_or_default();
                let observation_cap =
                    usize::try_from(manifest.limits.observation_cap.bytes()).unwrap_or(usize::MAX);
                let facts = PromptFacts {
                    task: manifest.prompt.clone(),
                    files,
                    files_complete,
                    allow: manifest.allow.clone(),
                    editable: manifest.editable.clone(),
                    verify: manifest.verify.clone(),
                    max_steps: manifest.limits.max_steps,
                    max_invalid: manifest.limits.max_invalid,
                    observation_cap,
                    schema: decision_schema(),
                };
                let limits = LoopLimits {
                    max_steps: manifest.limits.max_steps,
                    max_invalid: manifest.limits.max_invalid,
                    token_budget: manifest.limits.token_budget,
                    observation_cap,
                    context_budget: (4 * observation_cap).max(64 * 1024),
                    deadline,
                };
                let mut transcript = match manifest.trace {
                    Trace::Full => {
                        Transcript::create(&runs.join("transcript.jsonl"), secret_values_from_env())
                            .ok()
                    }
                    Trace::Metadata => None,
                };
                let data = self.store.dir().root().to_path_buf();
                let agent_cancel = self.cancel.child();
                let timer = cancel_at(agent_cancel.clone(), deadline);
                let mut recorder = StoreRecorder {
                    store: &mut *self.store,
                    job: id.clone(),
                    attempt: n,
                };
                let run = AgentRun {
                    facts: &facts,
                    limits: &limits,
                    workspace: &workspace,
                    provider: provider.as_mut(),
                    commands: &mut commands,
                    recorder: &mut recorder,
                    cancel: &agent_cancel,
                    transcript: transcript.as_mut(),
                    attempt: n,
                    budget: self.options.budget.as_deref().zip(manifest.price),
                    guard: Some(&mut guard),
                };
                let mut agent_ms = None;
                let result = match &manifest.agent {
                    None => run_agent(run),
                    Some(choice) => {
                        let external = External {
                            choice,
                            manifest,
                            agents_dir: data.join("cache").join("agents"),
                            agent_dir: data.join("work").join(&id).join(format!("{n}-agent")),
                            runs,
                            policy: external_policy.clone(),
                            deadline,
                            full_trace: manifest.trace == Trace::Full,
                        };
                        match run_external(external, run) {
                            Ok(served) => served.map(|end| {
                                agent_ms = Some(end.agent_ms);
                                end.result
                            }),
                            Err(ExternalError::Sandbox(_)) => {
                                Ok(crate::agent::unavailable_sandbox())
                            }
                            Err(ExternalError::Setup(why)) => {
                                agent_cancel.cancel();
                                return Err(RunError::Infra {
                                    job: id,
                                    cause: why,
                                });
                            }
                        }
                    }
                };
                // Also wakes the timer, which then ends.
                agent_cancel.cancel();
                if let Some(timer) = timer {
                    let _ = timer.join();
                }
                let result = result?;
                if let Some(cause) = result.infra {
                    return Err(RunError::Infra { job: id, cause });
                }
                (
                    (result.outcome, result.failure_kind),
                    result.steps,
                    result.cause,
                    agent_ms,
                )
            }
        };
        let ((outcome, failure_kind), steps, cause, agent_ms) = verdict;
        // Stopped by Ctrl-C: the agent did not finish, so nothing is recorded
        // and the attempt is redone (not resumed as a cancelled one).
        let interrupted = self
            .options
            .interrupt
            .as_ref()
            .is_some_and(CancelToken::is_cancelled);
        if interrupted && failure_kind == Some(FailureKind::Cancelled) {
            return Ok((outcome, failure_kind));
        }
        let end = guard.finish(steps);
        let mut stray_files = end.stray_files;
        stray_files.truncate(crate::protocol::SIGNALS_KEPT);
        self.record(Event::AgentFinished(AgentFinishedRecord {
            outcome,
            failure_kind,
            steps,
            integrity: end.signals,
            cause,
            stray_files,
            agent_ms,
        }))?;
        Ok((outcome, failure_kind))
    }

    /// The patch a scripted provider asks the runner to apply first.
    fn apply_first(&self) -> Option<std::path::PathBuf> {
        let config = match &self.options.provider {
            Some((_, config)) => Some(config),
            None => self.manifest.provider.as_ref(),
        };
        match config {
            Some(ProviderConfig::Script(script)) => script.apply_first.clone(),
            _ => None,
        }
    }

    fn build_provider(&self) -> Result<Box<dyn Provider>, crate::provider::ProviderError> {
        let (name, config) = match &self.options.provider {
            Some((name, config)) => (name.clone(), config.clone()),
            None => match &self.manifest.provider {
                Some(config) => (config.kind().as_str().to_string(), config.clone()),
                None => return Err(crate::provider::ProviderError::NoProvider),
            },
        };
        build_provider(&config, &name)
    }
}

/// Cancels `token` at `deadline` unless it is cancelled before; the thread
/// ends as soon as either happens.
fn cancel_at(token: CancelToken, deadline: Instant) -> Option<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("agent-deadline".into())
        .spawn(move || {
            let left = deadline.saturating_duration_since(Instant::now());
            if !token.wait_timeout(left) {
                token.cancel();
            }
        })
        .ok()
}
