//! Caches under `DATA/cache/<key>/`: what a job's trusted `[setup]` brought in
//! (its own `CARGO_HOME`, a Python site dir, a `node_modules`) and the
//! dependency build layer harvested from the trusted baseline build. A job
//! whose language the table knows shares its cache with every job whose setup
//! inputs say the same; others keep a cache of their own.
//!
//! - `key.rs`: the key that names a cache: shared — the language, its setup
//!   inputs as it reads them, `[setup]`, `[env]`, sandbox — for a job whose
//!   language the table knows, else job-scoped — job id, source and acceptance
//!   trees, `[setup]`, `[env]`, acceptance command, sandbox.
//! - `inputs.rs`: a setup's declared inputs and the copy of them it runs on.
//! - `job_cache.rs`: the layout, lock and completion markers.
//! - `unused.rs`: the caches no job refers to, which `gc` removes.
//! - `layer.rs`: the dependency build layer: which outputs are dependencies'
//!   (from cargo's messages), harvesting them from a trusted build and copying
//!   them into each later phase's own target dir.
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
