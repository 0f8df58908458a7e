//! The cause of a failed command in one line, read from its output: the
//! first compiler error, the first failing test, the first panic. Pure.
//!
//! It is the one piece of a command's output that goes into the log (on a
//! `verify` or `acceptance` event), so reports can say why without reading
//! artifacts; it is capped, and only ever a line the tools print about the
//! code (an error, a test name), never the command's arguments.

/// Longest cause kept, in characters.
pub(crate) const CAUSE_CAP: usize = 200;

/// The first line of `stderr` then `stdout` that says why a build or a
/// test run failed, trimmed and capped.
pub(crate) fn first_cause(stdout: &str, stderr: &str) -> Option<String> {
    let interesting = |line: &str| {
        let line = line.trim_start();
        line.starts_with("error[")
            || line.starts_with("error:")
            || (line.starts_with("test ") && line.ends_with(" ... FAILED"))
            || line.contains("panicked at")
            || line.starts_with("FAILED ")
            || line.starts_with("E   ")
    };
    [stderr, stdout]
        .iter()
        .flat_map(|text| text.lines())
        .find(|line| interesting(line))
        .map(|line| cap(line.trim()))
}

/// [`first_cause`] of one text, or else its first line, capped: the
/// cause of a command that did not run (a refusal, a missing program).
pub(super) fn cause_line(text: &str) -> String {
    first_cause("", text).unwrap_or_else(|| cap(text.lines().next().unwrap_or_default()))
}

/// `line` cut to [`CAUSE_CAP`] characters, `…` marking a cut.
pub(crate) fn cap(line: &str) -> String {
    cap_to(line, CAUSE_CAP)
}

/// `line` cut to `max` characters, `…` marking a cut.
pub(crate) fn cap_to(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_compiler_error_then_a_failing_test_then_a_panic() {
        let stderr = "   Compiling x v0.1.0\nerror[E0308]: mismatched types\n --> src/lib.rs:3:5\nerror: could not compile `x`\n";
        assert_eq!(
            first_cause("", stderr).as_deref(),
            Some("error[E0308]: mismatched types")
        );
        let stdout = "running 2 tests\ntest a ... ok\ntest b ... FAILED\n";
        assert_eq!(
            first_cause(stdout, "").as_deref(),
            Some("test b ... FAILED")
        );
        assert_eq!(first_cause("all good\n", "warning: unused\n"), None);
        let long = format!("error: {}", "x".repeat(500));
        assert_eq!(
            first_cause("", &long).unwrap().chars().count(),
            CAUSE_CAP + 1
        );
    }
}
