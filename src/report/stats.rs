//! The statistics behind the reports' error bars: Wilson score intervals for
//! rates, a seeded percentile bootstrap for means over jobs, and the exact
//! two-sided sign test (McNemar's exact test) for paired comparisons.
//!
//! Pure arithmetic with no state: the bootstrap draws from a fixed-seed
//! generator, so the same log always gives the same report.

use serde::{Deserialize, Serialize};

/// The standard normal quantile for a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Resamples drawn by every bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: u32 = 10_000;

/// Seed of the generator behind every bootstrap interval. Each interval
/// starts a fresh generator from it, so an interval does not depend on
/// which others were computed before it.
pub const BOOTSTRAP_SEED: u64 = 0x5EED_F00D_B007_5747;

/// A p-value below this marks a comparison as significant.
pub const SIGNIFICANCE_LEVEL: f64 = 0.05;

/// A two-sided 95% interval, `low <= high`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The Wilson score interval for `successes` out of `n` trials at 95%:
///
/// `(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)` with `p = successes/n`.
///
/// Unlike the normal ("Wald") interval it stays inside [0, 1] and does not
/// collapse to a point at 0/n or n/n. `None` when `n` is zero or
/// `successes > n`. At 0/n the low end is exactly 0, at n/n the high end
/// exactly 1.
pub fn wilson(successes: u32, n: u32) -> Option<Interval> {
    if n == 0 || successes > n {
        return None;
    }
    let (x, n_f) = (f64::from(successes), f64::from(n));
    let p = x / n_f;
    let z2 = Z_95 * Z_95;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = Z_95 * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    let low = if successes == 0 { 0.0 } else { centre - half };
    let high = if successes == n { 1.0 } else { centre + half };
    Some(Interval {
        low: low.clamp(0.0, 1.0),
        high: high.clamp(0.0, 1.0),
    })
}

/// The two-sided p-value of the exact sign test: under the null hypothesis
/// each of the `wins + losses` discordant pairs goes either way with
/// probability 1/2, so the p-value is
///
/// `min(1, 2 · P(X <= min(wins, losses)))` with `X ~ Binomial(wins + losses, 1/2)`.
///
/// With 0/1 outcomes per pair this is McNemar's exact test. Ties carry no
/// information about which side is better and are not passed in. With no
/// discordant pairs there is no evidence either way: 1.
pub fn sign_test(wins: u32, losses: u32) -> f64 {
    let n = wins.saturating_add(losses);
    let k = wins.min(losses);
    if n == 0 {
        return 1.0;
    }
    let one_tail = binomial_tail_exact(n, k).unwrap_or_else(|| binomial_tail_logspace(n, k));
    (2.0 * one_tail).min(1.0)
}

/// `P(X <= k)` for `X ~ Binomial(n, 1/2)`: the sum of `C(n, i)` in exact
/// integers, divided by `2^n` once at the end. `None` when the integers
/// would overflow (`n` beyond about 120).
fn binomial_tail_exact(n: u32, k: u32) -> Option<f64> {
    let mut term: u128 = 1; // C(n, 0)
    let mut sum: u128 = 1;
    for i in 0..k {
        // C(n, i+1) = C(n, i) * (n - i) / (i + 1); exact at every step.
        term = term.checked_mul(u128::from(n - i))? / u128::from(i + 1);
        sum = sum.checked_add(term)?;
    }
    // The sum and 2^n convert to f64 with one rounding each.
    let scale = 2f64.powi(i32::try_from(n).ok()?);
    Some(sum as f64 / scale)
}

/// `P(X <= k)` for `X ~ Binomial(n, 1/2)`, `k <= n/2`, for large `n`: the
/// terms relative to the largest one in the tail (`C(n, k)`), scaled by
/// `C(n, k) / 2^n` computed in logarithms, so nothing overflows.
fn binomial_tail_logspace(n: u32, k: u32) -> f64 {
    let n_f = f64::from(n);
    let ln_choose: f64 = (1..=k)
        .map(|j| (f64::from(n - k + j) / f64::from(j)).ln())
        .sum();
    let ln_top = ln_choose - n_f * std::f64::consts::LN_2;
    // Terms i = k, k-1, ..., 0 relative to C(n, k): t(i-1) = t(i) * i / (n - i + 1).
    let mut relative = 1.0;
    let mut sum = 1.0;
    for i in (1..=k).rev() {
        relative *= f64::from(i) / f64::from(n - i + 1);
        sum += relative;
        if relative < sum * f64::EPSILON {
            break;
        }
    }
    (ln_top.exp() * sum).min(1.0)
}

