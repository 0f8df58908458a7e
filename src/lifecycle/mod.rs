//! Job lifecycle on a data directory: ids, paths, leases and the operations
//! (enqueue, claim, finish, cancel, retry) that append to the log. It decides
//! nothing itself (the state reducer does) and never prints.

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
