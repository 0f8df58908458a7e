//! The state reducer: a pure fold of records into [`State`]. Writers use the
//! same function to check an event before appending it, so an illegal
//! transition is refused before anything reaches the log.

use std::collections::HashMap;

use serde::Serialize;

use super::job::{Job, JobState, OpenAttempt};
use crate::log::{Event, FailureKind, Outcome, Record};

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
    #[error("cannot {action} job {job:?}: it is {state}")]
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
    #[error("job {0:?}: an attempt needs at least 1 allowed attempt")]
    ZeroAttempts(String),
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
    /// untouched.
    pub fn apply(&mut self, record: &Record) -> Result<(), Illegal> {
        let next = self.next_job(record)?;
        self.last_seq = record.seq;
        match next {
            Some(job) => match self.index.get(&job.id) {
                Some(&i) => self.jobs[i] = job,
                None => {
                    self.index.insert(job.id.clone(), self.jobs.len());
                    self.jobs.push(job);
                }
            },
            None => {
                if let Event::LogRepaired {
                    line,
                    dropped_bytes,
                } = record.event
                {
                    self.repairs.push((line, dropped_bytes));
                }
            }
        }
        Ok(())
    }

    /// Checks whether `record` could be applied, without applying it.
    pub fn check(&self, record: &Record) -> Result<(), Illegal> {
        self.next_job(record).map(|_| ())
    }

    /// Computes the job's state after `record` (None for log-level events).
    fn next_job(&self, record: &Record) -> Result<Option<Job>, Illegal> {
        let event = &record.event;
        if let Event::LogRepaired { .. } = event {
            return Ok(None);
        }
        let id = record.job.as_deref().ok_or(Illegal::MissingJob {
            event: event.type_name(),
        })?;
        let current = self.job(id);
        let mut job = match (event, current) {
            (Event::Enqueued { max_attempts }, None) => {
                if *max_attempts == 0 {
                    return Err(Illegal::ZeroAttempts(id.to_string()));
                }
                Job {
                    id: id.to_string(),
                    state: JobState::Queued,
                    max_attempts: *max_attempts,
                    attempts_started: 0,
                    open_attempt: None,
                    failure_kind: None,
                    last_outcome: None,
                    last_event: "",
                    last_seq: 0,
                    enqueued_ms: record.ts_ms,
                    updated_ms: 0,
                }
            }
            (Event::Enqueued { .. }, Some(_)) => {
                return Err(Illegal::AlreadyExists(id.to_string()));
            }
            (_, None) => return Err(Illegal::UnknownJob(id.to_string())),
            (_, Some(job)) => job.clone(),
        };
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
        let close = |job: &mut Job| -> Result<(), Illegal> {
            let n = attempt()?;
            match job.open_attempt {
                Some(open) if open.attempt == n => {
                    job.open_attempt = None;
                    Ok(())
                }
                _ => Err(Illegal::AttemptNotOpen {
                    job: job.id.clone(),
                    attempt: n,
                }),
            }
        };

        match event {
            Event::Enqueued { .. } | Event::LogRepaired { .. } => {}
            Event::AttemptStarted { pid } => {
                if job.state != JobState::Queued {
                    return Err(wrong_state("start an attempt of", &job));
                }
                if !job.attempts_remain() {
                    return Err(Illegal::NoAttemptsLeft {
                        job: job.id,
                        max: job.max_attempts,
                    });
                }
                let n = attempt()?;
                if n != job.attempts_started + 1 {
                    return Err(Illegal::WrongAttempt {
                        job: job.id,
                        got: n,
                        expected: job.attempts_started + 1,
                    });
                }
                job.attempts_started = n;
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
                close(&mut job)?;
                job.last_outcome = Some(*outcome);
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
            Event::AttemptInterrupted { .. } => {
                close(&mut job)?;
                if job.state == JobState::Running {
                    if job.attempts_remain() {
                        job.state = JobState::Queued;
                    } else {
                        job.state = JobState::Failed;
                    }
                    job.failure_kind = Some(FailureKind::Interrupted);
                }
            }
            Event::Cancelled {} => {
                if !matches!(job.state, JobState::Queued | JobState::Running) {
                    return Err(wrong_state("cancel", &job));
                }
                job.state = JobState::Cancelled;
                job.failure_kind = Some(FailureKind::Cancelled);
            }
            Event::Retried {} => {
                if job.state != JobState::Failed {
                    return Err(wrong_state("retry", &job));
                }
                if !job.attempts_remain() {
                    return Err(Illegal::NoAttemptsLeft {
                        job: job.id,
                        max: job.max_attempts,
                    });
                }
                job.state = JobState::Queued;
            }
        }
        job.last_event = event.type_name();
        job.last_seq = record.seq;
        job.updated_ms = record.ts_ms;
        Ok(Some(job))
    }
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
