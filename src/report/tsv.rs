//! `results.tsv`: one header row, then one row per job with raw numbers
//! (milliseconds, bytes, tokens), for spreadsheets and shell pipelines.

use super::model::{JobResult, Report};

/// Separates test names within one field (`failing_tests`, `missing_tests`).
pub(super) const NAME_SEPARATOR: &str = ";";

/// Column names, in order.
pub const TSV_COLUMNS: [&str; 48] = [
    "instance",
    "job",
    "family",
    "provider",
    "repeat",
    "outcome",
    "failure_kind",
    "attempts",
    "max_attempts",
    "steps",
    "invalid_decisions",
    "input_tokens",
    "output_tokens",
    "provider_calls",
    "provider_latency_ms",
    "wall_ms",
    "patch_bytes",
    "patch_files",
    "acceptance",
    "baseline",
    "verified_per_test",
    "f2p_passed",
    "f2p_total",
    "p2p_passed",
    "p2p_total",
    "failing_count",
    "missing_count",
    "failing_tests",
    "missing_tests",
    "baseline_reason",
    "cost_usd",
    "tool_ms",
    "verify_ms",
    "acceptance_ms",
    "wait_ms",
    "setup_ms",
    "manifest_hash",
    "integrity_signals",
    "canaries",
    "twins",
    "canary_forged",
    "integrity",
    "cpu_ms",
    "peak_memory_bytes",
    "pids_peak",
    "agent",
    "agent_mode",
    "stray_files",
];

/// Renders `results.tsv`.
pub fn render_tsv(report: &Report) -> String {
    let mut out = TSV_COLUMNS.join("\t");
    out.push('\n');
    for job in &report.jobs {
        out.push_str(&row(job).join("\t"));
        out.push('\n');
    }
    out
}

fn row(j: &JobResult) -> [String; 48] {
    let t = &j.tests;
    let integrity = j.integrity.as_ref();
    let agent = j.agent_words();
    let number = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
    // Counts of tests only mean something for a job verified per test.
    let tally = |n: u32| {
        if t.verified_per_test {
            n.to_string()
        } else {
            String::new()
        }
    };
    [
        field(&j.instance),
        field(&j.job),
        field(&j.family),
        field(j.provider.as_deref().unwrap_or("")),
        j.repeat.map(|r| r.to_string()).unwrap_or_default(),
        j.outcome.as_str().to_string(),
        j.failure_str().to_string(),
        j.attempts.to_string(),
        j.max_attempts.to_string(),
        j.steps.to_string(),
        j.invalid_decisions.to_string(),
        j.input_tokens.to_string(),
        j.output_tokens.to_string(),
        j.provider_calls.to_string(),
        j.provider_latency_ms.to_string(),
        j.wall_ms.to_string(),
        j.patch_bytes.to_string(),
        j.patch_files.to_string(),
        j.acceptance.as_str().to_string(),
        j.baseline.as_str().to_string(),
        t.verified_per_test.to_string(),
        number(t.f2p_passed),
        number(t.f2p_total),
        number(t.p2p_passed),
        number(t.p2p_total),
        tally(t.failing_count),
        tally(t.missing_count),
        names(&t.failing_tests),
        names(&t.missing_tests),
        field(j.baseline_reason.as_deref().unwrap_or("")),
        j.cost_usd.map(|c| format!("{c:.6}")).unwrap_or_default(),
        j.time.tool_ms.to_string(),
        j.time.verify_ms.to_string(),
        j.time.acceptance_ms.to_string(),
        j.time.wait_ms.to_string(),
        j.time.setup_ms.to_string(),
        field(j.manifest_hash.as_deref().unwrap_or("")),
        integrity
            .map(|r| r.signal_count.to_string())
            .unwrap_or_default(),
        integrity
            .map(|r| r.canaries.to_string())
            .unwrap_or_default(),
        integrity.map(|r| r.twins.to_string()).unwrap_or_default(),
        integrity
            .map(|r| r.forged().to_string())
            .unwrap_or_default(),
        integrity.map(evidence).unwrap_or_default(),
        figure(j.resources.cpu_ms),
        figure(j.resources.peak_memory_bytes),
        figure(j.resources.pids_peak),
        field(
            &agent
                .as_ref()
                .map(|(name, _)| name.clone())
                .unwrap_or_default(),
        ),
        agent.map_or("", |(_, mode)| mode.as_str()).to_string(),
        names(j.stray_files()),
    ]
}

