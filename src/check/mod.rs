//! `check`: validating tasks without a model. Each task's baseline and its
//! oracle (a known-good fix) run several times as ordinary jobs; a task is
//! valid when the baseline fails as required and the oracle is accepted,
//! the same way every run. Tests whose results change between identical
//! runs are named as flaky.

mod judge;
mod leaks;
mod oracle;
mod run;

pub use judge::{RunFacts, Tally, TaskJudgement, TaskVerdict, judge_task, with_leaks};
pub use leaks::find_leaks;
pub use oracle::{OracleError, oracle_applies_first, oracle_script};
pub use run::{CheckError, ORACLE_PROVIDER, TaskCheck, check_tasks};
