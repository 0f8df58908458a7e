//! What the log asks before it appends and tells as it reads: a fold of its
//! records. The log never decides what is legal; the fold it is given (the
//! state reducer) does, and the log only writes what the fold accepts.

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
}
