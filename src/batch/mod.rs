//! Batches: plan instances from manifests (providers, repeats, families,
//! shards), run them in parallel with retries and recovery, report progress
//! from the log, and write the reports at the end.
//!
//! - `plan.rs`: planning instances: providers, repeats, family, shard.
//! - `run.rs`: the worker pool with retries and Ctrl-C, `--replace` and the
//!   `resuming:` count of a rerun.
//! - `progress.rs`: the progress reporter that follows the log and owns the
//!   terminal, its lines escaped.
//!
//! Workers never print: they append events, and the one progress reporter
//! follows the log and owns the terminal.

mod plan;
mod progress;
mod run;

pub(crate) use plan::{PlanOptions, Shard, plan};
pub(crate) use progress::ProgressMode;
pub(crate) use run::{BatchError, BatchOptions, BatchSummary, Rerun, run_batch};
