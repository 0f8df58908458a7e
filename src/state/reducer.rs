//! The state reducer: a pure fold of records into [`State`]. Writers use the
//! same function to check an event before appending it, so an illegal
//! transition is refused before anything reaches the log. The handlers of
//! each group of events are beside it: `lifecycle.rs`, `phases.rs`,
//! `steps.rs`.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::attempt::Attempt;
use super::checkpoint::Sections;
use super::job::{Baseline, Job, JobState, OpenAttempt};
use super::{lifecycle, phases, steps};
use crate::log::{CheckpointBody, CheckpointWriter};
use crate::protocol::{
    AttemptStartedRecord, EnqueuedRecord, LogRepairedRecord, ModelCallRecord, PatchRejectedRecord,
};
use crate::protocol::{Event, Record};

/// Everything the log says, replayed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct State {
    /// Jobs in the order they were enqueued.
    jobs: Vec<Job>,
    #[serde(skip)]
    index: HashMap<String, usize>,
    /// The jobs with an open attempt, by position: what a writer checks
    /// for a gone runner before each transaction, without a scan of every
    /// job.
    #[serde(skip)]
    open: BTreeSet<usize>,
    /// Reusable baselines by key: the first recorded with each key (see
    /// [`Baseline::reusable`]), kept when its job is replaced, so a later
    /// instance with the same key finds it in O(1).
    baselines: HashMap<String, Baseline>,
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

    /// The jobs with an open attempt (running, or supposed to be), in the
    /// order they were enqueued.
    pub fn open_jobs(&self) -> impl Iterator<Item = &Job> {
        self.open.iter().filter_map(|&i| self.jobs.get(i))
    }

    /// `(job, attempt)` of every open attempt, in the order the jobs were
    /// enqueued.
    pub fn open_attempts(&self) -> impl Iterator<Item = (&str, OpenAttempt)> {
        self.open_jobs()
            .filter_map(|job| job.lifecycle.open.map(|open| (job.id.as_str(), open)))
    }

    /// True when there is at least one job and every job is terminal.
    pub fn all_terminal(&self) -> bool {
        !self.jobs.is_empty() && self.jobs.iter().all(|j| j.lifecycle.state.is_terminal())
    }

    /// Applies one record, or explains why it is illegal and leaves the state
    /// untouched. Jobs are changed in place: every transition checks
    /// everything before it changes anything.
    pub fn apply(&mut self, record: &Record) -> Result<(), Illegal> {
        match self.target(record)? {
            Target::Log => {
                if let Event::LogRepaired(LogRepairedRecord {
                    line,
                    dropped_bytes,
                }) = record.event
                {
                    self.repairs.push((line, dropped_bytes));
                }
            }
            Target::New(mut job) => {
                transition(&mut job, record)?;
                self.index.insert(job.id.clone(), self.jobs.len());
                self.jobs.push(*job);
            }
            Target::Existing(i) => {
                transition(&mut self.jobs[i], record)?;
                if self.jobs[i].lifecycle.open.is_some() {
                    self.open.insert(i);
                } else {
                    self.open.remove(&i);
                }
                if let Event::Baseline(_) = record.event {
                    self.keep_baseline(i);
                }
            }
        }
        self.last_seq = record.seq;
        Ok(())
    }

    /// The reusable baseline recorded with `key`, if any: its verdict and
    /// where its commands ran.
    pub fn baseline_for(&self, key: &str) -> Option<&Baseline> {
        self.baselines.get(key)
    }

    /// Every reusable baseline, by key.
    pub(super) fn baselines(&self) -> &HashMap<String, Baseline> {
        &self.baselines
    }

    /// The state a checkpoint holds, with its indexes rebuilt; `None` when
    /// two jobs share an id.
    pub(super) fn restored(
        jobs: Vec<Job>,
        baselines: HashMap<String, Baseline>,
        repairs: Vec<(u64, u64)>,
        last_seq: u64,
    ) -> Option<State> {
        let mut state = State {
            baselines,
            repairs,
            last_seq,
            ..State::default()
        };
        for job in jobs {
            if state.index.contains_key(&job.id) {
                return None;
            }
            state.insert_restored(job);
        }
        Some(state)
    }

    /// Adds a job decoded from a checkpoint, after the jobs there are.
    pub(super) fn insert_restored(&mut self, job: Job) {
        let i = self.jobs.len();
        if job.lifecycle.open.is_some() {
            self.open.insert(i);
        }
        self.index.insert(job.id.clone(), i);
        self.jobs.push(job);
    }

    /// Keeps job `i`'s baseline as the one of its key, unless its key has
    /// one already.
    fn keep_baseline(&mut self, i: usize) {
        let Some(baseline) = self.jobs[i].baseline.as_ref().filter(|b| b.reusable()) else {
            return;
        };
        let Some(key) = &baseline.key else { return };
        if !self.baselines.contains_key(key) {
            self.baselines.insert(key.clone(), baseline.clone());
        }
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
        if let Event::LogRepaired(_) = event {
            return Ok(Target::Log);
        }
        let id = record.job.as_deref().ok_or(Illegal::MissingJob {
            event: event.type_name(),
        })?;
        let current = self.index.get(id).copied();
        match (event, current) {
            (
                Event::Enqueued(EnqueuedRecord {
                    max_attempts,
                    family,
                    manifest,
                    manifest_hash,
                    base_job,
                    provider,
                    repeat,
                }),
                None,
            ) => {
                let new = lifecycle::Enqueued {
                    max_attempts: *max_attempts,
                    family: family.as_ref(),
                    manifest: manifest.as_deref(),
                    manifest_hash: manifest_hash.as_ref(),
                    base_job: base_job.as_ref(),
                    provider: provider.as_ref(),
                    repeat: *repeat,
                };
                Ok(Target::New(Box::new(lifecycle::enqueued(id, record, new)?)))
            }
            (Event::Enqueued(_), Some(_)) => Err(Illegal::AlreadyExists(id.to_string())),
            (_, None) => Err(Illegal::UnknownJob(id.to_string())),
            (_, Some(i)) => Ok(Target::Existing(i)),
        }
    }
}

