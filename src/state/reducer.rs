//! The state reducer: a pure fold of records into [`State`]. Writers use the
//! same function to check an event before appending it, so an illegal
//! transition is refused before anything reaches the log.

use std::collections::HashMap;

use serde::Serialize;

use std::sync::Arc;

use super::job::{AgentPhase, Job, JobState, OpenAttempt, Waiting};
use crate::log::{CheckResult, Event, FailureKind, Outcome, Record};

/// Everything the log says, replayed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct State {
    /// Jobs in the order they were enqueued.
    jobs: Vec<Job>,
    #[serde(skip)]
    index: HashMap<String, usize>,
    /// `seq` of the last record applied.
    pub last_seq: u64,
    /// Torn tails that writers cut off, as `(line, dropped_bytes)`.
    pub repairs: Vec<(u64, u64)>,
}

/// Why an event cannot apply to the current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Illegal {
    #[error("no job with id {0:?}")]
    UnknownJob(String),
    #[error("job {0:?} already exists")]
    AlreadyExists(String),
    #[error("event {event} needs a job id")]
    MissingJob { event: &'static str },
    #[error("event {event} for job {job:?} needs an attempt number")]
    MissingAttempt { job: String, event: &'static str },
    #[error("cannot {action} job {job:?}: it {}", state.phrase())]
    WrongState {
        job: String,
        action: &'static str,
        state: JobState,
    },
    #[error("cannot retry job {job:?}: all {max} attempts are used")]
    NoAttemptsLeft { job: String, max: u32 },
    #[error("job {job:?}: attempt {got} is not the expected attempt {expected}")]
    WrongAttempt {
        job: String,
        got: u32,
        expected: u32,
    },
    #[error("job {job:?}: attempt {attempt} is not open")]
    AttemptNotOpen { job: String, attempt: u32 },
    #[error("job {job:?}: attempt {attempt} already recorded its {phase} phase")]
    PhaseTwice {
        job: String,
        attempt: u32,
        phase: &'static str,
    },
    #[error("job {0:?}: an attempt needs at least 1 allowed attempt")]
    ZeroAttempts(String),
    #[error(
        "job {job:?}: a replacement cannot number attempts after {before}: attempt {highest} exists"
    )]
    AttemptsRenumbered {
        job: String,
        before: u32,
        highest: u32,
    },
}

impl State {
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    pub fn job(&self, id: &str) -> Option<&Job> {
        self.index.get(id).map(|&i| &self.jobs[i])
    }

    /// True when there is at least one job and every job is terminal.
    pub fn all_terminal(&self) -> bool {
        !self.jobs.is_empty() && self.jobs.iter().all(|j| j.state.is_terminal())
    }

    /// Applies one record, or explains why it is illegal and leaves the state
    /// untouched. Jobs are changed in place: every transition checks
    /// everything before it changes anything.
    pub fn apply(&mut self, record: &Record) -> Result<(), Illegal> {
        match self.target(record)? {
            Target::Log => {
                if let Event::LogRepaired {
                    line,
                    dropped_bytes,
                } = record.event
                {
                    self.repairs.push((line, dropped_bytes));
                }
            }
            Target::New(mut job) => {
                transition(&mut job, record)?;
                self.index.insert(job.id.clone(), self.jobs.len());
                self.jobs.push(*job);
            }
            Target::Existing(i) => transition(&mut self.jobs[i], record)?,
        }
        self.last_seq = record.seq;
        Ok(())
    }

    /// Checks whether `record` could be applied, without applying it.
    pub fn check(&self, record: &Record) -> Result<(), Illegal> {
        match self.target(record)? {
            Target::Log => Ok(()),
            Target::New(mut job) => transition(&mut job, record),
            Target::Existing(i) => transition(&mut self.jobs[i].clone(), record),
        }
    }

