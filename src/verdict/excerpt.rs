//! What each failing or missing test of an acceptance run said of its own:
//! libtest's `---- NAME stdout ----` block of the test's own run, the text
//! of a JUnit `<failure>` (pytest's longrepr), capped. The runner keeps
//! them as one artifact per attempt, [`EXCERPTS_FILE`] under
//! `DATA/runs/<job>/<n>/`, never in the log; reports and the viewer read
//! it back with [`read_excerpts`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::Verdict;

/// Where the excerpts of an attempt lie, relative to its artifacts dir.
pub const EXCERPTS_FILE: &str = "tests/excerpts.json";
/// The artifact, under `runs/<job>/<n>/`, that keeps the first error of a
/// check whose tests did not build or collect (escaped, at most 40 lines
/// and 4 KiB).
pub const HARNESS_OUTPUT_FILE: &str = "harness_output.txt";
/// Version of [`TestExcerpts`] as written.
pub const EXCERPTS_VERSION: u32 = 1;
/// Bytes kept of one test's output: its head and its tail.
pub const EXCERPT_BYTES: usize = 4096;
/// Tests with an excerpt per attempt; the rest are counted.
pub const EXCERPTS_KEPT: usize = 50;

/// The excerpts of one acceptance run: its failing tests, then its missing
/// ones, in the verdict's order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestExcerpts {
    /// [`EXCERPTS_VERSION`].
    pub version: u32,
    pub tests: Vec<TestExcerpt>,
    /// Failing and missing tests beyond the [`EXCERPTS_KEPT`] listed.
    #[serde(default)]
    pub left_out: u32,
}

/// One test that did not pass, and what it printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestExcerpt {
    /// Its inventory name.
    pub name: String,
    /// `failing` (reported, not passed) or `missing` (not reported at all).
    pub status: String,
    /// It was killed at its timeout.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// Its own output, at most about [`EXCERPT_BYTES`] of it: the head and
    /// the tail, with a line between them saying how many bytes are left
    /// out. `None` when the harness kept none of the test's own (a JUnit
    /// test that was never reported, say).
    pub excerpt: Option<String>,
}

/// The excerpts of `verdict`'s failing and missing tests from `outputs`
/// (what each reported test printed of its own, by the results' names,
/// each already cut with [`cap`]).
/// A failing test function (an inventory of functions) takes the outputs
/// of its failed cases, `function_of` saying which case is whose.
pub fn excerpts_of(
    verdict: &Verdict,
    outputs: &BTreeMap<String, String>,
    function_of: &dyn Fn(&str) -> String,
) -> TestExcerpts {
    let marked = verdict
        .failing
        .iter()
        .map(|n| (n, "failing"))
        .chain(verdict.missing.iter().map(|n| (n, "missing")));
    let total = verdict.failing.len() + verdict.missing.len();
    let tests = marked
        .take(EXCERPTS_KEPT)
        .map(|(name, status)| TestExcerpt {
            name: name.clone(),
            status: status.to_string(),
            timed_out: verdict.timed_out.contains(name),
            excerpt: output_of(name, outputs, function_of),
        })
        .collect::<Vec<_>>();
    TestExcerpts {
        version: EXCERPTS_VERSION,
        left_out: u32::try_from(total - tests.len()).unwrap_or(u32::MAX),
        tests,
    }
}

/// A test's own output: under its name, or joined from its cases' (and
/// cut again).
fn output_of(
    name: &str,
    outputs: &BTreeMap<String, String>,
    function_of: &dyn Fn(&str) -> String,
) -> Option<String> {
    if let Some(text) = outputs.get(name) {
        return Some(text.clone());
    }
    let cases: Vec<String> = outputs
        .iter()
        .filter(|(case, _)| function_of(case) == name)
        .map(|(case, text)| format!("{case}:\n{text}"))
        .collect();
    (!cases.is_empty()).then(|| cap(&cases.join("\n\n"), EXCERPT_BYTES))
}

