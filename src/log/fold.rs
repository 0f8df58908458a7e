//! What the log asks before it appends and tells as it reads: a fold of its
//! records. The log never decides what is legal; the fold it is given (the
//! state reducer) does, and the log only writes what the fold accepts.

use super::checkpoint::{CheckpointBody, CheckpointWriter};
use crate::protocol::Record;

/// A fold of the log's records, which also says whether a record may be
/// appended.
pub trait Fold: Default {
    /// Why a record cannot apply.
    type Refusal: std::error::Error + Send + Sync + 'static;

    /// Whether `record` could apply now, without applying it.
    fn check(&self, record: &Record) -> Result<(), Self::Refusal>;

    /// Applies `record`, or says why not and leaves the fold as it was.
    fn apply(&mut self, record: &Record) -> Result<(), Self::Refusal>;

    /// A record the fold refused that the log holds all the same (written
    /// by something that skipped the checks): readers go on past it.
    fn skip(&mut self, _record: &Record) {}

    /// The file beside the log where writers keep a checkpoint of this
    /// fold (`log/checkpoint.rs`); `None` keeps none.
    const CHECKPOINT: Option<&'static str> = None;

    /// The version of [`Fold::save`]'s encoding: a checkpoint of another
    /// version is not read.
    const CHECKPOINT_FORMAT: u32 = 0;

    /// Writes the fold into its checkpoint's sections; false writes no
    /// checkpoint.
    fn save(&self, _out: &mut CheckpointWriter) -> bool {
        false
    }

    /// Whether a fold started from a checkpoint found part of it unreadable
    /// later on (a fold that reads its checkpoint lazily): the reader then
    /// folds the whole log instead.
    fn incomplete(&self) -> bool {
        false
    }

    /// The fold [`Fold::save`] wrote, or `None` when `body` is not one.
    fn restore(_body: CheckpointBody) -> Option<Self> {
        None
    }
}