    /// Which job `record` is about (a new one for `enqueued`).
    fn target(&self, record: &Record) -> Result<Target, Illegal> {
        let event = &record.event;
        if let Event::LogRepaired { .. } = event {
            return Ok(Target::Log);
        }
        let id = record.job.as_deref().ok_or(Illegal::MissingJob {
            event: event.type_name(),
        })?;
        let current = self.index.get(id).copied();
        match (event, current) {
            (
                Event::Enqueued {
                    max_attempts,
                    family,
                    manifest,
                    manifest_hash,
                    provider,
                    ..
                },
                None,
            ) => {
                if *max_attempts == 0 {
                    return Err(Illegal::ZeroAttempts(id.to_string()));
                }
                Ok(Target::New(Box::new(Job {
                    id: id.to_string(),
                    family: family.clone().unwrap_or_else(|| id.to_string()),
                    state: JobState::Queued,
                    manifest: manifest.as_ref().map(|m| Arc::new((**m).clone())),
                    manifest_hash: manifest_hash.clone(),
                    max_attempts: *max_attempts,
                    attempts_started: 0,
                    attempt_base: 0,
                    open_attempt: None,
                    failure_kind: None,
                    last_outcome: None,
                    steps: 0,
                    steps_before: 0,
                    last_attempt: 0,
                    invalid_decisions: 0,
                    last_action: None,
                    baseline: None,
                    agent: None,
                    patch_recorded: false,
                    patch_files_hash: None,
                    patch_rejected: false,
                    acceptance: None,
                    inventory: None,
                    baseline_reason: None,
                    verdict: None,
                    restarts: 0,
                    max_restarts: max_restarts_of(manifest.as_deref()),
                    infra_cause: None,
                    fault_mark: None,
                    resume: None,
                    cause: None,
                    verify_cause: None,
                    refusal: None,
                    provider_cause: None,
                    patch_cause: None,
                    setup_cause: None,
                    caches: Default::default(),
                    attempt_tokens: 0,
                    provider: provider.clone(),
                    waiting: None,
                    price: price_of(manifest.as_deref()),
                    cost_usd: 0.0,
                    first_started_ms: None,
                    ended_ms: None,
                    last_event: "",
                    last_seq: 0,
                    enqueued_ms: record.ts_ms,
                    updated_ms: 0,
                })))
            }
            (Event::Enqueued { .. }, Some(_)) => Err(Illegal::AlreadyExists(id.to_string())),
            (_, None) => Err(Illegal::UnknownJob(id.to_string())),
            (_, Some(i)) => Ok(Target::Existing(i)),
        }
    }
}

/// Where a record lands.
enum Target {
    Log,
    New(Box<Job>),
    Existing(usize),
}

