//! Job-scoped caches under `DATA/cache/<key>/`: what a job's trusted
//! `[setup]` brought in (its own `CARGO_HOME`, a Python site dir...) and
//! the dependency build layer harvested from the trusted baseline build.
//!
//! Owns the key that names a job's cache (`key.rs`), the layout, lock and
//! completion markers (`job_cache.rs`) and the dependency layer: which build
//! outputs are dependencies', and copying them out of a trusted build and
//! into each later phase's own target dir (`layer.rs`).
//!
//! Never runs a command, and never hands a command a writable path into a
//! cache outside the trusted setup: later phases read the setup cache
//! through a read-only grant and get the dependency layer as a private copy
//! (never a hard link), so nothing an untrusted phase does reaches a phase
//! after it.

mod job_cache;
mod key;
mod layer;

pub use job_cache::{CacheError, JobCache, SetupMarker};
pub use key::{cache_key, tree_digest};
pub use layer::{LayerError, dependency_hashes, harvest_layer, is_layer_entry, seed_layer};
