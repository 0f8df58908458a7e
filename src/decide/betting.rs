//! The betting confidence sequence for the mean of observations in
//! [0, 1] (Waudby-Smith & Ramdas, "Estimating means of bounded random
//! variables by betting", JRSS-B 2024): for each candidate mean `m` on a
//! grid, a gambler bets on the next observation being above `m` and
//! another on it being below, each with the predictable plug-in
//! (empirical-Bernstein) bet; their hedged capital
//! `max(K⁺, K⁻) / 2` is a nonnegative martingale when `m` is the mean, so
//! by Ville's inequality it passes `1/α` with probability at most `α`,
//! ever. The set of candidates whose capital has not passed it is the
//! confidence sequence: valid at every time at once, so it may be looked
//! at after every observation and stopped on.
//!
//! With a finite population of `N` values sampled without replacement
//! (Waudby-Smith & Ramdas, "Confidence sequences for sampling without
//! replacement", NeurIPS 2020) each bet is centred on the mean of what is
//! left, `(N·m − S)/(N − t + 1)`, and the interval is cut to what the
//! values seen so far allow. It covers the mean of the *population's
//! values*: with noisy observations of each member it covers the mean of
//! the draws that happened, not of their probabilities (see `sim.rs`).
//!
//! Matches `hedged_cs` of the `confseq` package (θ = 1/2, truncation
//! 1/2, 1,000 grid steps, running intersection), whose output on four
//! sequences is committed as a fixture.

/// Grid steps over [0, 1].
const BREAKS: usize = 1000;
/// Bets are truncated at this fraction of the most a bet may stake.
const TRUNCATION: f64 = 0.5;
/// The plug-in estimates start from one fake observation of this mean
/// and variance.
const PRIOR_MEAN: f64 = 0.5;
const PRIOR_VARIANCE: f64 = 0.25;

/// A two-sided interval for a mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interval {
    pub(crate) lower: f64,
    pub(crate) upper: f64,
}

impl Interval {
    pub(crate) fn contains(&self, value: f64) -> bool {
        self.lower <= value && value <= self.upper
    }
}

/// The confidence sequence, updated one observation at a time.
#[derive(Debug, Clone)]
pub(crate) struct BettingCs {
    /// `ln(1/α')` of each gambler (α' = α/2: two of them, hedged).
    log_inverse_alpha: f64,
    threshold: f64,
    population: Option<u64>,
    t: u64,
    sum: f64,
    /// Plug-in variance after the observations so far (its mean is
    /// derived from `sum` when needed).
    variance: f64,
    squares: f64,
    /// Each candidate's capital, betting up and down; `None` once its
    /// centre left [0, 1] (without replacement: excluded for good).
    capital: Vec<Option<(f64, f64)>>,
    interval: Interval,
}

impl BettingCs {
    /// A sequence at level `1 − alpha`; `population`: sampling without
    /// replacement from that many values.
    pub(crate) fn new(alpha: f64, population: Option<u64>) -> BettingCs {
        BettingCs {
            log_inverse_alpha: (2.0 / alpha).ln(),
            threshold: 1.0 / alpha,
            population,
            t: 0,
            sum: 0.0,
            variance: PRIOR_VARIANCE,
            squares: 0.0,
            capital: vec![Some((1.0, 1.0)); BREAKS + 1],
            interval: Interval {
                lower: 0.0,
                upper: 1.0,
            },
        }
    }

    /// How many observations it has seen.
    pub(crate) fn count(&self) -> u64 {
        self.t
    }

    pub(crate) fn interval(&self) -> Interval {
        self.interval
    }

