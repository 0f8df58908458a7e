//! What `status` and `watch` show of each job, and the fold that gives it
//! from the writers' checkpoint without decoding every job.
//!
//! [`Summary::of`] is the one reading of a [`Job`] into its status row.
//! The checkpoint keeps every job's summary in a section of its own
//! (`checkpoint.rs`), so [`Summaries`] reads that section and decodes a
//! job's whole state only when a record after the checkpoint is about it;
//! it folds those records with the same reducer as [`State`]. Folded from
//! the start of the log (no checkpoint), every job is decoded, as
//! [`State`] would be.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::checkpoint::{Located, Sections};
use super::describe::describe;
use super::job::{Job, JobState, OpenAttempt};
use super::reducer::{Illegal, State};
use crate::log::CheckpointBody;
use crate::protocol::{CheckResult, DecisionKind, FailureKind, Record};

/// One job as `status` shows it (without what only the data dir's lease
/// files say: whether its runner is gone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub id: String,
    /// The job's family, when it is not its id (it seldom is, for jobs
    /// made in bulk: each row holds its id once).
    pub family: Option<String>,
    pub state: JobState,
    /// Attempts started under the current manifest.
    pub attempts_used: u32,
    pub max_attempts: u32,
    /// The number of the current or last attempt (see [`Job::highest_attempt`]).
    pub attempt_number: u32,
    /// Steps of every attempt.
    pub steps: u32,
    #[serde(deserialize_with = "super::job::event_tag")]
    pub last_event: Cow<'static, str>,
    /// The last decision of the current or last attempt.
    pub last_step: Option<DecisionKind>,
    pub failure_kind: Option<FailureKind>,
    /// Why a failed job failed ([`Job::failure_cause`]).
    pub cause: Option<String>,
    /// The baseline's result: `failed` when the pristine source fails.
    pub baseline: Option<CheckResult>,
    pub acceptance: Option<CheckResult>,
    /// Why the job waits for its provider, and the retry it waits for.
    pub waiting: Option<(String, u32)>,
    /// What a running job did last, in the words every view uses.
    pub last_said: Option<String>,
    /// The attempt a runner holds, or is supposed to.
    pub open: Option<OpenAttempt>,
}

impl Summary {
    /// The job's family (its id unless it was given one).
    pub fn family(&self) -> &str {
        self.family.as_deref().unwrap_or(&self.id)
    }

    pub fn of(job: &Job) -> Summary {
        let attempt = job.attempt();
        Summary {
            id: job.id.clone(),
            family: (job.family != job.id).then(|| job.family.clone()),
            state: job.lifecycle.state,
            attempts_used: job.attempts_used(),
            max_attempts: job.lifecycle.max_attempts,
            attempt_number: job.lifecycle.attempts_started,
            steps: job.total_steps(),
            last_event: job.last_event.clone(),
            last_step: attempt.and_then(|a| a.last_action),
            failure_kind: job.lifecycle.failure_kind,
            cause: job.failure_cause(),
            baseline: job.baseline.as_ref().map(|b| b.result),
            acceptance: attempt.and_then(|a| a.phase.judged()).map(|(r, _)| r),
            waiting: job.waiting.as_ref().map(|w| (w.reason.clone(), w.retries)),
            last_said: job
                .last
                .as_deref()
                .filter(|_| job.lifecycle.state == JobState::Running)
                .and_then(|record| describe(record, job))
                .map(|said| said.text),
            open: job.lifecycle.open,
        }
    }
}

/// What the checkpoint says before its jobs: every job's summary, in the
/// order they were enqueued, and what the log says of itself.
#[derive(Debug, Default)]
pub(super) struct Head {
    pub rows: Vec<Summary>,
    pub repairs: Vec<(u64, u64)>,
    pub last_seq: u64,
}

