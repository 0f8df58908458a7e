//! Simulated paired comparisons, to show what a stopping rule guarantees:
//! two arms on `tasks` tasks, each task with its own success probability
//! per arm, drawn in a uniformly random order pass after pass, the two
//! runs of a pair independent. After every pair the confidence sequence
//! of the mean paired difference is updated and the rule is asked whether
//! to stop. The tests below run the null scenarios 1,000 times with a
//! fixed seed; `cargo bench --bench decide` 10,000 times, with the
//! alternatives beside McNemar's exact test at a fixed number of pairs.

use super::betting::BettingCs;
use super::decision::{Decision, Rule};

/// One arm's success probability per task.
#[derive(Debug, Clone)]
pub(crate) struct Arms {
    pub(crate) a: Vec<f64>,
    pub(crate) b: Vec<f64>,
}

impl Arms {
    /// The task-averaged difference of success probabilities.
    pub(crate) fn delta(&self) -> f64 {
        let n = self.a.len().max(1) as f64;
        self.a.iter().zip(&self.b).map(|(a, b)| a - b).sum::<f64>() / n
    }
}

/// A draw from Beta(2, 2): the median of three uniforms.
pub(crate) fn beta22(rng: &mut fastrand::Rng) -> f64 {
    let mut u = [rng.f64(), rng.f64(), rng.f64()];
    u.sort_by(f64::total_cmp);
    u[1]
}

/// Null (i): the same probability for both arms, `p ~ Beta(2, 2)` per task.
pub(crate) fn same(rng: &mut fastrand::Rng, tasks: usize) -> Arms {
    let p: Vec<f64> = (0..tasks).map(|_| beta22(rng)).collect();
    Arms { a: p.clone(), b: p }
}

/// Tasks whose B probability is `0.1 + 0.8·Beta(2, 2)` (mean 0.5), A
/// better by `delta + spread` on the first half and by `delta − spread`
/// on the other: with `delta = 0` null (ii), the same mean with A better
/// on half the tasks and worse on the rest.
pub(crate) fn split(rng: &mut fastrand::Rng, tasks: usize, delta: f64, spread: f64) -> Arms {
    let b: Vec<f64> = (0..tasks).map(|_| 0.1 + 0.8 * beta22(rng)).collect();
    let a = b
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let shift = if i < tasks / 2 {
                delta + spread
            } else {
                delta - spread
            };
            (p + shift).clamp(0.0, 1.0)
        })
        .collect();
    Arms { a, b }
}

/// One simulated comparison of at most `passes` passes over the tasks:
/// the decision it stopped on and after how many pairs, or `None` if the
/// cap came first.
pub(crate) fn run(
    rng: &mut fastrand::Rng,
    arms: &Arms,
    passes: usize,
    alpha: f64,
    rule: Rule,
) -> Option<(Decision, u64)> {
    run_with(rng, arms, passes, alpha, rule, None)
}

/// `pairs` pairs drawn as [`run`] draws them, with no stopping: how many
/// only A solved and how many only B (McNemar's discordant pairs).
pub(crate) fn discordant(rng: &mut fastrand::Rng, arms: &Arms, pairs: usize) -> (u32, u32) {
    let (mut a_only, mut b_only) = (0, 0);
    draw(rng, arms, pairs, |a, b| {
        match (a, b) {
            (true, false) => a_only += 1,
            (false, true) => b_only += 1,
            _ => {}
        }
        true
    });
    (a_only, b_only)
}

/// [`run`] with the sequence of `population` (sampling without
/// replacement from that many values).
fn run_with(
    rng: &mut fastrand::Rng,
    arms: &Arms,
    passes: usize,
    alpha: f64,
    rule: Rule,
    population: Option<u64>,
) -> Option<(Decision, u64)> {
    let mut cs = BettingCs::new(alpha, population);
    let mut decided = None;
    draw(rng, arms, passes * arms.a.len(), |a, b| {
        let d = f64::from(u8::from(a)) - f64::from(u8::from(b));
        let interval = cs.update((d + 1.0) / 2.0);
        decided = rule
            .decide(super::difference(interval))
            .map(|decision| (decision, cs.count()));
        decided.is_none()
    });
    decided
}