/// `text` cut to about `max` bytes: its head and its tail, at character
/// boundaries, with a line saying how much is left out between them.
pub fn cap(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let half = max / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n… {} bytes left out …\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// Reads an excerpts file; `None` when it does not parse or is of a
/// version this build does not know (an artifact is never trusted to be
/// well-formed).
pub fn read_excerpts(text: &str) -> Option<TestExcerpts> {
    serde_json::from_str::<TestExcerpts>(text)
        .ok()
        .filter(|e| e.version == EXCERPTS_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(failing: &[&str], missing: &[&str]) -> Verdict {
        Verdict {
            failing: failing.iter().map(|s| s.to_string()).collect(),
            missing: missing.iter().map(|s| s.to_string()).collect(),
            timed_out: vec!["t::slow".into()],
            ..Verdict::default()
        }
    }

    #[test]
    fn failing_then_missing_tests_each_with_their_own_output() {
        let outputs = BTreeMap::from([
            ("t::a".to_string(), "left: 1\nright: 2".to_string()),
            ("t::f[1]".to_string(), "case one".to_string()),
            ("t::f[2]".to_string(), "case two".to_string()),
            ("t::passed".to_string(), "never shown".to_string()),
        ]);
        let function_of = |n: &str| n.split('[').next().unwrap_or(n).to_string();
        let e = excerpts_of(
            &verdict(&["t::a", "t::f", "t::slow"], &["t::gone"]),
            &outputs,
            &function_of,
        );
        assert_eq!(e.version, EXCERPTS_VERSION);
        assert_eq!(e.left_out, 0);
        let names: Vec<(&str, &str)> = e
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.status.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("t::a", "failing"),
                ("t::f", "failing"),
                ("t::slow", "failing"),
                ("t::gone", "missing")
            ]
        );
        assert_eq!(e.tests[0].excerpt.as_deref(), Some("left: 1\nright: 2"));
        assert_eq!(
            e.tests[1].excerpt.as_deref(),
            Some("t::f[1]:\ncase one\n\nt::f[2]:\ncase two")
        );
        assert!(e.tests[2].timed_out);
        assert_eq!(e.tests[3].excerpt, None);
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(read_excerpts(&text), Some(e));
        assert_eq!(read_excerpts("{\"version\":99,\"tests\":[]}"), None);
        assert_eq!(read_excerpts("not json"), None);
    }

    #[test]
    fn outputs_and_tests_are_capped() {
        let long = format!("HEAD{}TAIL", "é".repeat(5_000));
        let cut = cap(&long, EXCERPT_BYTES);
        assert!(cut.len() < EXCERPT_BYTES + 64, "{}", cut.len());
        assert!(cut.starts_with("HEAD") && cut.ends_with("TAIL"));
        assert!(cut.contains("bytes left out"));
        assert_eq!(cap("short", EXCERPT_BYTES), "short");

        let many: Vec<String> = (0..EXCERPTS_KEPT + 7).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let e = excerpts_of(&verdict(&refs, &[]), &BTreeMap::new(), &|n| n.to_string());
        assert_eq!(e.tests.len(), EXCERPTS_KEPT);
        assert_eq!(e.left_out, 7);
        let cases = BTreeMap::from([
            ("f[1]".to_string(), cap(&long, EXCERPT_BYTES)),
            ("f[2]".to_string(), cap(&long, EXCERPT_BYTES)),
        ]);
        let function_of = |n: &str| n.split('[').next().unwrap_or(n).to_string();
        let e = excerpts_of(&verdict(&["f"], &[]), &cases, &function_of);
        let joined = e.tests[0].excerpt.as_deref().unwrap();
        assert!(joined.len() < EXCERPT_BYTES + 64);
        assert!(joined.starts_with("f[1]:\nHEAD") && joined.ends_with("TAIL"));
    }
}
