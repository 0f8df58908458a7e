//! Failures that stop a runner, as opposed to verdicts about a job.

use crate::agent::AgentError;
use crate::lifecycle::StoreError;
use crate::manifest::ManifestError;

/// Failures that stop a runner (not verdicts about the job).
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no job with id {0:?}")]
    UnknownJob(String),
    #[error("job {0:?} has no manifest (a bare lifecycle task); enqueue it with --job FILE")]
    NoManifest(String),
    #[error("job {job:?}: stored manifest is unusable: {source}")]
    Manifest { job: String, source: ManifestError },
    #[error("failed to record an event: {0}")]
    Record(#[source] crate::agent::RecordError),
    #[error("job {job:?}: {message}")]
    Setup { job: String, message: String },
    /// A fault of the infrastructure met inside a phase (an unreachable
    /// provider): not the model's doing.
    #[error("job {job:?}: {cause}")]
    Infra { job: String, cause: String },
}

impl From<AgentError> for RunError {
    fn from(e: AgentError) -> Self {
        match e {
            AgentError::Record(m) => RunError::Record(m),
        }
    }
}
