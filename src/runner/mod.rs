//! Running one attempt of a manifest job: claim, setup, baseline, agent loop,
//! patch, acceptance, finish, each phase recorded in the log so a rerun
//! resumes after the last finished one.
//!
//! Owns wiring the agent loop to the executor, the provider and the log.
//! Never prints; the CLI reports what it returns.

mod attempt;
mod baseline;
mod baseline_key;
mod cache_use;
mod canaries;
mod carried;
mod check_verdict;
mod checks;
mod commands;
mod error;
mod excerpts;
mod fallback;
mod patch;
mod patch_save;
mod per_test;
mod recorder;
mod seed;
mod setup;
mod tamper;
mod test_runs;

pub use attempt::{AttemptReport, RunOptions, job_manifest, run_job};
pub use cache_use::CacheUse;
pub use carried::{Carried, Carry, Entry, apply_patch};
pub use checks::{CheckCommand, CheckError, CheckRun, CheckSpec, run_check};
pub use commands::{AttemptCommands, job_search_path, policy_for};
pub use error::RunError;
pub use patch::{
    COPY_CAP, DIFF_CAP, DIFF_TIME, FILE_CAP, PatchError, PatchInputs, Rejection, SavedPatch,
    take_patch,
};
pub use per_test::test_parallelism;
pub use seed::{SeedEnv, SeedError};
pub use setup::{SetupError, SetupRun, run_setup};
