//! Job state as a pure fold over log records: the one reading of the log. No
//! I/O: the reducer is the one place that decides which lifecycle transitions
//! are legal.
//!
//! - `reducer.rs`: the summary fold and its checks, and the reusable baselines
//!   by key; its handlers per event group are `lifecycle.rs` (enqueued and
//!   replaced jobs, attempts, cancels, retries), `phases.rs` (setup, baseline,
//!   agent end, patch, acceptance) and `steps.rs` (what happens inside an agent
//!   phase).
//! - `job.rs`: a job's lifecycle, baseline, usage and times.
//! - `attempt.rs`: a typed attempt with its `Phase`, which says what the runner
//!   does next, its causes and integrity record.
//! - `cause.rs`: the failure cause: the reason of the final verdict.
//! - `summary.rs`: a job's status row, and the fold that reads the rows from
//!   the checkpoint and decodes a job only when a later record needs it.
//! - `checkpoint.rs`: how the state lays itself out in the writers' checkpoint.
//! - `detail.rs`: the detail fold, computed on demand: every job's timeline.
//! - `describe.rs`: the one wording of every event, used by the report
//!   timeline, progress, `status` and `watch`.
//! - `wording.rs`: how facts of the log read, such as a baseline's verdict.
//! - `tally.rs`: a job's outcome and the one count of outcomes every view
//!   reads.
//! - `reducer_tests/`: the reducer's tests.

mod attempt;
mod cause;
mod checkpoint;
mod describe;
mod detail;
mod job;
mod lifecycle;
mod phases;
mod reducer;
mod steps;
mod summary;
mod tally;
mod wording;

pub use attempt::{AgentEnd, Attempt, Causes, Patch, Phase, RunEnd, Step};
pub use describe::{NOT_VERIFIED, Said, describe, resources_words, verdict_summary};
pub use detail::{Details, Entry};
pub use job::{
    Baseline, Job, JobState, Lifecycle, OpenAttempt, Progress, TimeSpent, Usage, Waiting,
};
pub use reducer::{Illegal, State, replay};
pub use summary::{Summaries, Summary};
pub use tally::{JobOutcome, Tally};
pub use wording::{BaselineVerdict, baseline_verdict, baseline_wording};

/// A data dir's log as a reader sees it, replayed through the reducer.
pub type Snapshot = crate::log::Snapshot<State>;
