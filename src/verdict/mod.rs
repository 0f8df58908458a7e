//! Per-test verdicts: reading a test harness's per-test results (libtest's
//! output, a JUnit XML file), the test inventory a trusted baseline makes
//! (fail-to-pass and pass-to-pass tests), and judging an acceptance run against
//! it. Language-neutral: the language table uses these parsers.
//!
//! - `libtest.rs`: libtest's per-test lines, summary and a failed test's own
//!   block.
//! - `junit.rs`: JUnit XML, whether the document closed, and each failure's
//!   text.
//! - `excerpt.rs`: the per-test output excerpts an attempt keeps, and their
//!   format.
//! - `inventory.rs`: the baseline's test inventory from a listing
//!   (fail-to-pass, pass-to-pass, where it came from) and judging a run against
//!   it, timed-out tests and test functions included.
//! - `results_error.rs`: why a test runner's results could not be read.
//!
//! Pure functions of text and data: it never runs a command or reads a
//! file itself, and knows no language (the language table in
//! [`crate::lang`] says how names map and which cases make a function). A
//! test missing from a run's results is never a pass, and an exit status
//! alone never makes one.

mod excerpt;
mod inventory;
mod junit;
mod libtest;
mod results_error;

pub use crate::protocol::{Inventory, InventorySource, Verdict};
pub use excerpt::{
    EXCERPT_BYTES, EXCERPTS_FILE, EXCERPTS_KEPT, EXCERPTS_VERSION, HARNESS_OUTPUT_FILE,
    TestExcerpt, TestExcerpts, cap, excerpts_of, read_excerpts,
};
pub use inventory::{InventoryError, TestOutcome, TestResults, judge, judge_all};
pub use junit::{MAX_JUNIT_BYTES, parse_junit};
pub use libtest::{libtest_failure, libtest_summary, parse_libtest};
pub use results_error::ResultsError;
