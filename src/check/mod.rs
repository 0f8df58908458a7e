//! `check`: validating tasks without a model. Each task's baseline and its
//! oracle (a known-good fix) run several times as ordinary jobs; a task is
//! valid when the baseline fails as required and the oracle succeeds,
//! the same way every run. Tests whose results change between identical
//! runs are named as flaky.
//!
//! - `oracle.rs`: the oracle as scripted decisions: a patch applied to a
//!   scratch copy and written as the model would (and applied first to the
//!   run's workspace by the runner, so its deletions happen).
//! - `run.rs`: the runs as ordinary batch jobs `<job>@oracle#<k>`.
//! - `judge.rs`: the pure verdict from what each run recorded, with its notes
//!   (where the inventory came from, canaries off, the oracle runs' tamper
//!   signals).
//! - `leaks.rs`: the answer's leaks: git objects and refs past the base,
//!   remotes, the oracle's distinctive lines elsewhere (verdict `leaky`).
//! - `copies.rs`: whole copies of the oracle's files anywhere in the task
//!   (working tree, every object and file under `.git`).
//! - `write_flaky.rs`: `check --write-flaky`, the flaky tests written into
//!   each manifest's `[acceptance] flaky`, in place.
//!
//! Never calls a model.

mod copies;
mod judge;
mod leaks;
mod oracle;
mod run;
mod write_flaky;

pub(crate) use judge::TaskVerdict;
pub(crate) use leaks::source_files;
pub(crate) use oracle::offline_provider;
pub(crate) use run::{TaskCheck, check_tasks};
pub(crate) use write_flaky::write_flaky;

#[cfg(test)]
pub(crate) use judge::{Count, TaskJudgement};
