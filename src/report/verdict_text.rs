//! How a job's per-test verdict reads, the same in every renderer: the
//! counts (`F2P 1/2, P2P 3/3`), "not verified per test" for a job judged by
//! its exit status, and the failing or missing tests, each marked, first
//! [`TEST_NAMES_KEPT`] then "and N more". Plain text on one line (control
//! and bidi characters in names as visible escapes); renderers escape
//! their own markup.

use super::model::{CheckResult, JobResult, TEST_NAMES_KEPT, TestVerdict};
use crate::protocol::FailureKind;

/// Said of a job whose acceptance was judged by its exit status alone.
pub(super) use crate::state::NOT_VERIFIED;

/// Whether a named test failed (reported, not passed) or is missing (not
/// reported at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Mark {
    Failing,
    Missing,
}

impl Mark {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The verb of a one-line message: `x failed`, `x missing`.
    pub fn verb(self) -> &'static str {
        match self {
            Mark::Failing => "failed",
            Mark::Missing => "missing",
        }
    }
}

/// `F2P 1/2, P2P 3/3`, when the job was verified per test.
pub(super) fn counts(t: &TestVerdict) -> Option<String> {
    if !t.verified_per_test {
        return None;
    }
    Some(format!(
        "F2P {}/{}, P2P {}/{}",
        t.f2p_passed.unwrap_or(0),
        t.f2p_total.unwrap_or(0),
        t.p2p_passed.unwrap_or(0),
        t.p2p_total.unwrap_or(0),
    ))
}

/// The counts, or [`NOT_VERIFIED`] when acceptance ran without a per-test
/// verdict; `None` when acceptance did not run (not reached, or no acceptance).
pub(super) fn summary(j: &JobResult) -> Option<String> {
    counts(&j.tests).or_else(|| {
        matches!(j.acceptance, CheckResult::Passed | CheckResult::Failed)
            .then(|| NOT_VERIFIED.to_string())
    })
}

/// Text on one line: control and bidi characters (line breaks and tabs
/// too) as visible escapes, through the one escaping function.
pub(super) fn one_line(text: &str) -> String {
    crate::escape::line(text).into_owned()
}

/// The failing tests, then the missing ones, at most [`TEST_NAMES_KEPT`] in
/// all, and how many more there are beyond those shown.
pub(super) fn names(t: &TestVerdict) -> (Vec<(String, Mark)>, u32) {
    let shown: Vec<(String, Mark)> = t
        .failing_tests
        .iter()
        .map(|n| (one_line(n), Mark::Failing))
        .chain(t.missing_tests.iter().map(|n| (one_line(n), Mark::Missing)))
        .take(TEST_NAMES_KEPT)
        .collect();
    let total = u64::from(t.failing_count) + u64::from(t.missing_count);
    let more = total.saturating_sub(shown.len() as u64);
    (shown, u32::try_from(more).unwrap_or(u32::MAX))
}

/// The test a one-line message names: the first missing test of a
/// `tests_missing` job, otherwise the first failing one (or missing, when
/// none failed).
pub(super) fn first(j: &JobResult) -> Option<(String, Mark)> {
    let t = &j.tests;
    let failing = t
        .failing_tests
        .first()
        .map(|n| (one_line(n), Mark::Failing));
    let missing = t
        .missing_tests
        .first()
        .map(|n| (one_line(n), Mark::Missing));
    if j.failure_kind == Some(FailureKind::TestsMissing) {
        missing.or(failing)
    } else {
        failing.or(missing)
    }
}

/// `and 3 more`, or `None` when nothing is left out.
pub(super) fn more(n: u32) -> Option<String> {
    (n > 0).then(|| format!("and {n} more"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    fn verdict(failing: usize, missing: usize) -> TestVerdict {
        TestVerdict::of(&Verdict {
            f2p_passed: 1,
            f2p_total: 2 + failing,
            p2p_passed: 3,
            p2p_total: 3 + missing,
            failing: (0..failing).map(|i| format!("f{i}")).collect(),
            missing: (0..missing).map(|i| format!("m{i}")).collect(),
            timed_out: Vec::new(),
        })
    }

    #[test]
    fn counts_read_f2p_then_p2p() {
        assert_eq!(counts(&verdict(1, 0)).as_deref(), Some("F2P 1/3, P2P 3/3"));
        assert_eq!(counts(&TestVerdict::default()), None);
    }

    #[test]
    fn summary_says_when_a_job_is_not_verified_per_test() {
        let mut j = JobResult::new("a", "a", "a");
        assert_eq!(summary(&j), None, "acceptance not reached");
        j.acceptance = CheckResult::Failed;
        assert_eq!(summary(&j).as_deref(), Some(NOT_VERIFIED));
        j.tests = verdict(0, 0);
        assert_eq!(summary(&j).as_deref(), Some("F2P 1/2, P2P 3/3"));
    }

    #[test]
    fn names_keep_the_first_twenty_and_count_the_rest() {
        let t = verdict(25, 3);
        assert_eq!((t.failing_tests.len(), t.failing_count), (20, 25));
        assert_eq!((t.missing_tests.len(), t.missing_count), (3, 3));
        let (shown, rest) = names(&t);
        assert_eq!(shown.len(), TEST_NAMES_KEPT);
        assert!(shown.iter().all(|(_, m)| *m == Mark::Failing));
        assert_eq!(rest, 8);
        assert_eq!(more(rest).as_deref(), Some("and 8 more"));
        let t = verdict(1, 2);
        let (shown, rest) = names(&t);
        let shown: Vec<(&str, Mark)> = shown.iter().map(|(n, m)| (n.as_str(), *m)).collect();
        assert_eq!(
            shown,
            [
                ("f0", Mark::Failing),
                ("m0", Mark::Missing),
                ("m1", Mark::Missing)
            ]
        );
        assert_eq!((rest, more(rest)), (0, None));
    }

    #[test]
    fn first_prefers_what_the_failure_kind_is_about() {
        let mut j = JobResult::new("a", "a", "a");
        j.tests = verdict(1, 1);
        j.failure_kind = Some(FailureKind::TestsFailed);
        assert_eq!(first(&j), Some(("f0".to_string(), Mark::Failing)));
        j.failure_kind = Some(FailureKind::TestsMissing);
        assert_eq!(first(&j), Some(("m0".to_string(), Mark::Missing)));
        j.tests.missing_tests = vec!["a\nb".into()];
        assert_eq!(first(&j), Some(("a\\u{a}b".to_string(), Mark::Missing)));
        j.tests = verdict(0, 0);
        assert_eq!(first(&j), None);
    }
}