/// The summaries of every job: a fold of the log that starts from the
/// writers' checkpoint and decodes a job only when a later record is about
/// it. Readers only: writers fold [`State`].
#[derive(Debug, Default)]
pub struct Summaries {
    /// The checkpoint's summaries; the jobs it covers are its first rows.
    head: Head,
    /// Where the checkpointed jobs are, to decode one on demand.
    body: Option<(CheckpointBody, Located)>,
    /// Position of each checkpointed job, built at the first record about
    /// a job (so it is there whenever `later` holds a job and there is a
    /// checkpoint).
    positions: Option<HashMap<String, usize>>,
    /// The jobs records after the checkpoint are about: those decoded from
    /// it, then those enqueued since, in order (every job, without a
    /// checkpoint).
    later: State,
    /// Whether a checkpointed job would not decode: the fold is then not
    /// whole, and the reader folds the whole log instead.
    undecodable: bool,
}

impl Summaries {
    /// Every job's summary, in the order they were enqueued.
    pub fn rows(&self) -> impl Iterator<Item = Cow<'_, Summary>> + '_ {
        let checkpointed = self.head.rows.iter().map(|row| {
            self.later
                .job(&row.id)
                .map_or(Cow::Borrowed(row), |job| Cow::Owned(Summary::of(job)))
        });
        checkpointed.chain(self.added().map(|job| Cow::Owned(Summary::of(job))))
    }

    /// Every job's summary, in the order they were enqueued, taken out of
    /// the fold (the checkpoint's rows are not copied).
    pub fn into_rows(mut self) -> Vec<Summary> {
        let mut rows = std::mem::take(&mut self.head.rows);
        for row in &mut rows {
            if let Some(job) = self.later.job(&row.id) {
                *row = Summary::of(job);
            }
        }
        rows.extend(self.added().map(Summary::of));
        rows
    }

    /// `(line, dropped_bytes)` of each torn tail a writer cut off.
    pub fn repairs(&self) -> impl Iterator<Item = &(u64, u64)> {
        self.head.repairs.iter().chain(&self.later.repairs)
    }

    /// The jobs enqueued after the checkpoint, in order.
    fn added(&self) -> impl Iterator<Item = &Job> {
        let checkpointed = |id: &str| self.positions.as_ref().is_some_and(|p| p.contains_key(id));
        self.later
            .jobs()
            .iter()
            .filter(move |job| !checkpointed(&job.id))
    }

    /// Decodes checkpointed job `id` into `later`, if it is one and is not
    /// there yet.
    fn decode(&mut self, id: &str) {
        let Some((body, located)) = &self.body else {
            return;
        };
        let rows = &self.head.rows;
        let positions = self.positions.get_or_insert_with(|| {
            (rows.iter().enumerate())
                .map(|(i, row)| (row.id.clone(), i))
                .collect()
        });
        if self.later.job(id).is_some() {
            return;
        }
        let Some(&i) = positions.get(id) else { return };
        match Sections::job(body, *located, i) {
            Some(job) => self.later.insert_restored(job),
            None => self.undecodable = true,
        }
    }
}

impl crate::log::Fold for Summaries {
    type Refusal = Illegal;

    /// Readers never ask; answered as [`State`] would, for the jobs folded
    /// so far.
    fn check(&self, record: &Record) -> Result<(), Illegal> {
        self.later.check(record)
    }

    fn apply(&mut self, record: &Record) -> Result<(), Illegal> {
        if let Some(id) = record.job.as_deref() {
            self.decode(id);
        }
        self.later.apply(record)
    }

    fn skip(&mut self, record: &Record) {
        self.later.last_seq = record.seq;
    }

    fn incomplete(&self) -> bool {
        self.undecodable
    }

    const CHECKPOINT: Option<&'static str> = State::CHECKPOINT;
    const CHECKPOINT_FORMAT: u32 = State::CHECKPOINT_FORMAT;

    fn restore(body: CheckpointBody) -> Option<Summaries> {
        let (head, located) = Sections::head(&body)?;
        let mut later = State::default();
        later.last_seq = head.last_seq;
        Some(Summaries {
            later,
            head,
            body: Some((body, located)),
            ..Summaries::default()
        })
    }
}
