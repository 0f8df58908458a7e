//! One line of the log as its readers see it: an [`Event`] with its frame
//! (sequence number, time, job, attempt). How it is written and checked on
//! disk is the log's.

use serde::{Deserialize, Serialize};

use super::event::Event;

/// One record of the log. Its serde form is not the log's line (the log
/// owns that, `log/record.rs`): it is how a checkpoint carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Strictly increasing across the log, starting at 1.
    pub seq: u64,
    /// Milliseconds since the Unix epoch when the writer appended it.
    pub ts_ms: u64,
    /// The job the event belongs to (absent for log-level events).
    pub job: Option<String>,
    /// The attempt the event belongs to, 1-based (absent outside attempts).
    pub attempt: Option<u32>,
    pub event: Event,
}
