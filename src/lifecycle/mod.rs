//! Job lifecycle on a data directory: ids, paths, leases and the operations
//! (enqueue, claim, finish, cancel, retry) that append to the log.
//!
//! - `store.rs`: the operations, each one transaction on the log, and reaping
//!   interrupted attempts (running without a live lease) first.
//! - `lease.rs`: attempt leases, `flock` locks the kernel drops when the runner
//!   dies.
//! - `data_dir.rs`: where things live under a data dir.
//! - `cancel_watch.rs`: noticing a cancel written by another process.
//! - `keep.rs`: what `--keep` and `gc` remove of finished attempts.
//!
//! It decides nothing itself (the state reducer does) and never prints.

mod cancel_watch;
mod data_dir;
mod keep;
mod lease;
mod store;

pub use cancel_watch::{CANCEL_POLL_INTERVAL, watch_for_cancel};
pub use data_dir::DataDir;
pub use keep::{
    Keep, apply as keep_apply, attempt_dirs, collect as collect_garbage, collect_caches,
    collect_some, disk_usage,
};
pub use lease::{Lease, LeaseError, is_live, stale_attempts};
pub use store::{Claim, EnqueueResult, NewJob, Store, StoreError};
