//! The reducer's tests: every legal and illegal lifecycle transition
//! (`lifecycle.rs`), what an attempt's phases record (`phases.rs`), and the
//! baselines found by their key (`baselines.rs`), on one small log harness.

mod baselines;
mod lifecycle;
mod phases;

use super::*;
use crate::protocol::{AttemptFinishedRecord, AttemptStartedRecord};
use crate::protocol::{FailureKind, Limits, ManifestSnapshot, Outcome};
use crate::state::{OpenAttempt, Phase};

struct Log {
    state: State,
    seq: u64,
}

impl Log {
    fn new() -> Self {
        Log {
            state: State::default(),
            seq: 0,
        }
    }

    fn record(&mut self, job: &str, attempt: Option<u32>, event: Event) -> Record {
        self.seq += 1;
        Record {
            seq: self.seq,
            ts_ms: self.seq * 10,
            job: Some(job.into()),
            attempt,
            event,
        }
    }

    fn ok(&mut self, job: &str, attempt: Option<u32>, event: Event) -> &Job {
        let r = self.record(job, attempt, event);
        self.state.apply(&r).unwrap_or_else(|e| panic!("{e}"));
        self.state.job(job).unwrap()
    }

    fn err(&mut self, job: &str, attempt: Option<u32>, event: Event) -> Illegal {
        let before = format!("{:?}", self.state.jobs());
        let r = self.record(job, attempt, event);
        let e = self.state.apply(&r).unwrap_err();
        assert_eq!(
            before,
            format!("{:?}", self.state.jobs()),
            "illegal event changed state"
        );
        e
    }

    fn enqueue(&mut self, job: &str, max: u32) -> &Job {
        self.ok(job, None, Event::bare_enqueued(max))
    }
    fn start(&mut self, job: &str, n: u32) -> &Job {
        self.ok(
            job,
            Some(n),
            Event::AttemptStarted(AttemptStartedRecord {
                pid: 100 + n,
                agent: None,
            }),
        )
    }
    fn finish(&mut self, job: &str, n: u32, outcome: Outcome, kind: Option<FailureKind>) -> &Job {
        self.ok(
            job,
            Some(n),
            Event::AttemptFinished(AttemptFinishedRecord {
                outcome,
                failure_kind: kind,
                integrity: None,
            }),
        )
    }
}

fn start(n: u32) -> Event {
    Event::AttemptStarted(AttemptStartedRecord {
        pid: n,
        agent: None,
    })
}
fn succeeded() -> Event {
    Event::AttemptFinished(AttemptFinishedRecord {
        outcome: Outcome::Succeeded,
        failure_kind: None,
        integrity: None,
    })
}
