//! Caches under `DATA/cache/<key>/`: what a job's trusted `[setup]`
//! brought in (its own `CARGO_HOME`, a Python site dir, a `node_modules`)
//! and the dependency build layer harvested from the trusted baseline
//! build. A job whose language the table knows shares its cache with every
//! job whose setup inputs say the same (`inputs.rs`); others keep a cache
//! of their own.
//!
//! Owns the key that names a cache (`key.rs`), the setup's declared inputs
//! (`inputs.rs`), the layout, lock and completion markers (`job_cache.rs`),
//! the caches no job refers to (`unused.rs`, for `gc`), and the dependency
//! layer: which build outputs are dependencies', and copying them out of a
//! trusted build and into each later phase's own target dir (`layer.rs`).
//!
//! Never runs a command, and never hands a command a writable path into a
//! cache outside the trusted setup: later phases read the setup cache
//! through a read-only grant and get the dependency layer as a private copy
//! (never a hard link), so nothing an untrusted phase does reaches a phase
//! after it.

mod inputs;
mod job_cache;
mod key;
mod layer;
mod unused;

pub(crate) use job_cache::{CacheError, JobCache, SetupMarker};
pub(crate) use key::{cache_key, shared_inputs, tree_digest};
pub(crate) use layer::{LayerError, dependency_hashes, harvest_layer, seed_layer};
pub(crate) use unused::{Removed, remove_unused};