/// Moves `job` through `record`'s transition: first every check, then the
/// changes, so an `Err` leaves the job as it was.
fn transition(job: &mut Job, record: &Record) -> Result<(), Illegal> {
    let event = &record.event;
    // The record names the job (target() found it by that id).
    let id: &str = record.job.as_deref().unwrap_or_default();
    {
        let wrong_state = |action, job: &Job| Illegal::WrongState {
            job: job.id.clone(),
            action,
            state: job.state,
        };
        let attempt = || {
            record.attempt.ok_or_else(|| Illegal::MissingAttempt {
                job: id.to_string(),
                event: event.type_name(),
            })
        };
        // Events that happen inside an attempt need that attempt to be open.
        let in_open_attempt = |job: &Job| -> Result<u32, Illegal> {
            let n = attempt()?;
            match job.open_attempt {
                Some(open) if open.attempt == n => Ok(n),
                _ => Err(Illegal::AttemptNotOpen {
                    job: job.id.clone(),
                    attempt: n,
                }),
            }
        };

        match event {
            Event::Enqueued { .. } | Event::LogRepaired { .. } => {}
            Event::Replaced {
                max_attempts,
                family,
                manifest,
                manifest_hash,
                attempts_before,
            } => {
                if job.open_attempt.is_some() {
                    return Err(wrong_state("replace the manifest of", job));
                }
                if *max_attempts == 0 {
                    return Err(Illegal::ZeroAttempts(id.to_string()));
                }
                let highest = job.highest_attempt();
                if *attempts_before != 0 && *attempts_before < highest {
                    return Err(Illegal::AttemptsRenumbered {
                        job: id.to_string(),
                        before: *attempts_before,
                        highest,
                    });
                }
                job.family = family.clone().unwrap_or_else(|| id.to_string());
                job.manifest = Some(Arc::new((**manifest).clone()));
                job.manifest_hash = Some(manifest_hash.clone());
                job.max_attempts = *max_attempts;
                job.max_restarts = max_restarts_of(Some(manifest));
                job.price = price_of(Some(manifest));
                job.cost_usd = 0.0;
                job.restarts = 0;
                job.infra_cause = None;
                job.fault_mark = None;
                // Numbering goes on after the attempts already made (0 in
                // version 1 logs: it restarted).
                job.attempts_started = *attempts_before;
                job.attempt_base = *attempts_before;
                job.state = JobState::Queued;
                job.failure_kind = None;
                job.last_outcome = None;
                job.baseline = None;
                job.resume = None;
                job.steps_before = 0;
                job.last_attempt = *attempts_before;
                job.first_started_ms = None;
                job.ended_ms = None;
                reset_attempt_facts(job);
                clear_causes(job);
                job.setup_cause = None;
            }
            Event::AttemptStarted { pid } => {
                if job.state != JobState::Queued {
                    return Err(wrong_state("start an attempt of", job));
                }
                let n = attempt()?;
                if let Some(resumed) = job.resume {
                    if n != resumed {
                        return Err(Illegal::WrongAttempt {
                            job: job.id.clone(),
                            got: n,
                            expected: resumed,
                        });
                    }
                    job.resume = None;
                } else {
                    if !job.attempts_remain() {
                        return Err(Illegal::NoAttemptsLeft {
                            job: job.id.clone(),
                            max: job.max_attempts,
                        });
                    }
                    if n != job.attempts_started + 1 {
                        return Err(Illegal::WrongAttempt {
                            job: job.id.clone(),
                            got: n,
                            expected: job.attempts_started + 1,
                        });
                    }
                    job.attempts_started = n;
                    if n > job.last_attempt {
                        // A new attempt (not one started over after a
                        // fault): the last one's steps are history, its
                        // causes are not this attempt's.
                        job.steps_before = job.steps_before.saturating_add(job.steps);
                        job.last_attempt = n;
                        clear_causes(job);
                    }
                    reset_attempt_facts(job);
                }
                job.first_started_ms.get_or_insert(record.ts_ms);
                job.open_attempt = Some(OpenAttempt {
                    attempt: n,
                    pid: *pid,
                });
                job.state = JobState::Running;
                job.failure_kind = None;
            }
            Event::AttemptFinished {
                outcome,
                failure_kind,
            } => {
                in_open_attempt(job)?;
                job.open_attempt = None;
                job.last_outcome = Some(*outcome);
                job.ended_ms = Some(record.ts_ms);
                // A job cancelled while running stays cancelled; the finish
                // only closes the attempt.
                if job.state == JobState::Running {
                    match outcome {
                        Outcome::Succeeded => {
                            job.state = JobState::Succeeded;
                            job.failure_kind = None;
                        }
                        Outcome::Failed => {
                            job.state = JobState::Failed;
                            job.failure_kind =
                                Some(failure_kind.unwrap_or(FailureKind::VerifyFailed));
                        }
                    }
                }
            }
            Event::AttemptInterrupted {
                by_runner, cause, ..
            } => {
                let n = in_open_attempt(job)?;
                job.open_attempt = None;
                job.ended_ms = Some(record.ts_ms);
                if let Some(cause) = cause {
                    job.cause = Some(cause.clone());
                }
                if job.state == JobState::Running {
                    // Neither a Ctrl-C nor a fault of the infrastructure (a
                    // runner that died, an unreachable provider, a runtime
                    // I/O error) is the model's doing: the attempt is not
                    // used up. Faults are bounded by max_restarts, so a
                    // fault that repeats cannot keep a job open forever.
                    if !*by_runner {
                        let mark = job.phase_mark();
                        if job.fault_mark != Some(mark) {
                            // Progress since the last fault: a new count.
                            job.restarts = 0;
                            job.fault_mark = Some(mark);
                        }
                        job.restarts += 1;
                        job.infra_cause =
                            Some(cause.clone().unwrap_or_else(|| {
                                "the runner stopped (killed or crashed)".into()
                            }));
                    }
                    if !*by_runner && job.restarts > job.max_restarts {
                        job.state = JobState::Failed;
                        job.failure_kind = Some(FailureKind::InfraError);
                        job.resume = None;
                    } else {
                        if job.agent.is_some_and(|a| a.attempt == n) {
                            // The agent's work is recorded; resume after it.
                            job.resume = Some(n);
                        } else {
                            job.attempts_started = n - 1;
                        }
                        job.state = JobState::Queued;
                        job.failure_kind = Some(FailureKind::Interrupted);
                    }
                }
            }
            Event::Cancelled {} => {
                if !matches!(job.state, JobState::Queued | JobState::Running) {
                    return Err(wrong_state("cancel", job));
                }
                job.state = JobState::Cancelled;
                job.failure_kind = Some(FailureKind::Cancelled);
                job.resume = None;
                job.ended_ms = Some(record.ts_ms);
            }
            Event::Retried {} => {
                if job.state != JobState::Failed {
                    return Err(wrong_state("retry", job));
                }
                if !job.attempts_remain() {
                    return Err(Illegal::NoAttemptsLeft {
                        job: job.id.clone(),
                        max: job.max_attempts,
                    });
                }
                job.state = JobState::Queued;
            }
            Event::Baseline {
                result,
                inventory,
                reason,
                ..
            } => {
                in_open_attempt(job)?;
                job.baseline = Some(*result);
                job.inventory = inventory.clone();
                job.baseline_reason = reason.clone();
                if *result == CheckResult::Error {
                    // A broken harness is what the job fails for.
                    job.cause = reason.clone();
                }
            }
            Event::Decision {
                step,
                kind,
                reason,
                input_tokens,
                cached_input_tokens,
                output_tokens,
                ..
            } => {
                in_open_attempt(job)?;
                if let Some(price) = job.price {
                    job.cost_usd = crate::manifest::add_usd(
                        job.cost_usd,
                        price.cost(*input_tokens, *cached_input_tokens, *output_tokens),
                    );
                }
                job.attempt_tokens = job
                    .attempt_tokens
                    .saturating_add(*input_tokens)
                    .saturating_add(*output_tokens);
                job.steps = job.steps.max(*step);
                if *kind == crate::log::DecisionKind::Invalid {
                    job.invalid_decisions += 1;
                }
                job.last_action = Some(kind.as_str().to_string());
                if let Some(reason) = reason {
                    let refusal = format!("refused: {reason}");
                    job.cause = Some(refusal.clone());
                    job.refusal = Some(refusal);
                }
            }
            Event::ProviderRetry { retry, reason, .. } => {
                in_open_attempt(job)?;
                let since_ms = job.waiting.as_ref().map_or(record.ts_ms, |w| w.since_ms);
                job.waiting = Some(Waiting {
                    reason: reason.clone(),
                    retries: *retry,
                    since_ms,
                });
            }
            Event::ProviderFailed {
                step,
                message,
                input_tokens,
                output_tokens,
            } => {
                in_open_attempt(job)?;
                if let Some(price) = job.price {
                    // Billed although unusable: it cost all the same.
                    job.cost_usd = crate::manifest::add_usd(
                        job.cost_usd,
                        price.cost(*input_tokens, 0, *output_tokens),
                    );
                }
                // A failed provider call is a step too, as the agent counts.
                job.steps = job.steps.max(*step);
                job.cause = Some(message.clone());
                job.provider_cause = Some(message.clone());
            }
            Event::Verify { cause, .. } => {
                in_open_attempt(job)?;
                if let Some(cause) = cause {
                    job.cause = Some(cause.clone());
                    job.verify_cause = Some(cause.clone());
                }
            }
            Event::Setup { cause, cache, .. } => {
                in_open_attempt(job)?;
                job.setup_cause = cause.clone();
                if let Some(key) = cache {
                    job.caches.insert(key.clone());
                }
            }
            Event::Command { .. } | Event::Edit { .. } => {
                in_open_attempt(job)?;
            }
            Event::AgentFinished {
                outcome,
                failure_kind,
                steps,
            } => {
                let n = in_open_attempt(job)?;
                if job.agent.is_some_and(|a| a.attempt == n) {
                    return Err(Illegal::PhaseTwice {
                        job: job.id.clone(),
                        attempt: n,
                        phase: "agent",
                    });
                }
                job.agent = Some(AgentPhase {
                    attempt: n,
                    outcome: *outcome,
                    failure_kind: *failure_kind,
                });
                job.steps = job.steps.max(*steps);
            }
            Event::Patch { files_hash, .. } => {
                let n = in_open_attempt(job)?;
                if job.patch_rejected {
                    return Err(Illegal::PhaseTwice {
                        job: job.id.clone(),
                        attempt: n,
                        phase: "patch",
                    });
                }
                job.patch_recorded = true;
                job.patch_files_hash = files_hash.clone();
            }
            Event::PatchRejected { reason } => {
                let n = in_open_attempt(job)?;
                // A recorded patch may still be rejected by acceptance (what
                // it holds cannot be laid on the clean copy), once.
                let judged = job.patch_recorded && job.acceptance.is_some();
                if judged || job.patch_rejected {
                    return Err(Illegal::PhaseTwice {
                        job: job.id.clone(),
                        attempt: n,
                        phase: "patch",
                    });
                }
                job.patch_rejected = true;
                job.cause = Some(reason.clone());
                job.patch_cause = Some(reason.clone());
            }
            Event::Acceptance { result, verdict } => {
                let n = in_open_attempt(job)?;
                if job.acceptance.is_some() {
                    return Err(Illegal::PhaseTwice {
                        job: job.id.clone(),
                        attempt: n,
                        phase: "acceptance",
                    });
                }
                job.acceptance = Some(*result);
                job.verdict = verdict.clone();
            }
        }
        if !matches!(event, Event::ProviderRetry { .. }) {
            // Anything else the job does ends a wait for its provider.
            job.waiting = None;
        }
        job.last_event = event.type_name();
        job.last_seq = record.seq;
        job.updated_ms = record.ts_ms;
        Ok(())
    }
}

