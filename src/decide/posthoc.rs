//! A comparison of two finished runs of the same tasks (`report
//! --compare DATA_A,DATA_B`): the tasks both ran, paired, in a uniformly
//! random order from a seed (repeat 1 of every task first, then repeat
//! 2, ...), the confidence sequence updated pair by pair; where it stands
//! after the last pair, and after which pair the rule would have stopped.

use std::collections::BTreeMap;

use super::{BettingCs, Decision, Interval, Rule, difference};

/// Where a comparison stands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Standing {
    /// Pairs both arms finished.
    pub(crate) pairs: u64,
    /// Mean of A − B over them.
    pub(crate) mean: f64,
    /// The interval of A − B after the last pair.
    pub(crate) interval: Interval,
    /// What the rule decided, and after how many pairs it first could.
    pub(crate) decided: Option<(Decision, u64)>,
}

/// Compares `a` and `b`: each a task key (job and repeat) to whether it
/// succeeded; keys only one side has are left out.
pub(crate) fn compare(
    a: &BTreeMap<(String, u32), bool>,
    b: &BTreeMap<(String, u32), bool>,
    level: f64,
    rule: Rule,
    seed: u64,
) -> Standing {
    let mut by_repeat: BTreeMap<u32, Vec<(bool, bool)>> = BTreeMap::new();
    for (key, x_a) in a {
        if let Some(x_b) = b.get(key) {
            by_repeat.entry(key.1).or_default().push((*x_a, *x_b));
        }
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut cs = BettingCs::new(1.0 - level, None);
    let (mut sum, mut decided) = (0.0, None);
    for pairs in by_repeat.values_mut() {
        rng.shuffle(pairs);
        for (x_a, x_b) in pairs.iter() {
            let d = f64::from(u8::from(*x_a)) - f64::from(u8::from(*x_b));
            sum += d;
            let interval = difference(cs.update((d + 1.0) / 2.0));
            if decided.is_none()
                && let Some(decision) = rule.decide(interval)
            {
                decided = Some((decision, cs.count()));
            }
        }
    }
    let pairs = cs.count();
    Standing {
        pairs,
        mean: if pairs == 0 { 0.0 } else { sum / pairs as f64 },
        interval: difference(cs.interval()),
        decided,
    }
}

/// `A − B = +0.12 [0.04, 0.20] at 95%, over 61 paired tasks: A is better
/// (decided after 40)`.
pub(crate) fn words(standing: &Standing, level: f64, margin: Option<f64>) -> String {
    let Interval { lower, upper } = standing.interval;
    let verdict = match standing.decided {
        Some((Decision::Differs, after)) if lower > 0.0 => {
            format!("A is better (decided after {after})")
        }
        Some((Decision::Differs, after)) => format!("B is better (decided after {after})"),
        Some((Decision::Within, after)) => format!(
            "no difference larger than {:.2} (decided after {after})",
            margin.unwrap_or(0.0)
        ),
        None => "undecided".to_string(),
    };
    format!(
        "A − B = {:+.2} [{lower:+.2}, {upper:+.2}] at {:.0}%, over {}: {verdict}",
        standing.mean,
        level * 100.0,
        crate::words::count(
            usize::try_from(standing.pairs).unwrap_or(usize::MAX),
            "paired task"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(results: &[bool], repeats: u32) -> BTreeMap<(String, u32), bool> {
        let mut map = BTreeMap::new();
        for r in 1..=repeats {
            for (i, ok) in results.iter().enumerate() {
                map.insert((format!("t{i}"), r), *ok);
            }
        }
        map
    }

    #[test]
    fn an_arm_that_solves_what_the_other_does_not_is_decided_better() {
        let a = arm(&[true; 60], 2);
        let b = arm(&[false; 60], 2);
        let standing = compare(&a, &b, 0.95, Rule::Differs, 1);
        assert_eq!(standing.pairs, 120);
        assert_eq!(standing.mean, 1.0);
        let (decision, after) = standing.decided.unwrap();
        assert_eq!(decision, Decision::Differs);
        assert!(after < 30, "{after}");
        let text = words(&standing, 0.95, None);
        assert!(text.starts_with("A − B = +1.00 ["), "{text}");
        assert!(
            text.contains("at 95%, over 120 paired tasks: A is better"),
            "{text}"
        );
        // Reversed, B is better; equal arms decide nothing.
        let reversed = compare(&b, &a, 0.95, Rule::Differs, 1);
        assert!(words(&reversed, 0.95, None).contains("B is better"));
        let same = compare(&a, &a, 0.95, Rule::Differs, 1);
        assert_eq!(same.decided, None);
        assert!(words(&same, 0.95, None).ends_with("undecided"));
        // With a margin, equal arms decide there is no difference past it.
        let within = compare(&a, &a, 0.95, Rule::Within(0.2), 1);
        assert_eq!(within.decided.map(|d| d.0), Some(Decision::Within));
    }

    #[test]
    fn only_tasks_both_arms_ran_are_paired() {
        let a = arm(&[true, true, false], 1);
        let mut b = arm(&[true], 1);
        b.insert(("other".into(), 1), true);
        let standing = compare(&a, &b, 0.95, Rule::Differs, 1);
        assert_eq!(standing.pairs, 1);
        assert_eq!(standing.mean, 0.0);
    }
}
