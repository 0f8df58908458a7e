//! Why a check's tests did not run, from its output: when the build or the
//! test runner failed before reporting (a compile error, a collection
//! error, a missing module), the first error as the language's table finds
//! it — an excerpt kept beside the attempt (`harness_output.txt`) and one
//! line for the log's cause.

use super::checks::CheckRun;
use crate::exec::ExecOutcome;
use crate::lang::{EXCERPT_BYTES, EXCERPT_LINES, Language, RunModel};

pub(crate) use crate::verdict::HARNESS_OUTPUT_FILE;

/// A run's first error: its excerpt (at most [`EXCERPT_LINES`] lines and
/// [`EXCERPT_BYTES`] bytes) and its cause in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HarnessOutput {
    pub(super) excerpt: String,
    pub(super) cause: String,
    /// What the error is, in one line (the cause without what failed).
    pub(super) named: String,
}

/// The first error of `run`, when its tests could not be built, collected
/// or run at all, or (`missing`) some were not reported by a runner that
/// runs them in one command; searched in each command's output in order.
/// A per-test runner's missing tests are timeouts (a build that failed
/// says so in `uncollectable`), and a test's own output is no harness's.
pub(super) fn harness_output(
    run: &CheckRun,
    lang: &dyn Language,
    missing: bool,
) -> Option<HarnessOutput> {
    let missing = missing && lang.model() == RunModel::OneRun;
    if run.uncollectable.is_none() && run.harness.is_none() && !missing {
        return None;
    }
    run.commands
        .iter()
        .find_map(|command| first_error_in(&command.outcome, lang))
}

/// The first error of one command's output, its standard error first.
pub(super) fn first_error_in(out: &ExecOutcome, lang: &dyn Language) -> Option<HarnessOutput> {
    [out.stderr.to_text(), out.stdout.to_text()]
        .iter()
        .find_map(|text| first_error_of(text, lang))
}

fn first_error_of(text: &str, lang: &dyn Language) -> Option<HarnessOutput> {
    let lines: Vec<&str> = text.lines().collect();
    let found = lang.first_error(&lines)?;
    let mut excerpt = String::new();
    for line in lines.iter().skip(found.start).take(EXCERPT_LINES) {
        if excerpt.len() + line.len() + 1 > EXCERPT_BYTES {
            let room = EXCERPT_BYTES.saturating_sub(excerpt.len());
            let cut = (0..=room.min(line.len()))
                .rev()
                .find(|&i| line.is_char_boundary(i))
                .unwrap_or(0);
            excerpt.push_str(&line[..cut]);
            break;
        }
        excerpt.push_str(line);
        excerpt.push('\n');
    }
    let cause = crate::agent::cap_cause(&format!("{}: {}", found.what, found.named));
    Some(HarnessOutput {
        excerpt,
        cause,
        named: found.named,
    })
}

/// Writes `excerpt` as the attempt's [`HARNESS_OUTPUT_FILE`] under
/// `runs`, whole or not at all; the path written.
pub(super) fn save_harness_output(
    runs: &std::path::Path,
    excerpt: &str,
) -> std::io::Result<std::path::PathBuf> {
    let path = runs.join(HARNESS_OUTPUT_FILE);
    super::excerpts::save_artifact(&path, excerpt.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::{JavaScript, Python, Rust};

    #[test]
    fn rustc_s_first_error_names_the_cause() {
        let rust = &Rust;
        let stderr = "   Compiling x v0.1.0\nwarning: unused\n\nerror[E0425]: cannot find function `reply` in this scope\n --> tests/bob.rs:3:5\n  |\n3 |     reply(\"hi\");\n  |     ^^^^^ not found in this scope\n\nerror: could not compile `x`\n";
        let found = first_error_of(stderr, rust).unwrap();
        assert_eq!(
            found.cause,
            "the tests did not build: error[E0425]: cannot find function `reply` in this scope"
        );
        assert!(found.excerpt.starts_with("error[E0425]"));
        assert!(found.excerpt.contains("tests/bob.rs:3:5"));
        assert!(!found.excerpt.contains("Compiling"));
    }

    #[test]
    fn pytest_s_collection_error_is_named_by_its_e_line() {
        let py = &Python;
        let out = "==== ERRORS ====\n______ ERROR collecting bob_test.py ______\nbob_test.py:3: in <module>\n    from bob import response\nE   ImportError: cannot import name 'response' from 'bob'\n";
        let found = first_error_of(out, py).unwrap();
        assert_eq!(
            found.cause,
            "the tests did not collect: ERROR collecting bob_test.py: ImportError: cannot import name 'response' from 'bob'"
        );
    }

    #[test]
    fn jest_s_suite_failure_is_named_by_the_error_under_it() {
        let js = &JavaScript;
        let out = " FAIL  ./bob.spec.js\n  ● Test suite failed to run\n\n    SyntaxError: Unexpected token (3:4)\n\n      at Parser.raise (x.js:1:1)\n";
        let found = first_error_of(out, js).unwrap();
        assert_eq!(
            found.cause,
            "the tests did not collect: SyntaxError: Unexpected token (3:4)"
        );
        assert!(found.excerpt.starts_with(" FAIL  ./bob.spec.js"));
    }

    #[test]
    fn the_excerpt_is_bounded_and_the_cause_capped() {
        let rust = &Rust;
        let long = format!("error[E0001]: {}\n", "é".repeat(5_000));
        let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let found = first_error_of(&format!("{long}{many}"), rust).unwrap();
        assert!(found.excerpt.len() <= EXCERPT_BYTES);
        assert!(found.cause.chars().count() <= crate::agent::CAUSE_CAP + 1);
        let found = first_error_of(&format!("error[E0001]: x\n{many}"), rust).unwrap();
        assert_eq!(found.excerpt.lines().count(), EXCERPT_LINES);
        // Output without an error gives none.
        assert_eq!(first_error_of("all fine\n", rust), None);
    }
}
