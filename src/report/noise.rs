//! Noise you can see: how often a task's outcome flips between identical
//! runs of one provider (a `--repeat N` sweep), and the smallest
//! difference between two providers their paired comparison could tell
//! from that noise.
//!
//! A task run `n` times with `c` successes flips at the rate two of its
//! runs disagree: `2·c·(n − c) / (n·(n − 1))`, which is also twice the
//! unbiased estimate of `p(1 − p)`. So the pass fraction of a task has
//! variance about `(flip / 2) / n`, and the mean per-task difference of
//! two providers over `m` shared tasks has the standard error
//! `sqrt(Σ (flip_a / 2n_a + flip_b / 2n_b)) / m`. Its minimum detectable
//! effect at α = 0.05 (two-sided) and power 0.8 is `(1.960 + 0.842)·SE`:
//! a true difference smaller than it is more likely missed than found;
//! and a measured difference is within noise when `± 1.960·SE` around it
//! holds 0.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stats::Z_95;

/// `z` of the two-sided 5% level plus `z` of 80% power.
const DETECTABLE_Z: f64 = Z_95 + 0.841_621;

/// Most flipping tasks a provider's noise names.
const NAMED: usize = 20;

/// Runs of one task under one provider: finished, succeeded.
pub(super) type Runs = (u32, u32);

/// One provider's noise over the tasks it ran at least twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    pub provider: String,
    /// Tasks with at least two finished runs.
    pub tasks: u32,
    /// Those whose runs did not all end the same.
    pub flipping: u32,
    /// Mean flip rate over `tasks`.
    pub flip_rate: f64,
    /// The flipping tasks, most flipping first (at most 20), each with its
    /// flip rate.
    pub flips: Vec<TaskFlip>,
}

/// A task whose runs disagreed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskFlip {
    pub job: String,
    pub runs: u32,
    pub succeeded: u32,
    pub flip_rate: f64,
}

/// How often two of `n` runs with `c` successes disagree; `None` under
/// two runs.
pub(super) fn flip_rate((n, c): Runs) -> Option<f64> {
    (n >= 2).then(|| 2.0 * f64::from(c) * f64::from(n - c) / (f64::from(n) * f64::from(n - 1)))
}

/// Each provider's noise, by provider; providers with no task run twice
/// are left out.
pub(super) fn noise(runs: &BTreeMap<String, BTreeMap<&str, Runs>>) -> Vec<Noise> {
    runs.iter()
        .filter_map(|(provider, jobs)| {
            let rated: Vec<(&str, Runs, f64)> = jobs
                .iter()
                .filter_map(|(job, r)| flip_rate(*r).map(|f| (*job, *r, f)))
                .collect();
            if rated.is_empty() {
                return None;
            }
            let mut flips: Vec<TaskFlip> = rated
                .iter()
                .filter(|(_, _, f)| *f > 0.0)
                .map(|(job, (n, c), f)| TaskFlip {
                    job: (*job).to_string(),
                    runs: *n,
                    succeeded: *c,
                    flip_rate: *f,
                })
                .collect();
            let flipping = u32::try_from(flips.len()).unwrap_or(u32::MAX);
            flips.sort_by(|a, b| b.flip_rate.total_cmp(&a.flip_rate).then(a.job.cmp(&b.job)));
            flips.truncate(NAMED);
            Some(Noise {
                provider: provider.clone(),
                tasks: u32::try_from(rated.len()).unwrap_or(u32::MAX),
                flipping,
                flip_rate: rated.iter().map(|(_, _, f)| f).sum::<f64>() / rated.len() as f64,
                flips,
            })
        })
        .collect()
}

/// The standard error the runs' noise gives the mean per-task difference
/// over `pairs` (each shared task's runs under `a` and under `b`); `None`
/// unless every task ran at least twice under both.
pub(super) fn noise_error(pairs: &[(Runs, Runs)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let mut variance = 0.0;
    for (a, b) in pairs {
        let (fa, fb) = (flip_rate(*a)?, flip_rate(*b)?);
        variance += fa / (2.0 * f64::from(a.0)) + fb / (2.0 * f64::from(b.0));
    }
    Some(variance.sqrt() / pairs.len() as f64)
}

/// The minimum detectable effect of a difference with noise error `se`.
pub(super) fn minimum_detectable(se: f64) -> f64 {
    DETECTABLE_Z * se
}

/// The 95% interval the noise gives `difference`.
pub(super) fn noise_interval(difference: f64, se: f64) -> super::stats::Interval {
    super::stats::Interval {
        low: (difference - Z_95 * se).max(-1.0),
        high: (difference + Z_95 * se).min(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_flips_at_the_rate_two_of_its_runs_disagree() {
        assert_eq!(flip_rate((1, 1)), None);
        assert_eq!(flip_rate((4, 4)), Some(0.0));
        assert_eq!(flip_rate((4, 0)), Some(0.0));
        // 2 of 4: 4 of the 6 pairs disagree.
        assert!((flip_rate((4, 2)).unwrap() - 4.0 / 6.0).abs() < 1e-12);
        assert!((flip_rate((2, 1)).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_provider_s_noise_names_its_flipping_tasks() {
        let mut runs: BTreeMap<String, BTreeMap<&str, Runs>> = BTreeMap::new();
        runs.insert(
            "a".into(),
            BTreeMap::from([("t1", (4, 2)), ("t2", (4, 4)), ("t3", (1, 0))]),
        );
        runs.insert("b".into(), BTreeMap::from([("t1", (1, 1))]));
        let noise = noise(&runs);
        assert_eq!(noise.len(), 1);
        let a = &noise[0];
        assert_eq!((a.tasks, a.flipping), (2, 1));
        assert!((a.flip_rate - (4.0 / 6.0) / 2.0).abs() < 1e-12);
        assert_eq!(a.flips[0].job, "t1");
    }

    #[test]
    fn the_detectable_effect_shrinks_with_tasks_and_runs_and_needs_repeats() {
        let noisy = ((4, 2), (4, 2));
        let detectable = |pairs: &[(Runs, Runs)]| noise_error(pairs).map(minimum_detectable);
        let few = detectable(&[noisy; 10]).unwrap();
        let many = detectable(&[noisy; 40]).unwrap();
        assert!((few / many - 2.0).abs() < 1e-9, "{few} {many}");
        // 10 tasks, each flipping at 2/3 under both, 4 runs: SE =
        // sqrt(10 · 2 · (2/3) / 8) / 10.
        let se = (10.0_f64 * 2.0 * (2.0 / 3.0) / 8.0).sqrt() / 10.0;
        assert!((few - DETECTABLE_Z * se).abs() < 1e-9);
        // No noise, no floor; a single run cannot show noise.
        assert_eq!(detectable(&[((3, 3), (3, 0)); 5]), Some(0.0));
        assert_eq!(detectable(&[((1, 1), (3, 0))]), None);
        assert_eq!(detectable(&[]), None);
        // Within noise: the noise's interval holds 0.
        let i = noise_interval(0.1, few / DETECTABLE_Z);
        assert!(i.low < 0.0 && i.high > 0.1, "{i:?}");
    }
}