/// The log's writers ask the reducer before they append, and its readers
/// fold every record through it.
impl crate::log::Fold for State {
    type Refusal = Illegal;

    fn check(&self, record: &Record) -> Result<(), Illegal> {
        State::check(self, record)
    }

    fn apply(&mut self, record: &Record) -> Result<(), Illegal> {
        State::apply(self, record)
    }

    fn skip(&mut self, record: &Record) {
        self.last_seq = record.seq;
    }

    const CHECKPOINT: Option<&'static str> = Some("state.ckpt");

    /// Bumped whenever a change to [`State`] or what it holds would read
    /// an older checkpoint wrongly.
    const CHECKPOINT_FORMAT: u32 = 2;

    fn save(&self, out: &mut CheckpointWriter) -> bool {
        Sections::save(self, out)
    }

    fn restore(body: CheckpointBody) -> Option<State> {
        Sections::restore(&body)
    }
}

/// Where a record lands.
enum Target {
    Log,
    New(Box<Job>),
    Existing(usize),
}

/// The record a handler applies, and the checks every handler shares.
pub(super) struct At<'r> {
    /// The job the record names (target() found it by that id).
    pub id: &'r str,
    pub record: &'r Record,
}

impl At<'_> {
    pub(super) fn wrong_state(&self, action: &'static str, job: &Job) -> Illegal {
        Illegal::WrongState {
            job: job.id.clone(),
            action,
            state: job.lifecycle.state,
        }
    }

    /// The record's attempt number, which events inside an attempt need.
    pub(super) fn attempt(&self) -> Result<u32, Illegal> {
        self.record.attempt.ok_or_else(|| Illegal::MissingAttempt {
            job: self.id.to_string(),
            event: self.record.event.type_name(),
        })
    }

    /// The record's attempt, which must be the open one.
    pub(super) fn open_attempt<'j>(&self, job: &'j mut Job) -> Result<&'j mut Attempt, Illegal> {
        let n = self.attempt()?;
        let not_open = || Illegal::AttemptNotOpen {
            job: self.id.to_string(),
            attempt: n,
        };
        if job.lifecycle.open.is_none_or(|open| open.attempt != n) {
            return Err(not_open());
        }
        job.attempts
            .last_mut()
            .filter(|a| a.number == n)
            .ok_or_else(not_open)
    }

    pub(super) fn phase_twice(&self, attempt: u32, phase: &'static str) -> Illegal {
        Illegal::PhaseTwice {
            job: self.id.to_string(),
            attempt,
            phase,
        }
    }
}

