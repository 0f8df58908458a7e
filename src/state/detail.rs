//! The detail fold, computed on demand: every job's timeline, one entry
//! per event in the words of [`describe`], from the same replay as the
//! summary state. A run of an attempt cut short by a fault and started
//! over leaves only its start and its interruption: the new run replaces
//! what it did. A replaced manifest starts the timeline again.

use std::collections::HashMap;

use super::attempt::Phase;
use super::describe::{Said, describe, integrity_evidence};
use super::reducer::State;
use crate::protocol::{CallFigures, EntryKind, Event, ModelCall, Record, Resources};
use crate::protocol::{CommandRecord, DecisionRecord};

/// One entry of a job's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub attempt: u32,
    /// Milliseconds since the job's first attempt started.
    pub at_ms: u64,
    /// When it was recorded, milliseconds since the Unix epoch.
    pub ts_ms: u64,
    pub said: Said,
    /// For a `decision`: the provider call's figures, for the views that
    /// show each step's usage (the trajectory exports). Boxed, as is
    /// `resources`: most entries have neither, and a sweep holds them all.
    pub call: Option<Box<ModelCall>>,
    /// For a `command`: what it cost the machine, where it was told.
    pub resources: Option<Box<Resources>>,
}

/// The call of a `decision` event: its own figures (format 2), else those
/// of the model call that brought it (`last`).
fn call_of(event: &Event, last: Option<&CallFigures>) -> Option<ModelCall> {
    match event {
        Event::Decision(DecisionRecord {
            kind, reason, call, ..
        }) => {
            let figures = call.as_ref().or(last)?;
            Some(ModelCall {
                kind: *kind,
                reason: reason.clone(),
                reply_bytes: figures.reply_bytes,
                reply_hash: figures.reply_hash.clone(),
                input_tokens: figures.input_tokens,
                cached_input_tokens: figures.cached_input_tokens,
                output_tokens: figures.output_tokens,
                latency_ms: figures.latency_ms,
            })
        }
        _ => None,
    }
}

/// The summary state of a log and the timeline of each of its jobs.
#[derive(Debug, Default)]
pub struct Details {
    pub state: State,
    timelines: HashMap<String, Vec<Entry>>,
}

impl Details {
    /// Folds every record in turn (a record the reducer refuses is left
    /// out, as every reader leaves it out).
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Record>) -> Details {
        let mut details = Details::default();
        for record in records {
            details.apply(record);
        }
        details
    }

    /// The timeline of job `id` (empty for a job the log does not hold).
    pub fn timeline(&self, id: &str) -> &[Entry] {
        self.timelines.get(id).map_or(&[], Vec::as_slice)
    }

    /// Folds one more record (one the reducer refuses is left out).
    pub fn apply(&mut self, record: &Record) {
        if self.state.apply(record).is_err() {
            self.state.last_seq = record.seq;
            return;
        }
        let Some(job) = record.job.as_deref().and_then(|id| self.state.job(id)) else {
            return;
        };
        let timeline = self.timelines.entry(job.id.clone()).or_default();
        let n = record.attempt.unwrap_or(0);
        match &record.event {
            Event::Replaced(_) => timeline.clear(),
            Event::AttemptStarted(_) => {
                let restarted = job
                    .attempt_numbered(n)
                    .is_some_and(|a| !a.runs.is_empty() && a.phase == Phase::Agent);
                if restarted {
                    // The attempt starts over after a fault: the new run
                    // replaces what the cut-short one did, whose start and
                    // interruption stay as markers.
                    timeline.retain(|e| {
                        e.attempt != n
                            || matches!(e.said.kind, EntryKind::Attempt | EntryKind::Interrupted)
                    });
                }
            }
            _ => {}
        }
        let at_ms = job
            .first_started_ms
            .map_or(0, |start| record.ts_ms.saturating_sub(start));
        let entry = |said, call, resources| Entry {
            attempt: n,
            at_ms,
            ts_ms: record.ts_ms,
            said,
            call,
            resources,
        };
        for said in integrity_evidence(record) {
            timeline.push(entry(said, None, None));
        }
        if let Some(said) = describe(record, job) {
            let resources = match &record.event {
                Event::Command(CommandRecord { resources, .. }) => *resources,
                _ => None,
            };
            let last = job.attempt_numbered(n).and_then(|a| a.last_call.as_ref());
            timeline.push(entry(
                said,
                call_of(&record.event, last).map(Box::new),
                resources.map(Box::new),
            ));
        }
    }
}

/// Readers fold a log straight into the details, a chunk at a time, so a
/// report never holds every record of a big log at once. A record the
/// reducer refuses is left out here, as every reader leaves it out.
impl crate::log::Fold for Details {
    type Refusal = super::reducer::Illegal;

    fn check(&self, record: &Record) -> Result<(), Self::Refusal> {
        self.state.check(record)
    }

    fn apply(&mut self, record: &Record) -> Result<(), Self::Refusal> {
        Details::apply(self, record);
        Ok(())
    }
}
