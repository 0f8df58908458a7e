//! The protocol: what the event log records and everything its events
//! carry — the event vocabulary and its kinds, job ids, the manifest as the
//! log keeps it, prices, test inventories and verdicts, and the quantities
//! (durations, byte sizes) they are written in.
//!
//! A leaf: it depends on no other module of the crate, so every layer can
//! name an event without depending on the log's I/O or on the reducer that
//! interprets it. It holds data and the checks that make a value valid
//! (a job id), never I/O or policy.

pub mod units;

mod event;
mod job_id;
mod price;
mod record;
mod verdict;

pub use event::{
    CheckResult, CommandFor, DecisionKind, Event, FailureKind, Outcome, TestRuns, VerifyTrigger,
};
pub use job_id::{IdError, MAX_ID_LEN, instance_id, validate_id, validate_instance_id};
pub use price::{Price, add_usd};
pub use record::Record;
pub use verdict::{Inventory, InventorySource, Verdict};