/// The mean of `values`; `None` when there are none.
pub(super) fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// A 95% percentile bootstrap interval for the mean of `values`.
///
/// Draws [`BOOTSTRAP_RESAMPLES`] resamples of `values.len()` values with
/// replacement from a generator seeded with [`BOOTSTRAP_SEED`], takes each
/// resample's mean, sorts the means and reads the interval off at the
/// 2.5th and 97.5th percentiles: `low` is the mean at 0-based index
/// `floor(0.025 · B)` and `high` the one at `ceil(0.975 · B) - 1` (250 and
/// 9,749 for B = 10,000). `None` when there are no values.
pub fn bootstrap_mean(values: &[f64]) -> Option<Interval> {
    bootstrap_mean_with(values, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
}

/// [`bootstrap_mean`] with an explicit number of resamples and seed.
pub fn bootstrap_mean_with(values: &[f64], resamples: u32, seed: u64) -> Option<Interval> {
    if values.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let len = values.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let sum: f64 = (0..len)
                .map(|_| values.get(rng.usize(..len)).copied().unwrap_or(0.0))
                .sum();
            sum / len as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let b = f64::from(resamples);
    let low_at = (0.025 * b).floor() as usize;
    let high_at = ((0.975 * b).ceil() as usize).saturating_sub(1);
    let low = means.get(low_at).copied()?;
    let high = means
        .get(high_at.min(means.len().saturating_sub(1)))
        .copied()?;
    Some(Interval { low, high })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() < tolerance
    }

    fn interval_near(i: Option<Interval>, low: f64, high: f64, tolerance: f64) -> bool {
        i.is_some_and(|i| near(i.low, low, tolerance) && near(i.high, high, tolerance))
    }

    #[test]
    fn wilson_matches_published_values() {
        // Newcombe (1998), "Two-sided confidence intervals for the single
        // proportion", Table I, method 3 (score interval without correction).
        assert!(interval_near(wilson(81, 263), 0.2553, 0.3662, 5e-5));
        assert!(interval_near(wilson(15, 148), 0.0624, 0.1605, 5e-5));
        assert!(interval_near(wilson(0, 20), 0.0, 0.1611, 5e-5));
        assert!(interval_near(wilson(1, 29), 0.0061, 0.1718, 5e-5));
    }

    #[test]
    fn wilson_at_the_edges_stays_in_range_and_keeps_width() {
        // 0/n: low is exactly 0, high is z²/(n + z²).
        let z2 = Z_95 * Z_95;
        let none = wilson(0, 10).unwrap();
        assert_eq!(none.low, 0.0);
        assert!(near(none.high, z2 / (10.0 + z2), 1e-12));
        // n/n mirrors it.
        let all = wilson(10, 10).unwrap();
        assert_eq!(all.high, 1.0);
        assert!(near(all.low, 10.0 / (10.0 + z2), 1e-12));
        // 1/1 and 0/1 are wide but proper.
        assert!(interval_near(wilson(1, 1), 0.2065, 1.0, 5e-5));
        assert!(interval_near(wilson(0, 1), 0.0, 0.7935, 5e-5));
        // Symmetric around one half at n/2.
        let half = wilson(5, 10).unwrap();
        assert!(near(half.low + half.high, 1.0, 1e-12));
        assert!(interval_near(Some(half), 0.2366, 0.7634, 5e-5));
    }

    #[test]
    fn wilson_is_undefined_without_trials() {
        assert_eq!(wilson(0, 0), None);
        assert_eq!(wilson(3, 2), None);
    }

    #[test]
    fn wilson_shrinks_with_more_trials() {
        let small = wilson(3, 10).unwrap();
        let large = wilson(300, 1000).unwrap();
        assert!(large.high - large.low < small.high - small.low);
        assert!(large.low < 0.3 && 0.3 < large.high);
    }

    #[test]
    fn sign_test_matches_small_exact_cases() {
        assert_eq!(sign_test(0, 0), 1.0);
        assert_eq!(sign_test(1, 0), 1.0);
        assert_eq!(sign_test(3, 3), 1.0);
        // 5 vs 0: 2 · 1/32.
        assert_eq!(sign_test(5, 0), 0.0625);
        assert_eq!(sign_test(0, 5), 0.0625);
        // 6 vs 0: 2/64.
        assert_eq!(sign_test(6, 0), 0.03125);
        // 8 vs 1: 2 · (1 + 9) / 512.
        assert_eq!(sign_test(8, 1), 20.0 / 512.0);
        // 10 vs 2: 2 · (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 · 79 / 4096.
        assert_eq!(sign_test(2, 10), 158.0 / 4096.0);
        // A textbook McNemar case: b = 4, c = 14 discordant pairs,
        // exact two-sided p = 0.0309 (to 4 decimals).
        assert!(near(sign_test(4, 14), 0.030_883_789_062_5, 1e-15));
    }

    #[test]
    fn sign_test_is_symmetric_and_bounded() {
        for w in 0..30 {
            for l in 0..30 {
                let p = sign_test(w, l);
                assert_eq!(p, sign_test(l, w));
                assert!((0.0..=1.0).contains(&p), "{w} {l} {p}");
            }
        }
    }

    #[test]
    fn the_large_sample_tail_agrees_with_the_exact_one() {
        for (n, k) in [
            (120, 0),
            (120, 1),
            (120, 40),
            (120, 60),
            (100, 37),
            (30, 15),
        ] {
            let exact = binomial_tail_exact(n, k).unwrap();
            let approx = binomial_tail_logspace(n, k);
            assert!(
                (exact - approx).abs() <= 1e-12 * exact.max(1e-300),
                "{n} {k}: {exact} {approx}"
            );
        }
        // Far beyond u128 the exact sum gives up and logarithms take over:
        // still finite, tiny and ordered.
        assert_eq!(binomial_tail_exact(1_000, 500), None);
        let p = sign_test(10_000, 9_000);
        assert!(p > 0.0 && p < 1e-10, "{p}");
        assert!(sign_test(5_000, 5_000) == 1.0);
        let a = sign_test(520, 480);
        assert!(a > 0.2 && a < 0.25, "{a}");
    }

    #[test]
    fn bootstrap_is_reproducible_and_brackets_the_mean() {
        let values = [1.0, 0.0, 1.0, 1.0, 0.4, 0.0, 1.0, 0.8];
        let a = bootstrap_mean(&values).unwrap();
        assert_eq!(Some(a), bootstrap_mean(&values));
        let m = mean(&values).unwrap();
        assert!(a.low < m && m < a.high, "{a:?} {m}");
        assert!(a.low >= 0.0 && a.high <= 1.0);
        // The spread is near the normal approximation's: sd/sqrt(n) * 1.96.
        let sd = (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / 8.0).sqrt();
        let normal = Z_95 * sd / 8f64.sqrt();
        assert!(
            ((a.high - a.low) / 2.0 - normal).abs() < 0.05,
            "{a:?} {normal}"
        );
    }

    #[test]
    fn bootstrap_of_constant_values_is_a_point() {
        assert_eq!(
            bootstrap_mean(&[1.0; 6]),
            Some(Interval {
                low: 1.0,
                high: 1.0
            })
        );
        assert_eq!(
            bootstrap_mean(&[0.25]),
            Some(Interval {
                low: 0.25,
                high: 0.25
            })
        );
        assert_eq!(bootstrap_mean(&[]), None);
        assert_eq!(bootstrap_mean_with(&[1.0], 0, 1), None);
    }

    #[test]
    fn bootstrap_percentiles_are_read_at_the_documented_indices() {
        // With two resamples: low at floor(0.05) = 0, high at ceil(1.95) - 1 = 1.
        let i = bootstrap_mean_with(&[0.0, 1.0], 2, 3).unwrap();
        assert!(i.low <= i.high);
        // With one resample both ends are that resample's mean.
        let one = bootstrap_mean_with(&[0.0, 1.0], 1, 3).unwrap();
        assert_eq!(one.low, one.high);
    }

    #[test]
    fn mean_of_nothing_is_none() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 0.0]), Some(0.5));
    }
}
