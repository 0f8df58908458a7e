//! agent-runtime: runs automated coding tasks with language models on a
//! short leash. See `docs/architecture.md` for the module map.

pub mod agent;
pub mod batch;
pub mod beneath;
pub mod cache;
pub mod check;
pub mod cli;
pub mod decision;
pub mod escape;
pub mod export;
pub mod gitdiff;
pub mod hash;
pub mod import;
pub mod integrity;
pub mod lang;
pub mod lifecycle;
pub mod log;
pub mod manifest;
pub mod protocol;
pub mod provider;
pub mod replay;
pub mod report;
pub mod runner;
pub mod state;
pub mod status;
pub mod table;
pub mod verdict;
pub mod view;
pub mod words;

// The executor, the sandbox and the cancel token live in their own crate
// (where all unsafe code is); re-exported under their old paths.
pub use agent_runtime_sandbox::{cancel, exec, sandbox};
