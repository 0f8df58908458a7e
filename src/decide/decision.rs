//! When a paired comparison stops: the interval of the mean difference
//! A − B excludes 0 (a difference, its sign the interval's), or, with a
//! margin `m`, lies inside ±m (no difference larger than `m`).

use super::betting::Interval;

/// What a comparison may decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The interval of A − B excludes 0.
    Differs,
    /// The interval of A − B lies inside ±margin.
    Within,
}

/// When to stop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rule {
    /// On a difference only.
    Differs,
    /// On a difference, or on none larger than the margin.
    Within(f64),
}

impl Rule {
    /// The decision `difference` (an interval of A − B) allows, if any.
    pub(crate) fn decide(self, difference: Interval) -> Option<Decision> {
        if !difference.contains(0.0) {
            return Some(Decision::Differs);
        }
        match self {
            Rule::Within(margin) if -margin <= difference.lower && difference.upper <= margin => {
                Some(Decision::Within)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(lower: f64, upper: f64) -> Interval {
        Interval { lower, upper }
    }

    #[test]
    fn a_difference_excludes_zero_and_a_margin_holds_the_interval() {
        assert_eq!(Rule::Differs.decide(i(0.01, 0.3)), Some(Decision::Differs));
        assert_eq!(
            Rule::Differs.decide(i(-0.3, -0.01)),
            Some(Decision::Differs)
        );
        assert_eq!(Rule::Differs.decide(i(-0.01, 0.01)), None);
        assert_eq!(
            Rule::Within(0.05).decide(i(-0.04, 0.05)),
            Some(Decision::Within)
        );
        assert_eq!(Rule::Within(0.05).decide(i(-0.04, 0.06)), None);
        assert_eq!(
            Rule::Within(0.05).decide(i(0.01, 0.04)),
            Some(Decision::Differs)
        );
    }
}
