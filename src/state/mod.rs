//! Job state as a pure fold over log records. No I/O: the reducer is the one
//! place that decides which lifecycle transitions are legal.

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
mod wording;

pub use attempt::{AgentEnd, Attempt, Causes, Patch, Phase, RunEnd, Step};
pub use describe::{NOT_VERIFIED, Said, describe, resources_words, verdict_summary};
pub use detail::{Call, Details, Entry};
pub use job::{
    Baseline, Job, JobState, Lifecycle, OpenAttempt, Progress, TimeSpent, Usage, Waiting,
};
pub use reducer::{Illegal, State, replay};
pub use summary::{Summaries, Summary};
pub use wording::{BaselineVerdict, baseline_verdict, baseline_wording};

/// A data dir's log as a reader sees it, replayed through the reducer.
pub type Snapshot = crate::log::Snapshot<State>;
