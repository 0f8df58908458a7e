//! Deciding "is A better than B?" from paired runs, on a budget: a
//! confidence sequence for the mean paired difference that may be looked
//! at after every pair and stopped on, with its level kept. Pure.
//!
//! - `betting.rs`: the betting confidence sequence for a mean in [0, 1]
//!   (Waudby-Smith & Ramdas), with and without replacement, checked
//!   against a reference implementation's output.
//! - `decision.rs`: when a comparison stops (a difference, or none larger
//!   than a margin).
//! - `posthoc.rs`: two finished runs of the same tasks compared
//!   (`report --compare`).
//! - `sim.rs`: simulated comparisons, for the tests of the level and
//!   `cargo bench --bench decide`.
//!
//! A paired difference `D = X_A − X_B ∈ {−1, 0, 1}` is observed as
//! `(D + 1) / 2 ∈ [0, 1]`; its interval maps back by `2x − 1`. The
//! sequence used for decisions is the with-replacement one: each task's
//! outcome is a draw, and the estimand is the task-averaged difference of
//! success *probabilities*; the without-replacement form covers the mean
//! of the draws that happened instead, which on noisy outcomes decides a
//! difference that is not there (`sim.rs` measures it).

pub(crate) mod betting;
pub(crate) mod decision;
pub(crate) mod posthoc;
pub(crate) mod sim;

pub(crate) use betting::{BettingCs, Interval};
pub(crate) use decision::{Decision, Rule};

/// The interval of the mean of `(D + 1) / 2` as one of the mean of `D`.
pub(crate) fn difference(interval: Interval) -> Interval {
    Interval {
        lower: 2.0 * interval.lower - 1.0,
        upper: 2.0 * interval.upper - 1.0,
    }
}
