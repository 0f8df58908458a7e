//! Running one attempt of a manifest job: claim, setup, baseline, agent loop,
//! patch, acceptance, finish, each phase recorded in the log so a rerun
//! resumes after the last finished one.
//!
//! Owns wiring the agent loop to the executor, the provider and the log.
//! Never prints; the CLI reports what it returns.

mod agent_phase;
mod attempt;
mod attempt_zygote;
mod baseline;
mod baseline_key;
mod cache_use;
mod canaries;
mod carried;
mod check_verdict;
mod checks;
mod commands;
mod decoys;
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

pub(crate) use attempt::{RunOptions, job_manifest, run_job};
pub(crate) use carried::{Carried, apply_patch};
pub(crate) use commands::job_search_path;
pub(crate) use error::RunError;
pub(crate) use seed::SeedEnv;
