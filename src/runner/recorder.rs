//! An attempt's events, appended to the store as the agent loop records
//! them, and what the state says they add up to.

use crate::agent::{RecordError, Recorder, Used};
use crate::lifecycle::Store;
use crate::protocol::Event;

/// Appends the attempt's events to the store.
pub(super) struct StoreRecorder<'a> {
    pub(super) store: &'a mut Store,
    pub(super) job: String,
    pub(super) attempt: u32,
}

impl Recorder for StoreRecorder<'_> {
    fn record(&mut self, event: Event) -> Result<(), RecordError> {
        self.store
            .append(Some(&self.job), Some(self.attempt), event)
            .map(|_| ())
            .map_err(|e| RecordError(Box::new(e)))
    }

    fn used(&self) -> Used {
        self.store
            .state()
            .job(&self.job)
            .and_then(|job| job.attempt_numbered(self.attempt))
            .map_or(Used::default(), |attempt| Used {
                steps: attempt.steps,
                tokens: attempt.tokens,
            })
    }
}
