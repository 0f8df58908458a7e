//! `cargo bench --bench decide`: what `report --compare`'s confidence
//! sequence guarantees and costs in paired tasks, by simulation: 10,000
//! comparisons of each scenario on 60 tasks and at most 3 passes (180
//! pairs), at α = 0.05, with a fixed seed.
//!
//! - `null_i`, `null_ii`: how often a difference is decided when there is
//!   none (equal probabilities per task, p ~ Beta(2, 2); A better on half
//!   the tasks by 0.1 and worse on the other half); `margin`: how often
//!   "no difference larger than 0.1" is decided while Δ = 0.15. Each must
//!   stay at or under 5% (+ 2 SE = 5.4% at 10,000 runs).
//! - For Δ = 0.1 and 0.2 at p_B = 0.5 with null (ii)'s heterogeneity: the
//!   median and 90th percentile of paired tasks to a decision, the power
//!   at the cap, and McNemar's exact test's power at that median and at
//!   the cap (no stopping, one look).
//!
//! Prints one line to stdout: `BENCH decide runs=10000 null_i=<r> ...`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

fn main() {
    println!(
        "BENCH decide {}",
        agent_runtime::cli::bench::decide(10_000, 20_261_208)
    );
}