/// Draws up to `pairs` pairs, the tasks in a fresh random order each pass,
/// each pair's two runs independent, handing each to `each` (whether
/// A and B succeeded) until it says to stop.
fn draw(
    rng: &mut fastrand::Rng,
    arms: &Arms,
    pairs: usize,
    mut each: impl FnMut(bool, bool) -> bool,
) {
    let tasks = arms.a.len();
    let mut order: Vec<usize> = (0..tasks).collect();
    let mut drawn = 0;
    while drawn < pairs && tasks > 0 {
        rng.shuffle(&mut order);
        for &task in order.iter().take(pairs - drawn) {
            let a = rng.f64() < arms.a[task];
            let b = rng.f64() < arms.b[task];
            drawn += 1;
            if !each(a, b) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At most 5% + 2 SE at 1,000 runs.
    const LEVEL_BOUND: f64 = 0.064;
    const RUNS: usize = 1000;

    fn false_rate(make: impl Fn(&mut fastrand::Rng) -> Arms, rule: Rule, wrong: Decision) -> f64 {
        let mut rng = fastrand::Rng::with_seed(20_261_208);
        let mut wrongs = 0;
        for _ in 0..RUNS {
            let arms = make(&mut rng);
            if let Some((decision, _)) = run(&mut rng, &arms, 3, 0.05, rule)
                && decision == wrong
            {
                wrongs += 1;
            }
        }
        wrongs as f64 / RUNS as f64
    }

    #[test]
    fn with_no_difference_a_difference_is_decided_at_most_at_the_level() {
        let excludes = Rule::Differs;
        // (i) the same probability per task.
        let rate = false_rate(|rng| same(rng, 60), excludes, Decision::Differs);
        eprintln!("false-decision rate (i): {rate}");
        assert!(rate <= LEVEL_BOUND, "(i): {rate}");
        // (ii) A better on half the tasks, worse on the other half.
        let rate = false_rate(|rng| split(rng, 60, 0.0, 0.1), excludes, Decision::Differs);
        eprintln!("false-decision rate (ii): {rate}");
        assert!(rate <= LEVEL_BOUND, "(ii): {rate}");
    }

    #[test]
    fn with_a_difference_past_the_margin_no_difference_is_decided_at_most_at_the_level() {
        // |Δ| = 0.15 > m = 0.1: "no difference larger than 0.1" is false.
        let sample = split(&mut fastrand::Rng::with_seed(1), 60, 0.15, 0.05);
        assert!(sample.delta() > 0.14, "{}", sample.delta());
        let rate = false_rate(
            |rng| split(rng, 60, 0.15, 0.05),
            Rule::Within(0.1),
            Decision::Within,
        );
        eprintln!("false-decision rate (margin): {rate}");
        assert!(rate <= LEVEL_BOUND, "{rate}");
    }

    /// Why decisions use the with-replacement sequence: the one without
    /// replacement, its population every pair the cap allows, covers the
    /// mean of the outcomes drawn, which with noisy outcomes is not 0 when
    /// the probabilities are equal, and it narrows onto it.
    #[test]
    fn without_replacement_on_noisy_outcomes_decides_what_is_not_there() {
        let mut rng = fastrand::Rng::with_seed(3);
        let (tasks, passes, runs) = (60, 3, 200);
        let mut wrongs = 0;
        for _ in 0..runs {
            let arms = same(&mut rng, tasks);
            let population = Some((tasks * passes) as u64);
            if let Some((Decision::Differs, _)) =
                run_with(&mut rng, &arms, passes, 0.05, Rule::Differs, population)
            {
                wrongs += 1;
            }
        }
        let rate = f64::from(wrongs) / f64::from(runs);
        eprintln!("false-decision rate (i) without replacement: {rate}");
        assert!(rate > 0.5, "{rate}");
    }

    #[test]
    fn a_real_difference_is_decided() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut decided = 0;
        for _ in 0..50 {
            let arms = split(&mut rng, 60, 0.3, 0.0);
            if let Some((Decision::Differs, _)) = run(&mut rng, &arms, 3, 0.05, Rule::Differs) {
                decided += 1;
            }
        }
        assert!(decided >= 40, "{decided} of 50");
    }
}
