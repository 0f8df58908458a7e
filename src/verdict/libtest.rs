//! libtest's default ("pretty") output: one `test NAME ... RESULT` line per
//! test, then a `test result:` summary that must agree with them.

use super::inventory::{TestOutcome, TestResults};
use super::results_error::ResultsError;

/// Reads the per-test lines and the summary of one test binary's output.
/// Lines inside the `failures:` section (captured output of failed tests,
/// which a test could fill with anything) are not read as results. A run
/// without a summary (the process ended early) is `complete: false`; a
/// summary that disagrees with the per-test lines is an error.
pub fn parse_libtest(output: &str) -> Result<TestResults, ResultsError> {
    let mut results = TestResults::default();
    let mut in_failures = false;
    let mut summary = None;
    for line in output.lines() {
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix("test result: ") {
            summary = Some(parse_summary(rest)?);
            in_failures = false;
            continue;
        }
        if line == "failures:" {
            in_failures = true;
            continue;
        }
        if in_failures {
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, result)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match result {
            "ok" => TestOutcome::Passed,
            "FAILED" => TestOutcome::Failed,
            r if r == "ignored" || r.starts_with("ignored, ") => TestOutcome::Skipped,
            _ => continue,
        };
        if results.tests.insert(name.to_string(), outcome).is_some() {
            return Err(ResultsError::ReportedTwice(name.to_string()));
        }
    }
    if let Some((passed, failed, ignored)) = summary {
        let count = |want: TestOutcome| results.tests.values().filter(|o| **o == want).count();
        let seen = (
            count(TestOutcome::Passed),
            count(TestOutcome::Failed),
            count(TestOutcome::Skipped),
        );
        if seen != (passed, failed, ignored) {
            return Err(ResultsError::SummaryDisagrees {
                summary: (passed, failed, ignored),
                lines: seen,
            });
        }
        results.complete = true;
    }
    Ok(results)
}

/// The counts (passed, failed, ignored) of the last `test result:` line
/// of `output`, if there is one: what a one-test run says of its test.
pub fn libtest_summary(output: &str) -> Option<Result<(usize, usize, usize), ResultsError>> {
    output
        .lines()
        .rev()
        .find_map(|line| line.trim_end().strip_prefix("test result: "))
        .map(parse_summary)
}

/// What the failed test `name` printed, from a run's `failures:` section:
/// its `---- NAME stdout ----` block (and a `---- NAME stderr ----` one,
/// where libtest keeps them apart), without the blank lines around it.
/// `None` when the output holds no block for it.
pub fn libtest_failure(name: &str, output: &str) -> Option<String> {
    let headers = [
        format!("---- {name} stdout ----"),
        format!("---- {name} stderr ----"),
    ];
    let mut blocks: Vec<String> = Vec::new();
    let mut open: Option<Vec<&str>> = None;
    for line in output.lines() {
        let bare = line.trim_end();
        let ends_block = bare == "failures:"
            || bare.starts_with("test result: ")
            || (bare.starts_with("---- ") && bare.ends_with(" ----"));
        if ends_block && let Some(lines) = open.take() {
            blocks.push(lines.join("\n").trim_matches('\n').to_string());
        }
        if headers.iter().any(|h| h == bare) {
            open = Some(Vec::new());
        } else if let Some(lines) = open.as_mut() {
            lines.push(line);
        }
    }
    if let Some(lines) = open {
        blocks.push(lines.join("\n").trim_matches('\n').to_string());
    }
    blocks.retain(|b| !b.is_empty());
    (!blocks.is_empty()).then(|| blocks.join("\n"))
}

/// `ok. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; ...`
fn parse_summary(rest: &str) -> Result<(usize, usize, usize), ResultsError> {
    let unreadable = || ResultsError::UnreadableSummary(rest.to_string());
    let (_, counts) = rest.split_once(". ").ok_or_else(unreadable)?;
    let mut found = [None; 3];
    for part in counts.split(';') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let slot = match what {
            "passed" => 0,
            "failed" => 1,
            "ignored" => 2,
            _ => continue,
        };
        found[slot] = Some(n.parse::<usize>().map_err(|_| unreadable())?);
    }
    match found {
        [Some(p), Some(f), Some(i)] => Ok((p, f, i)),
        _ => Err(unreadable()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "\nrunning 3 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\ntest tests::c ... ignored, slow\n\nfailures:\n\n---- tests::b stdout ----\ntest tests::forged ... ok\n\nfailures:\n    tests::b\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";

    #[test]
    fn reads_each_test_and_checks_the_summary() {
        let results = parse_libtest(RUN).unwrap();
        assert!(results.complete);
        assert_eq!(results.tests.len(), 3);
        assert_eq!(results.tests["tests::a"], TestOutcome::Passed);
        assert_eq!(results.tests["tests::b"], TestOutcome::Failed);
        assert_eq!(results.tests["tests::c"], TestOutcome::Skipped);
        assert!(!results.tests.contains_key("tests::forged"));
    }

    #[test]
    fn a_run_cut_short_is_incomplete_and_a_lying_summary_is_an_error() {
        let cut = "running 2 tests\ntest a ... ok\n";
        let results = parse_libtest(cut).unwrap();
        assert!(!results.complete);
        assert_eq!(results.tests.len(), 1);
        let lying = "test a ... ok\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert!(parse_libtest(lying).is_err());
        assert!(parse_libtest("test a ... ok\ntest a ... ok\n").is_err());
    }

    #[test]
    fn a_failed_test_s_own_block_is_its_output() {
        let one = "running 1 test\ntest m ... FAILED\n\nfailures:\n\n---- m stdout ----\n\nthread 'm' panicked at tests/a.rs:12:9:\nassertion `left == right` failed: n = 1\n  left: 0\n right: 1\nnote: run with `RUST_BACKTRACE=1`\n\n\nfailures:\n    m\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 1 filtered out\n";
        let text = libtest_failure("m", one).unwrap();
        assert!(
            text.starts_with("thread 'm' panicked at tests/a.rs:12:9:"),
            "{text}"
        );
        assert!(text.contains("  left: 0\n right: 1"));
        assert!(text.ends_with("RUST_BACKTRACE=1`"), "{text:?}");
        assert_eq!(libtest_failure("other", one), None);
        assert_eq!(libtest_failure("m", "test m ... FAILED\n"), None);
        let split = "---- m stdout ----\nout\n---- m stderr ----\nerr\n";
        assert_eq!(libtest_failure("m", split).as_deref(), Some("out\nerr"));
    }

    #[test]
    fn doc_test_names_keep_their_spaces() {
        let out = "test src/lib.rs - add (line 3) ... ok\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.1s\n";
        let results = parse_libtest(out).unwrap();
        assert!(results.tests.contains_key("src/lib.rs - add (line 3)"));
    }
}
