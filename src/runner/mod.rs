//! Running one attempt of a manifest job: claim, setup, baseline, agent loop,
//! patch, acceptance, finish, each phase recorded in the log so a rerun
//! resumes after the last finished one.
//!
//! Owns wiring the agent loop to the executor, the provider and the log. The
//! phases:
//!
//! - `attempt.rs`: one attempt of a manifest job, phase by phase;
//!   `agent_phase.rs` its agent phase: the workspace, the provider and the loop
//!   under the deadline.
//! - `setup.rs`: the trusted `[setup]` commands.
//! - `baseline.rs`: the baseline once per task in a data dir: skipped, reused
//!   from the log by its key with `reused_from`, or run, instances of one key
//!   taking turns on a lock (`check` runs it fresh).
//! - `baseline_key.rs`: its key: everything that determines the verdict, the
//!   toolchain as the resolved program and its `--version`, probed once per
//!   process.
//! - `patch.rs`: the patch phase: what changed among the editable files and
//!   what it refuses to carry, through `beneath/`.
//! - `patch_save.rs`: saving both sides of each change as the runner's copy and
//!   `patch.diff`.
//! - `links.rs`: which symlinks a patch carries (a relative target that
//!   names a regular file of the tree, reached through no link).
//! - `carried.rs`: the runner's copy: `files/` and `files.json`, checked
//!   against the `patch` event's hash and laid on the acceptance copy, test
//!   infrastructure left out unless `editable` names it.
//! - `seed.rs`: the seed form of `run DATA ID WORKSPACE`.
//!
//! Commands:
//!
//! - `commands.rs`: commands through the executor with the job's sandbox
//!   policy.
//! - `attempt_zygote.rs`: one zygote per attempt that every command of the
//!   attempt starts from.
//! - `cache_use.rs`: how later commands see the job cache: `{cache}`, the job's
//!   `CARGO_HOME`, a read-only grant, the dependency layer harvested from the
//!   baseline and copied into a build's own `target/`.
//!
//! Checks (baseline and acceptance):
//!
//! - `checks.rs`: baseline and acceptance on clean copies inside the job's wall
//!   time, a JUnit run listed first where the language can, the harness pinned
//!   to the runner's configuration and the pristine harness kept in the files
//!   the patch lays on the copy.
//! - `per_test.rs`: libtest's tests one per process from runner-owned copies of
//!   the binaries, seeing the copy read-only but for its build dirs and running
//!   in a fresh copy of a small tree of its own, a few at a time, each under
//!   its timeout, one `command` event per binary; a test whose process cannot
//!   start because the tree is closed or gone is that test failing.
//!   `test_runs.rs` sums a binary's runs.
//! - `fallback.rs`: the inventory of a baseline whose hidden tests do not
//!   collect, from the oracle's tree or the hidden files.
//! - `check_verdict.rs`: what a baseline or acceptance run says.
//! - `excerpts.rs`: the per-test output excerpts of an acceptance run, kept
//!   beside the attempt's artifacts, never in the log.
//! - `one_run.rs`: a check whose tests run in one command and report in a
//!   JUnit file: listed first where the language can, run, the file read.
//! - `harness_output.rs`: why a run's tests did not build or collect, from its
//!   output as the language table finds the first error: an excerpt beside
//!   the attempt's artifacts and one line for the log's cause.
//! - `decoys.rs`: the decoys of a check's copy: each hidden test file rewritten
//!   for the run with its tests renamed, twins and a canary, taken out of the
//!   results and every name mapped back after it; the canaries' part in
//!   `canaries.rs`.
//! - `tamper.rs`: the patch's tamper signals, which files a check plants
//!   canaries in and which twins it plants (`twin_request`), and the attempt's
//!   verdict once its integrity record is known.
//!
//! And `recorder.rs`, the attempt's events appended to the store; `error.rs`,
//! the runner's own failures; `patch_tests.rs`, the patch phase's tests.
//!
//! Never prints (the CLI reports what it returns), and never writes into a
//! manifest's `source` or `[acceptance] dir`.

mod agent_external;
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
mod harness_output;
mod links;
mod one_run;
mod patch;
mod patch_save;
mod per_test;
mod recorder;
mod seed;
mod setup;
mod tamper;
mod test_runs;

pub(crate) use agent_external::bench_agent_start;
pub(crate) use attempt::{RunOptions, job_manifest, run_job};
pub(crate) use carried::{Carried, apply_patch};
pub(crate) use commands::job_search_path;
pub(crate) use error::RunError;
pub(crate) use seed::SeedEnv;