/// Moves `job` through `record`'s transition. Every handler checks
/// everything before it changes anything, so an `Err` leaves the job as it
/// was.
fn transition(job: &mut Job, record: &Record) -> Result<(), Illegal> {
    let at = At {
        id: record.job.as_deref().unwrap_or_default(),
        record,
    };
    match &record.event {
        Event::Enqueued(_) | Event::LogRepaired(_) => {}
        Event::Replaced(event) => lifecycle::replaced(job, &at, event)?,
        Event::AttemptStarted(AttemptStartedRecord { pid, .. }) => {
            lifecycle::started(job, &at, *pid)?
        }
        Event::AttemptFinished(event) => lifecycle::finished(job, &at, event)?,
        Event::AttemptInterrupted(event) => lifecycle::interrupted(job, &at, event)?,
        Event::Cancelled {} => lifecycle::cancelled(job, &at)?,
        Event::Retried {} => lifecycle::retried(job, &at)?,
        Event::Setup(event) => phases::setup(job, &at, event)?,
        Event::Baseline(event) => phases::baseline(job, &at, event)?,
        Event::AgentFinished(event) => phases::agent_finished(job, &at, event)?,
        Event::Patch(event) => phases::patch(job, &at, event)?,
        Event::PatchRejected(PatchRejectedRecord { reason }) => {
            phases::patch_rejected(job, &at, reason)?
        }
        Event::Acceptance(event) => phases::acceptance(job, &at, event)?,
        Event::ModelCall(ModelCallRecord { step, call, .. }) => {
            steps::model_call(job, &at, *step, call)?
        }
        Event::Decision(event) => steps::decision(job, &at, event)?,
        Event::ProviderRetry(event) => steps::provider_retry(job, &at, event)?,
        Event::ProviderFailed(event) => steps::provider_failed(job, &at, event)?,
        Event::Verify(event) => steps::verify(job, &at, event)?,
        Event::Command(event) => steps::command(job, &at, event)?,
        Event::Edit(_) => steps::in_attempt(job, &at)?,
    }
    if !matches!(record.event, Event::ProviderRetry(_)) {
        // Anything else the job does ends a wait for its provider.
        job.waiting = None;
    }
    job.last_event = Cow::Borrowed(record.event.type_name());
    job.last_seq = record.seq;
    job.updated_ms = record.ts_ms;
    keep_last(job, record);
    Ok(())
}

/// Keeps `record` as the job's last event that says something (in place:
/// a job's box is allocated once); a manifest, new or replaced, says
/// nothing (and is not copied again).
fn keep_last(job: &mut Job, record: &Record) {
    if let Event::Enqueued(_) | Event::Replaced(_) = record.event {
        job.last = None;
        return;
    }
    let last = Record {
        seq: record.seq,
        ts_ms: record.ts_ms,
        job: None,
        attempt: record.attempt,
        event: record.event.clone(),
    };
    match &mut job.last {
        Some(kept) => **kept = last,
        None => job.last = Some(Box::new(last)),
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
#[path = "reducer_tests/mod.rs"]
mod tests;
