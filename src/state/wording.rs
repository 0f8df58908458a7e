//! How facts of the log read, the same in `status`, the reports and the
//! progress display.

use crate::protocol::CheckResult;

/// The baseline's own verdict. The baseline runs the acceptance tests on
/// the pristine source, which must fail them: the baseline *passes* when
/// the tests fail, and *fails* when the pristine source already passes.
/// Machine formats keep these values ([`BaselineVerdict::as_str`]); every
/// human view says what they mean ([`BaselineVerdict::words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum BaselineVerdict {
    Passed,
    Failed,
    Skipped,
    /// The test harness could not run or report: nothing was judged.
    Error,
}

impl BaselineVerdict {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// What the verdict means, in the words every human view uses:
    /// `fails as required`, `already passes`, `skipped`, `harness error`.
    pub fn words(self) -> &'static str {
        match self {
            BaselineVerdict::Passed => "fails as required",
            BaselineVerdict::Failed => "already passes",
            BaselineVerdict::Skipped => "skipped",
            BaselineVerdict::Error => "harness error",
        }
    }
}

/// The baseline verdict of the acceptance tests' `result` on the pristine
/// source.
pub fn baseline_verdict(result: CheckResult) -> BaselineVerdict {
    match result {
        CheckResult::Failed => BaselineVerdict::Passed,
        CheckResult::Passed => BaselineVerdict::Failed,
        CheckResult::Skipped => BaselineVerdict::Skipped,
        CheckResult::Error => BaselineVerdict::Error,
    }
}

/// One line for the baseline, as every view words it.
pub fn baseline_wording(result: CheckResult) -> &'static str {
    match baseline_verdict(result) {
        BaselineVerdict::Passed => "baseline fails as required",
        BaselineVerdict::Failed => {
            "baseline already passes (the pristine source passes the acceptance tests)"
        }
        BaselineVerdict::Skipped => "baseline skipped",
        BaselineVerdict::Error => {
            "baseline harness error (the test harness could not run or report)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_passes_when_the_pristine_source_fails() {
        assert_eq!(
            baseline_verdict(CheckResult::Failed),
            BaselineVerdict::Passed
        );
        assert_eq!(
            baseline_verdict(CheckResult::Passed),
            BaselineVerdict::Failed
        );
        assert!(baseline_wording(CheckResult::Failed).starts_with("baseline fails as required"));
        assert!(baseline_wording(CheckResult::Passed).starts_with("baseline already passes"));
        assert_eq!(baseline_wording(CheckResult::Skipped), "baseline skipped");
        assert!(baseline_wording(CheckResult::Error).starts_with("baseline harness error"));
        // No human wording says `passed` of a baseline.
        for result in [
            CheckResult::Failed,
            CheckResult::Passed,
            CheckResult::Skipped,
            CheckResult::Error,
        ] {
            assert!(!baseline_wording(result).contains("passed"));
            assert!(!baseline_verdict(result).words().contains("passed"));
        }
    }
}
