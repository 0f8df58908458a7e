//! The reducer's handlers of lifecycle events: a job enqueued or given a
//! new manifest, attempts started, finished and interrupted, cancels and
//! retries. Each checks everything before it changes anything.

use std::borrow::Cow;
use std::sync::Arc;

use super::attempt::{Attempt, RunEnd};
use super::job::{Job, JobState, Lifecycle, OpenAttempt, Usage};
use super::reducer::{At, Illegal};
use crate::protocol::{
    AttemptFinishedRecord, AttemptInterruptedRecord, FailureKind, ManifestSnapshot, Outcome,
    Record, ReplacedRecord,
};

/// What an `enqueued` event says about the new job.
pub(super) struct Enqueued<'e> {
    pub max_attempts: u32,
    pub family: Option<&'e String>,
    pub manifest: Option<&'e ManifestSnapshot>,
    pub manifest_hash: Option<&'e String>,
    pub base_job: Option<&'e String>,
    pub provider: Option<&'e String>,
    pub repeat: Option<u32>,
}

/// The job an `enqueued` record creates.
pub(super) fn enqueued(id: &str, record: &Record, new: Enqueued<'_>) -> Result<Job, Illegal> {
    if new.max_attempts == 0 {
        return Err(Illegal::ZeroAttempts(id.to_string()));
    }
    Ok(Job {
        id: id.to_string(),
        family: new.family.cloned().unwrap_or_else(|| id.to_string()),
        manifest: new.manifest.map(|m| Arc::new(m.clone())),
        manifest_hash: new.manifest_hash.cloned(),
        base_job: new.base_job.cloned(),
        provider: new.provider.cloned(),
        repeat: new.repeat,
        price: price_of(new.manifest),
        lifecycle: Lifecycle {
            state: JobState::Queued,
            failure_kind: None,
            last_outcome: None,
            max_attempts: new.max_attempts,
            attempts_started: 0,
            attempt_base: 0,
            open: None,
            resume: None,
            restarts: 0,
            max_restarts: max_restarts_of(new.manifest),
            infra_cause: None,
            fault_mark: None,
        },
        baseline: None,
        setup_cause: None,
        caches: Default::default(),
        attempts: Vec::new(),
        earlier_attempts: Vec::new(),
        waiting: None,
        cost_usd: 0.0,
        usage: Usage::default(),
        first_started_ms: None,
        ended_ms: None,
        last_event: Cow::Borrowed(""),
        last: None,
        last_seq: 0,
        enqueued_ms: record.ts_ms,
        updated_ms: 0,
    })
}

/// `replaced`: a new manifest (or the same one again): the job is queued
/// again, its attempts numbered after every attempt the log holds, which
/// stay as history.
pub(super) fn replaced(job: &mut Job, at: &At<'_>, event: &ReplacedRecord) -> Result<(), Illegal> {
    let ReplacedRecord {
        max_attempts,
        family,
        manifest,
        manifest_hash,
        attempts_before,
    } = event;
    let (max_attempts, attempts_before) = (*max_attempts, *attempts_before);
    let (family, manifest) = (family.as_ref(), &**manifest);
    if job.lifecycle.open.is_some() {
        return Err(at.wrong_state("replace the manifest of", job));
    }
    if max_attempts == 0 {
        return Err(Illegal::ZeroAttempts(at.id.to_string()));
    }
    let highest = job.highest_attempt();
    if attempts_before != 0 && attempts_before < highest {
        return Err(Illegal::AttemptsRenumbered {
            job: at.id.to_string(),
            before: attempts_before,
            highest,
        });
    }
    job.family = family.cloned().unwrap_or_else(|| at.id.to_string());
    job.manifest = Some(Arc::new(manifest.clone()));
    job.manifest_hash = Some(manifest_hash.to_string());
    job.price = price_of(Some(manifest));
    job.cost_usd = 0.0;
    job.usage = Usage::default();
    // Numbering goes on after the attempts already made (0 in version 1
    // logs: it restarted).
    job.lifecycle = Lifecycle {
        state: JobState::Queued,
        failure_kind: None,
        last_outcome: None,
        max_attempts,
        attempts_started: attempts_before,
        attempt_base: attempts_before,
        open: None,
        resume: None,
        restarts: 0,
        max_restarts: max_restarts_of(Some(manifest)),
        infra_cause: None,
        fault_mark: None,
    };
    job.baseline = None;
    job.setup_cause = None;
    let earlier = std::mem::take(&mut job.attempts);
    job.earlier_attempts.extend(earlier);
    job.first_started_ms = None;
    job.ended_ms = None;
    Ok(())
}

/// `attempt_started`: the next attempt, the same one started over after a
/// fault, or a resumed one.
pub(super) fn started(job: &mut Job, at: &At<'_>, pid: u32) -> Result<(), Illegal> {
    if job.lifecycle.state != JobState::Queued {
        return Err(at.wrong_state("start an attempt of", job));
    }
    let n = at.attempt()?;
    let life = &job.lifecycle;
    if let Some(resumed) = life.resume {
        if n != resumed {
            return Err(Illegal::WrongAttempt {
                job: job.id.clone(),
                got: n,
                expected: resumed,
            });
        }
        job.lifecycle.resume = None;
    } else {
        if !job.attempts_remain() {
            return Err(Illegal::NoAttemptsLeft {
                job: job.id.clone(),
                max: life.max_attempts,
            });
        }
        if n != life.attempts_started + 1 {
            return Err(Illegal::WrongAttempt {
                job: job.id.clone(),
                got: n,
                expected: life.attempts_started + 1,
            });
        }
        job.lifecycle.attempts_started = n;
        let hash = job.manifest_hash.clone();
        match job.attempts.last_mut() {
            // Started over after a fault: what the cut-short run did is
            // not this run's.
            Some(attempt) if attempt.number == n => attempt.restart(),
            // A new attempt: the last one's steps and causes are history.
            _ => {
                // Grown one at a time: most jobs have one attempt, and a
                // sweep holds every job's (a first push would make room
                // for four).
                job.attempts.reserve_exact(1);
                job.attempts.push(Attempt::new(n, hash));
            }
        }
    }
    job.first_started_ms.get_or_insert(at.record.ts_ms);
    job.lifecycle.open = Some(OpenAttempt { attempt: n, pid });
    job.lifecycle.state = JobState::Running;
    job.lifecycle.failure_kind = None;
    Ok(())
}

