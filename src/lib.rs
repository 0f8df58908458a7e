//! agent-runtime: runs automated coding tasks with language models on a
//! short leash. See `docs/architecture.md` for the module map.
//!
//! The library is the binary's: everything is `pub(crate)` unless the
//! binary, the integration tests or the benchmarks need it, and the
//! `unreachable_pub` lint keeps it so. The public surface:
//!
//! - [`cli::main`], the binary's entry point;
//! - the log and its reading: [`log`] (writing and replaying `events.log`),
//!   [`protocol`] (what it records), [`state`] (the one fold of it),
//!   [`lifecycle`] (a data dir's store and leases);
//! - what tests check directly: [`report`] (the report model and its
//!   statistics), [`verdict`] (per-test verdicts and excerpts), [`table`]
//!   (display widths);
//! - the executor, the sandbox, the attempt's zygote and the cancel token,
//!   from the sandbox crate: `exec`, `sandbox`, `zygote`, `cancel`.

#![warn(unreachable_pub)]

pub(crate) mod agent;
pub(crate) mod agents;
pub(crate) mod batch;
pub(crate) mod beneath;
pub(crate) mod bridge;
pub(crate) mod cache;
pub(crate) mod check;
pub mod cli;
pub(crate) mod decide;
pub(crate) mod decision;
pub(crate) mod escape;
pub(crate) mod export;
pub(crate) mod gitdiff;
pub(crate) mod hash;
pub(crate) mod import;
pub(crate) mod integrity;
pub(crate) mod lang;
pub mod lifecycle;
pub mod log;
pub(crate) mod manifest;
pub mod protocol;
pub(crate) mod provider;
pub(crate) mod replay;
pub mod report;
pub(crate) mod runner;
pub mod state;
pub(crate) mod status;
pub mod table;
pub mod verdict;
pub(crate) mod view;
pub(crate) mod wire;
pub(crate) mod words;

// The executor, the sandbox and the cancel token live in their own crate
// (where all unsafe code is); re-exported under their old paths.
pub use agent_runtime_sandbox::{cancel, exec, sandbox, zygote};
