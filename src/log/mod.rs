//! The append-only event log: the single source of truth.
//!
//! Owns the on-disk format (versioned JSON lines with a CRC32 each), the
//! writer lock and torn-tail repair, and read-only replay. It never decides
//! what is legal: the state reducer does, and the writer asks it before every
//! append. Nothing here prints.

mod decode;
mod error;
mod event;
mod follow;
mod integrity;
mod reader;
mod record;
mod scan;
mod writer;

pub use error::LogError;
pub use event::{
    CheckResult, CommandFor, DecisionKind, Event, FailureKind, Outcome, TestRuns, VerifyTrigger,
};
pub use follow::Follower;
pub use integrity::{CanaryBaseline, CanaryCheck, Integrity, SIGNALS_KEPT, Signal, SignalKind};
pub use reader::{Snapshot, read_records, read_snapshot};
pub use record::{DecodeError, FORMAT_VERSION, Record};
pub use scan::{CorruptReason, Corruption, Scan, TornTail, scan};
pub use writer::{LogWriter, Tx, now_ms};
