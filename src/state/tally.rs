//! The one count of how jobs ended, in the log's words.
//!
//! [`JobOutcome`] is a job's [`JobState`] as a result: `succeeded`,
//! `failed`, `cancelled`, or `pending` (queued or running). [`Tally`]
//! counts outcomes; the batch summary, every report, the viewer and
//! `check` read it, so a figure such as "3 of 4 succeeded" is counted in
//! one place.

use serde::{Deserialize, Serialize};

use super::job::JobState;

/// How a job ended, or that it has not yet.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum JobOutcome {
    /// Finished and judged good (acceptance passed, or verify when there
    /// is none). Reports before schema 8 said `accepted`.
    #[serde(alias = "accepted")]
    Succeeded,
    /// Finished without succeeding; see the failure kind.
    Failed,
    /// Cancelled by a user before finishing.
    Cancelled,
    /// Not finished yet: queued, running or awaiting retry.
    #[default]
    Pending,
}

impl JobOutcome {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the job has finished one way or another.
    pub fn is_terminal(self) -> bool {
        !matches!(self, JobOutcome::Pending)
    }
}

impl From<JobState> for JobOutcome {
    fn from(state: JobState) -> JobOutcome {
        match state {
            JobState::Succeeded => JobOutcome::Succeeded,
            JobState::Failed => JobOutcome::Failed,
            JobState::Cancelled => JobOutcome::Cancelled,
            JobState::Queued | JobState::Running => JobOutcome::Pending,
        }
    }
}

/// How many jobs ended which way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub jobs: u32,
    /// Reports before schema 8 said `accepted`.
    #[serde(alias = "accepted")]
    pub succeeded: u32,
    pub failed: u32,
    pub cancelled: u32,
    pub pending: u32,
}

impl Tally {
    /// The tally of `outcomes`.
    pub fn of(outcomes: impl IntoIterator<Item = JobOutcome>) -> Tally {
        let mut tally = Tally::default();
        for outcome in outcomes {
            tally.add(outcome);
        }
        tally
    }

    /// Counts one more job.
    pub fn add(&mut self, outcome: JobOutcome) {
        self.jobs = self.jobs.saturating_add(1);
        let count = match outcome {
            JobOutcome::Succeeded => &mut self.succeeded,
            JobOutcome::Failed => &mut self.failed,
            JobOutcome::Cancelled => &mut self.cancelled,
            JobOutcome::Pending => &mut self.pending,
        };
        *count = count.saturating_add(1);
    }

    /// Jobs that have ended one way or another.
    pub fn finished(&self) -> u32 {
        self.jobs.saturating_sub(self.pending)
    }

    /// `succeeded / finished`; `None` while nothing has finished.
    pub fn pass_rate(&self) -> Option<f64> {
        let finished = self.finished();
        (finished > 0).then(|| f64::from(self.succeeded) / f64::from(finished))
    }

    /// Whether every job counted succeeded (true of none).
    pub fn all_succeeded(&self) -> bool {
        self.succeeded == self.jobs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_is_counted_once_and_queued_and_running_are_pending() {
        let states = [
            JobState::Queued,
            JobState::Running,
            JobState::Succeeded,
            JobState::Succeeded,
            JobState::Failed,
            JobState::Cancelled,
        ];
        let t = Tally::of(states.into_iter().map(JobOutcome::from));
        assert_eq!(
            (t.jobs, t.succeeded, t.failed, t.cancelled, t.pending),
            (6, 2, 1, 1, 2)
        );
        assert_eq!(t.finished(), 4);
        assert_eq!(t.pass_rate(), Some(0.5));
        assert!(!t.all_succeeded());
    }

    #[test]
    fn nothing_finished_has_no_rate_and_nothing_at_all_all_succeeded() {
        let t = Tally::of([JobOutcome::Pending]);
        assert_eq!(t.pass_rate(), None);
        assert!(Tally::default().all_succeeded());
    }

    #[test]
    fn older_reports_words_still_read() {
        let t: Tally =
            serde_json::from_str(r#"{"jobs":2,"accepted":1,"failed":1,"cancelled":0,"pending":0}"#)
                .unwrap();
        assert_eq!(t.succeeded, 1);
        let o: JobOutcome = serde_json::from_str(r#""accepted""#).unwrap();
        assert_eq!(o, JobOutcome::Succeeded);
        assert_eq!(serde_json::to_string(&o).unwrap(), r#""succeeded""#);
    }
}
