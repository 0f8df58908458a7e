//! What `cargo bench --bench bridge` and `--bench agent` measure, reached
//! from outside the crate: not part of the command line.

use std::path::Path;
use std::time::Duration;

/// Per-call times of `calls` scripted model calls through a running model
/// bridge, then to the same provider directly.
pub fn bridge_model_calls(calls: usize) -> std::io::Result<(Vec<Duration>, Vec<Duration>)> {
    crate::bridge::bench::model_calls(calls)
}

/// The time from launching agent `name` installed in `install` (leashed,
/// or `contained`) to its first model request, in its own sandbox or bare.
pub fn agent_start(
    name: &str,
    contained: bool,
    install: &Path,
    sandboxed: bool,
) -> std::io::Result<Duration> {
    let mode = if contained {
        crate::agents::Mode::Contained
    } else {
        crate::agents::Mode::Leashed
    };
    crate::runner::bench_agent_start(name, mode, install, sandboxed)
}

/// `cargo bench --bench decide`: `runs` simulated comparisons of each
/// scenario on 60 tasks, at most 3 passes (180 pairs), α = 0.05. The null
/// scenarios' false-decision rates (and, with a margin of 0.1 while
/// Δ = 0.15, deciding "no difference past it"); for Δ = 0.1 and 0.2 at
/// p_B = 0.5 with the heterogeneity of null (ii), the median and 90th
/// percentile of paired tasks to decide, the power at the cap, and the
/// power of McNemar's exact test at that median and at the cap. The
/// figures as `key=value` pairs.
pub fn decide(runs: usize, seed: u64) -> String {
    use crate::decide::sim::{Arms, discordant, run, same, split};
    use crate::decide::{Decision, Rule};
    const TASKS: usize = 60;
    const PASSES: usize = 3;
    let cap = TASKS * PASSES;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut rate = |make: &dyn Fn(&mut fastrand::Rng) -> Arms, rule: Rule, wrong: Decision| {
        let mut wrongs = 0usize;
        for _ in 0..runs {
            let arms = make(&mut rng);
            if run(&mut rng, &arms, PASSES, 0.05, rule).is_some_and(|(d, _)| d == wrong) {
                wrongs += 1;
            }
        }
        wrongs as f64 / runs as f64
    };
    let null_i = rate(&|r| same(r, TASKS), Rule::Differs, Decision::Differs);
    let null_ii = rate(
        &|r| split(r, TASKS, 0.0, 0.1),
        Rule::Differs,
        Decision::Differs,
    );
    let margin = rate(
        &|r| split(r, TASKS, 0.15, 0.05),
        Rule::Within(0.1),
        Decision::Within,
    );
    let mut line =
        format!("runs={runs} null_i={null_i:.4} null_ii={null_ii:.4} margin={margin:.4}");
    for (key, delta) in [("d10", 0.1), ("d20", 0.2)] {
        let mut decided: Vec<u64> = Vec::new();
        let mut true_delta = 0.0;
        for _ in 0..runs {
            let arms = split(&mut rng, TASKS, delta, 0.1);
            true_delta += arms.delta() / runs as f64;
            if let Some((Decision::Differs, n)) = run(&mut rng, &arms, PASSES, 0.05, Rule::Differs)
            {
                decided.push(n);
            }
        }
        decided.sort_unstable();
        let power = decided.len() as f64 / runs as f64;
        // Paired tasks to decide, among the runs that decided.
        let at = |q: f64| {
            decided
                .get(((decided.len() as f64 * q) as usize).min(decided.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        };
        let (median, p90) = (at(0.5), at(0.9));
        let mut mcnemar = |pairs: usize| {
            let mut rejected = 0usize;
            for _ in 0..runs {
                let arms = split(&mut rng, TASKS, delta, 0.1);
                let (a, b) = discordant(&mut rng, &arms, pairs);
                if crate::report::sign_test(a, b) < 0.05 {
                    rejected += 1;
                }
            }
            rejected as f64 / runs as f64
        };
        let at_median = mcnemar(usize::try_from(median).unwrap_or(cap).max(1));
        let at_cap = mcnemar(cap);
        line.push_str(&format!(
            " {key}_true={true_delta:.3} {key}_median={median} {key}_p90={p90} {key}_power={power:.3} {key}_mcnemar_at_median={at_median:.3} {key}_mcnemar_at_cap={at_cap:.3}"
        ));
    }
    line
}