/// A figure that may be unknown: empty then.
fn figure(n: Option<u64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

/// Every piece of evidence of a record in one field: forged canaries,
/// then each signal's line.
fn evidence(record: &crate::protocol::Integrity) -> String {
    super::integrity_text::evidence(record)
        .iter()
        .map(|line| field(line))
        .collect::<Vec<_>>()
        .join(NAME_SEPARATOR)
}

/// Test names in one field, in order.
fn names(names: &[String]) -> String {
    names
        .iter()
        .map(|n| field(n))
        .collect::<Vec<_>>()
        .join(NAME_SEPARATOR)
}

/// Writes tabs, line breaks and every other control or bidi character as a
/// visible escape (`\u{9}`), so a field can never split a row or a column
/// nor reorder what a terminal shows.
pub(super) fn field(text: &str) -> String {
    crate::escape::line(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;

    #[test]
    fn fields_show_tabs_newlines_and_bidi_as_escapes() {
        assert_eq!(field("a\tb\nc\r\nd"), "a\\u{9}b\\u{a}c\\u{d}\\u{a}d");
        assert_eq!(field("\x1b]0;x\x07\u{202e}"), "\\u{1b}]0;x\\u{7}\\u{202e}");
    }

    #[test]
    fn one_row_per_job_with_every_column() {
        let report = sample();
        let tsv = render_tsv(&report);
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(lines.len(), report.jobs.len() + 1);
        assert_eq!(lines[0].split('\t').collect::<Vec<_>>(), TSV_COLUMNS);
        for line in &lines {
            assert_eq!(line.split('\t').count(), TSV_COLUMNS.len(), "{line}");
        }
        assert!(lines[1].starts_with("off_by_one\toff_by_one\toff_by_one\t\t\tsucceeded\t\t1\t2\t5\t0\t12400\t830\t5\t4210\t18350\t"));
    }

    #[test]
    fn hostile_names_stay_in_their_cell() {
        let mut report = sample();
        report.jobs[0].instance = "a\tb\nc".into();
        let tsv = render_tsv(&report);
        assert_eq!(tsv.lines().count(), report.jobs.len() + 1);
        assert!(tsv.contains("a\\u{9}b\\u{a}c\t"));
    }

    #[test]
    fn per_test_columns_hold_counts_names_and_the_baseline_reason() {
        let report = sample();
        let tsv = render_tsv(&report);
        let rows: Vec<Vec<&str>> = tsv.lines().map(|l| l.split('\t').collect()).collect();
        let column = |name: &str| TSV_COLUMNS.iter().position(|c| *c == name).unwrap();
        let cell = |instance: &str, name: &str| {
            rows.iter().find(|r| r[0] == instance).unwrap()[column(name)].to_string()
        };
        assert_eq!(cell("tokenize@alpha#1", "verified_per_test"), "true");
        assert_eq!(cell("tokenize@alpha#1", "f2p_passed"), "1");
        assert_eq!(cell("tokenize@alpha#1", "f2p_total"), "2");
        assert_eq!(cell("tokenize@alpha#1", "p2p_total"), "3");
        assert_eq!(
            cell("tokenize@alpha#1", "failing_tests"),
            "test/acceptance::sums_to_n"
        );
        assert_eq!(cell("tokenize@alpha#3", "missing_count"), "24");
        assert_eq!(
            cell("tokenize@alpha#3", "missing_tests")
                .split(NAME_SEPARATOR)
                .count(),
            20
        );
        assert_eq!(
            cell("render_cell", "failing_tests"),
            "render::cell_<b>|</b>;render::`tick` & <script>\\u{a}next"
        );
        // Judged by exit status: not verified, no counts.
        assert_eq!(cell("tokenize@beta#3", "verified_per_test"), "false");
        assert_eq!(cell("tokenize@beta#3", "f2p_total"), "");
        assert_eq!(cell("tokenize@beta#3", "failing_count"), "");
        assert_eq!(
            cell("parse_header", "baseline_reason"),
            "every test passes at baseline: the task is already solved"
        );
    }

    #[test]
    fn tsv_snapshot() {
        insta::assert_snapshot!(render_tsv(&sample()));
    }
}