    /// Takes observation `x` (clamped to [0, 1]); the interval after it.
    pub(crate) fn update(&mut self, x: f64) -> Interval {
        let x = x.clamp(0.0, 1.0);
        self.t += 1;
        let t = self.t as f64;
        // The bet is predictable: made from the observations before this
        // one (the variance estimate before it).
        let bet = (2.0 * self.log_inverse_alpha / (t * (1.0 + t).ln() * self.variance)).sqrt();
        let bet = if bet.is_nan() { 0.0 } else { bet };
        let before = self.sum;
        for (i, slot) in self.capital.iter_mut().enumerate() {
            let Some((up, down)) = slot else {
                continue;
            };
            let m = i as f64 / BREAKS as f64;
            let centre = match self.population {
                Some(n) => {
                    let n = n as f64;
                    (n * m - before) / (n - (t - 1.0))
                }
                None => m,
            };
            if !(0.0..=1.0).contains(&centre) {
                *slot = None;
                continue;
            }
            let above = bet.min(TRUNCATION / centre);
            let below = bet.min(TRUNCATION / (1.0 - centre));
            *up *= stake(above, x - centre);
            *down *= stake(below, centre - x);
        }
        self.sum += x;
        // The plug-in estimates after it, for the next bet.
        let mean = ((PRIOR_MEAN + self.sum) / (t + 1.0)).min(1.0);
        self.squares += (x - mean).powi(2);
        self.variance = (PRIOR_VARIANCE + self.squares) / (t + 1.0);
        self.interval = self.next_interval();
        self.interval
    }

    fn next_interval(&self) -> Interval {
        let inside = |slot: &Option<(f64, f64)>| {
            slot.is_some_and(|(up, down)| (up / 2.0).max(down / 2.0) <= self.threshold)
        };
        let step = 1.0 / BREAKS as f64;
        let first = self.capital.iter().position(inside);
        let last = self.capital.iter().rposition(inside);
        let (mut lower, mut upper) = match (first, last) {
            (Some(first), Some(last)) => (
                (first as f64 * step - step).max(0.0),
                (last as f64 * step + step).min(1.0),
            ),
            _ => (0.0, 1.0),
        };
        // Without replacement, what the values seen allow.
        if let Some(n) = self.population {
            let n = n as f64;
            lower = lower.max(self.sum / n);
            upper = upper.min(1.0 - (self.t as f64 - self.sum) / n);
        }
        Interval {
            lower: lower.max(self.interval.lower),
            upper: upper.min(self.interval.upper),
        }
    }
}

/// One bet's factor: `1 + λ·(x − m)`, where an unbounded bet on a sure
/// outcome (`x = m` at the edge of the grid) leaves the capital as it is.
fn stake(bet: f64, gain: f64) -> f64 {
    if bet.is_infinite() {
        if gain == 0.0 {
            1.0
        } else if gain > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    } else {
        1.0 + bet * gain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Fixture {
        cases: Vec<Case>,
    }

    #[derive(serde::Deserialize)]
    struct Case {
        alpha: f64,
        population: Option<u64>,
        d: Vec<i8>,
        lower: Vec<f64>,
        upper: Vec<f64>,
    }

    #[test]
    fn it_matches_the_reference_implementation_step_by_step() {
        let fixture: Fixture =
            serde_json::from_str(include_str!("fixtures/betting_cs.json")).unwrap();
        assert_eq!(fixture.cases.len(), 4);
        for (k, case) in fixture.cases.iter().enumerate() {
            let mut cs = BettingCs::new(case.alpha, case.population);
            for (t, d) in case.d.iter().enumerate() {
                let got = cs.update((f64::from(*d) + 1.0) / 2.0);
                let want = (case.lower[t], case.upper[t]);
                assert!(
                    (got.lower - want.0).abs() < 1e-6 && (got.upper - want.1).abs() < 1e-6,
                    "case {k}, t = {}: got [{}, {}], want [{}, {}]",
                    t + 1,
                    got.lower,
                    got.upper,
                    want.0,
                    want.1
                );
            }
        }
    }

    #[test]
    fn it_narrows_on_a_constant_and_never_widens() {
        let mut cs = BettingCs::new(0.05, None);
        let mut last = cs.interval();
        for _ in 0..400 {
            let now = cs.update(0.75);
            assert!(now.lower >= last.lower && now.upper <= last.upper);
            last = now;
        }
        assert!(last.contains(0.75), "{last:?}");
        assert!(last.upper - last.lower < 0.1, "{last:?}");
        // Without replacement, the whole population seen is its mean.
        let mut cs = BettingCs::new(0.05, Some(20));
        for _ in 0..20 {
            cs.update(1.0);
        }
        assert_eq!(cs.interval().lower, 1.0);
    }
}
