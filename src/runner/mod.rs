//! Running one attempt of a manifest job: claim, setup, baseline, agent loop,
//! patch, acceptance, finish, each phase recorded in the log so a rerun
//! resumes after the last finished one.
//!
//! Owns wiring the agent loop to the executor, the provider and the log.
//! Never prints; the CLI reports what it returns.

mod attempt;
mod cache_use;
mod check_verdict;
mod checks;
mod commands;
mod error;
mod patch;
mod recorder;
mod seed;
mod setup;

pub use attempt::{AttemptReport, RunOptions, job_manifest, run_job};
pub use cache_use::CacheUse;
pub use checks::{CheckError, CheckRun, run_check};
pub use commands::{AttemptCommands, job_search_path, policy_for};
pub use error::RunError;
pub use patch::{Patch, PatchError, apply_patch, diff_editable};
pub use seed::{SeedEnv, SeedError};
pub use setup::{SetupError, SetupRun, run_setup};
