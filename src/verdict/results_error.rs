//! Why a test runner's results could not be read.

/// Results that cannot be read: the run's report is broken or lies.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultsError {
    #[error("test {0:?} is reported twice")]
    ReportedTwice(String),
    #[error(
        "the summary ({} passed, {} failed, {} ignored) disagrees with the per-test lines ({} passed, {} failed, {} ignored)",
        .summary.0, .summary.1, .summary.2, .lines.0, .lines.1, .lines.2
    )]
    SummaryDisagrees {
        summary: (usize, usize, usize),
        lines: (usize, usize, usize),
    },
    #[error("unreadable summary {0:?}")]
    UnreadableSummary(String),
    #[error("the JUnit file is over {0} bytes")]
    TooLarge(usize),
    #[error("the JUnit file does not parse at byte {at}: {why}")]
    Xml { at: u64, why: String },
    #[error("the JUnit file has no <testsuite> or <testsuites>")]
    NoSuite,
    #[error("bad {key} attribute: {why}")]
    Attribute { key: String, why: String },
    #[error("bad testcase attributes: {0}")]
    Attributes(String),
    #[error("a <testcase> has no name")]
    NoName,
}