/// Forgets the reasons the previous attempt recorded.
fn clear_causes(job: &mut Job) {
    job.cause = None;
    job.verify_cause = None;
    job.refusal = None;
    job.provider_cause = None;
    job.patch_cause = None;
}

/// Clears what the log said about the previous attempt.
fn reset_attempt_facts(job: &mut Job) {
    job.attempt_tokens = 0;
    job.steps = 0;
    job.invalid_decisions = 0;
    job.last_action = None;
    job.agent = None;
    job.patch_recorded = false;
    job.patch_files_hash = None;
    job.patch_rejected = false;
    job.acceptance = None;
    job.verdict = None;
}

/// Replays records from the start.
pub fn replay<'a>(records: impl IntoIterator<Item = &'a Record>) -> (State, Vec<(u64, Illegal)>) {
    let mut state = State::default();
    let mut anomalies = Vec::new();
    for record in records {
        if let Err(e) = state.apply(record) {
            anomalies.push((record.seq, e));
            state.last_seq = record.seq;
        }
    }
    (state, anomalies)
}

#[cfg(test)]
#[path = "reducer_tests.rs"]
mod tests;

/// `[price]` of a manifest snapshot (`{"manifest": {...}}`), if it has one.
fn price_of(snapshot: Option<&serde_json::Value>) -> Option<crate::manifest::Price> {
    let price = snapshot?.get("manifest")?.get("price")?;
    serde_json::from_value(price.clone()).ok()
}

/// `[limits] max_restarts` of a manifest snapshot (`{"manifest": {...}}`),
/// or the default for a job without one.
fn max_restarts_of(snapshot: Option<&serde_json::Value>) -> u32 {
    snapshot
        .and_then(|s| s["manifest"]["limits"]["max_restarts"].as_u64())
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(crate::manifest::DEFAULT_MAX_RESTARTS)
}
