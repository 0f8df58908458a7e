//! The append-only event log: the single source of truth.
//!
//! Owns the on-disk format (versioned JSON lines with a CRC32 each), the writer
//! lock and torn-tail repair, and read-only replay.
//!
//! - `record.rs`: the frame and its CRC.
//! - `decode.rs`: one-pass decoding of a record line.
//! - `scan.rs`: the pure split of raw bytes into whole, torn and corrupt
//!   records.
//! - `writer.rs`: the only code that appends: lock, catch-up, repair, append,
//!   fsync.
//! - `reader.rs`: read-only replay, from the checkpoint when it holds.
//! - `checkpoint.rs`: the writers' checkpoint of a fold: its header, the checks
//!   against the log, sections with their CRCs.
//! - `follow.rs`: tailing from an offset, without the writer lock.
//! - `fold.rs`: the [`Fold`] the log is given.
//! - `error.rs`: failures reading or appending.
//!
//! It never decides what is legal and never interprets an event: it is given a
//! [`Fold`] (the state reducer), asks it before every append and feeds it every
//! record it reads. Nothing here prints.

mod checkpoint;
mod decode;
mod error;
mod fold;
mod follow;
mod reader;
mod record;
mod scan;
mod writer;

pub use checkpoint::{AllSections, CheckpointBody, CheckpointWriter};
pub use error::{AppendError, LogError};
pub use fold::Fold;
pub use follow::Follower;
pub use reader::{Snapshot, read_records, read_snapshot, read_snapshot_full};
pub use record::{DecodeError, FORMAT_VERSION};
pub use scan::{CorruptReason, Corruption, Scan, TornTail, scan};
pub use writer::{LogWriter, Tx, now_ms};