/// `attempt_finished`: the runner's verdict on the open attempt.
pub(super) fn finished(
    job: &mut Job,
    at: &At<'_>,
    event: &AttemptFinishedRecord,
) -> Result<(), Illegal> {
    let AttemptFinishedRecord {
        outcome,
        failure_kind,
        integrity,
    } = event;
    let (outcome, failure_kind) = (*outcome, *failure_kind);
    let attempt = at.open_attempt(job)?;
    attempt.runs.push(RunEnd::Finished {
        outcome,
        failure_kind,
    });
    if let Some(record) = integrity {
        attempt.integrity = record.clone();
        attempt.integrity_final = true;
    }
    let life = &mut job.lifecycle;
    life.open = None;
    life.last_outcome = Some(outcome);
    job.ended_ms = Some(at.record.ts_ms);
    // A job cancelled while running stays cancelled; the finish only
    // closes the attempt.
    if life.state == JobState::Running {
        match outcome {
            Outcome::Succeeded => {
                life.state = JobState::Succeeded;
                life.failure_kind = None;
            }
            Outcome::Failed => {
                life.state = JobState::Failed;
                life.failure_kind = Some(failure_kind.unwrap_or(FailureKind::VerifyFailed));
            }
        }
    }
    Ok(())
}

/// `attempt_interrupted`: the open attempt stopped before finishing.
pub(super) fn interrupted(
    job: &mut Job,
    at: &At<'_>,
    event: &AttemptInterruptedRecord,
) -> Result<(), Illegal> {
    let AttemptInterruptedRecord {
        by_runner, cause, ..
    } = event;
    let (by_runner, cause) = (*by_runner, cause.as_ref());
    let progress = job.progress();
    let attempt = at.open_attempt(job)?;
    let n = attempt.number;
    attempt.runs.push(RunEnd::Interrupted);
    if let Some(cause) = cause {
        attempt.causes.last = Some(cause.clone());
    }
    let agent_done = attempt.phase.agent_done();
    job.ended_ms = Some(at.record.ts_ms);
    let life = &mut job.lifecycle;
    life.open = None;
    if life.state != JobState::Running {
        return Ok(());
    }
    // Neither a Ctrl-C nor a fault of the infrastructure (a runner that
    // died, an unreachable provider, a runtime I/O error) is the model's
    // doing: the attempt is not used up. Faults are bounded by
    // max_restarts, so a fault that repeats cannot keep a job open forever.
    if !by_runner {
        if life.fault_mark != Some(progress) {
            // Progress since the last fault: a new count.
            life.restarts = 0;
            life.fault_mark = Some(progress);
        }
        life.restarts += 1;
        life.infra_cause = Some(
            cause
                .cloned()
                .unwrap_or_else(|| "the runner stopped (killed or crashed)".into()),
        );
    }
    if !by_runner && life.restarts > life.max_restarts {
        life.state = JobState::Failed;
        life.failure_kind = Some(FailureKind::InfraError);
        life.resume = None;
    } else {
        if agent_done {
            // The agent's work is recorded; resume after it.
            life.resume = Some(n);
        } else {
            life.attempts_started = n - 1;
        }
        life.state = JobState::Queued;
        life.failure_kind = Some(FailureKind::Interrupted);
    }
    Ok(())
}

/// `cancelled`: a durable cancel of a queued or running job.
pub(super) fn cancelled(job: &mut Job, at: &At<'_>) -> Result<(), Illegal> {
    if !matches!(job.lifecycle.state, JobState::Queued | JobState::Running) {
        return Err(at.wrong_state("cancel", job));
    }
    job.lifecycle.state = JobState::Cancelled;
    job.lifecycle.failure_kind = Some(FailureKind::Cancelled);
    job.lifecycle.resume = None;
    job.ended_ms = Some(at.record.ts_ms);
    Ok(())
}

/// `retried`: a failed job with attempts left is queued again.
pub(super) fn retried(job: &mut Job, at: &At<'_>) -> Result<(), Illegal> {
    if job.lifecycle.state != JobState::Failed {
        return Err(at.wrong_state("retry", job));
    }
    if !job.attempts_remain() {
        return Err(Illegal::NoAttemptsLeft {
            job: job.id.clone(),
            max: job.lifecycle.max_attempts,
        });
    }
    job.lifecycle.state = JobState::Queued;
    Ok(())
}

/// `[price]` of a manifest snapshot, if it has one.
fn price_of(snapshot: Option<&ManifestSnapshot>) -> Option<crate::protocol::Price> {
    snapshot?.manifest()?.price
}

/// `[limits] max_restarts` of a manifest snapshot, or the default for a
/// job without one.
fn max_restarts_of(snapshot: Option<&ManifestSnapshot>) -> u32 {
    snapshot
        .and_then(ManifestSnapshot::manifest)
        .map_or(crate::protocol::DEFAULT_MAX_RESTARTS, |m| {
            m.limits.max_restarts
        })
}
