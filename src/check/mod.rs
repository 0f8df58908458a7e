//! `check`: validating tasks without a model. Each task's baseline and its
//! oracle (a known-good fix) run several times as ordinary jobs; a task is
//! valid when the baseline fails as required and the oracle is accepted,
//! the same way every run. Tests whose results change between identical
//! runs are named as flaky.

mod copies;
mod judge;
mod leaks;
mod oracle;
mod run;

pub(crate) use judge::TaskVerdict;
pub(crate) use run::{TaskCheck, check_tasks};

#[cfg(test)]
pub(crate) use judge::{Tally, TaskJudgement};
