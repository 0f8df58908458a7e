//! `junit.xml` for CI: one `testsuite` per family, one `testcase` per job
//! instance with the family as `classname`. A failed or cancelled job is a
//! `failure` whose message starts with its failure kind and names the first
//! failing or missing test; a pending job is `skipped`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use super::model::{JobOutcome, JobResult, Report};
use super::summary::Summary;
use super::verdict_text::{self, NOT_VERIFIED};
use crate::escape;
use crate::protocol::FailureKind;

/// Renders `junit.xml`.
pub fn render_junit(report: &Report) -> String {
    let summary = Summary::of(report);
    let mut junit = quick_junit::Report::new("agent-runtime");
    junit.set_time(Duration::from_millis(summary.totals.wall_ms));
    for family in &summary.families {
        let mut suite = TestSuite::new(escape::line(&family.family).into_owned());
        suite.set_time(Duration::from_millis(family.figures.wall_ms));
        suite.add_test_cases(
            report
                .jobs
                .iter()
                .filter(|j| j.family == family.family)
                .map(case),
        );
        junit.add_test_suite(suite);
    }
    // Serializing owned strings to memory only fails on a writer error, which a
    // `Vec` never raises; keep the document well-formed regardless.
    junit.to_string().unwrap_or_else(|e| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"agent-runtime\" tests=\"0\" failures=\"0\" errors=\"1\"><!-- {} --></testsuites>\n",
            e.to_string().replace("--", "- -")
        )
    })
}

fn case(job: &JobResult) -> TestCase {
    let status = match job.outcome {
        JobOutcome::Succeeded => TestCaseStatus::success(),
        JobOutcome::Failed | JobOutcome::Cancelled => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let kind = match job.failure_kind {
                Some(kind) => kind.as_str(),
                None => job.outcome.as_str(),
            };
            // Names, causes and step details come from the job's model and
            // commands: visible escapes, never raw control characters (which
            // XML 1.0 cannot even hold).
            status
                .set_message(escape::line(&message(job, kind)).into_owned())
                .set_type(kind);
            let text = description(job);
            if !text.is_empty() {
                status.set_description(escape::block(&text).into_owned());
            }
            status
        }
        JobOutcome::Pending => {
            let mut status = TestCaseStatus::skipped();
            status.set_message("pending: the job has not finished");
            status
        }
    };
    let mut case = TestCase::new(escape::line(&job.instance).into_owned(), status);
    case.set_classname(escape::line(&job.family).into_owned());
    case.set_time(Duration::from_millis(job.wall_ms));
    case.set_system_out(line(job));
    if let Some((agent, mode)) = job.agent_words() {
        case.add_property(quick_junit::Property::new(
            "agent",
            escape::line(&agent).into_owned(),
        ));
        case.add_property(quick_junit::Property::new("agent_mode", mode.as_str()));
    }
    if !job.stray_files().is_empty() {
        let strays = job.stray_files().join(" ");
        case.add_property(quick_junit::Property::new(
            "stray_files",
            escape::line(&strays).into_owned(),
        ));
    }
    case
}

/// `tests_failed: test/a::b failed and 1 more (F2P 1/2, P2P 3/3)`: the
/// kind, then what the verdict says about it.
fn message(j: &JobResult, kind: &str) -> String {
    let counts = verdict_text::counts(&j.tests);
    if let Some((name, mark)) = verdict_text::first(j) {
        let total = u64::from(j.tests.failing_count) + u64::from(j.tests.missing_count);
        let mut s = format!("{kind}: {name} {}", mark.verb());
        if total > 1 {
            s.push_str(&format!(" and {} more", total - 1));
        }
        if let Some(counts) = counts {
            s.push_str(&format!(" ({counts})"));
        }
        return s;
    }
    if let Some(counts) = counts {
        return format!("{kind} ({counts})");
    }
    if j.failure_kind == Some(FailureKind::AcceptanceFailed) {
        return format!("{kind}: {NOT_VERIFIED}");
    }
    if j.failure_kind == Some(FailureKind::InvalidBaseline)
        && let Some(reason) = &j.baseline_reason
    {
        return format!("{kind}: {}", verdict_text::one_line(reason));
    }
    if let Some(cause) = &j.cause {
        return format!("{kind}: {}", verdict_text::one_line(cause));
    }
    kind.to_string()
}

/// The failure's text: the per-test verdict with every name kept, the
/// baseline's reason, and the last failed step.
fn description(j: &JobResult) -> String {
    let mut lines = Vec::new();
    if let Some(summary) = verdict_text::summary(j) {
        lines.push(format!("tests: {summary}"));
    }
    let (shown, rest) = verdict_text::names(&j.tests);
    for (name, mark) in shown {
        lines.push(format!("{}: {name}", mark.as_str()));
    }
    if let Some(more) = verdict_text::more(rest) {
        lines.push(more);
    }
    if let Some(reason) = &j.baseline_reason {
        lines.push(format!("baseline: {}", verdict_text::one_line(reason)));
    }
    if let Some(record) = &j.integrity {
        let evidence = super::integrity_text::evidence(record);
        lines.extend(evidence.iter().map(|line| format!("integrity: {line}")));
    }
    // The attempt's own end only repeats the failure kind: the step
    // before it says what went wrong.
    let failed = j.timeline.iter().rev().find_map(|a| {
        let actions: Vec<_> = a.actions().collect();
        actions
            .into_iter()
            .rev()
            .find(|(_, t)| !t.ok && t.kind != crate::protocol::EntryKind::Attempt)
            .map(|(step, t)| (a.attempt, step, t))
    });
    if let Some((attempt, step, action)) = failed {
        let place = match step {
            0 => format!("attempt {attempt}"),
            n => format!("attempt {attempt}, step {n}"),
        };
        lines.push(format!(
            "last failed step: {place} ({}): {}",
            action.kind, action.text
        ));
    }
    lines.join("\n")
}

/// The short summary put in `system-out`.
fn line(j: &JobResult) -> String {
    let mut s = format!("outcome={}", j.outcome);
    if let Some(kind) = j.failure_kind {
        s.push_str(&format!(" failure_kind={kind}"));
    }
    s.push_str(&format!(
        " attempts={}/{} steps={} invalid_decisions={} input_tokens={} output_tokens={} \
         provider_latency_ms={} wall_ms={} patch_bytes={} patch_files={} acceptance={} baseline={}",
        j.attempts,
        j.max_attempts,
        j.steps,
        j.invalid_decisions,
        j.input_tokens,
        j.output_tokens,
        j.provider_latency_ms,
        j.wall_ms,
        j.patch_bytes,
        j.patch_files,
        j.acceptance,
        j.baseline,
    ));
    if let Some(cost) = j.cost_usd {
        s.push_str(&format!(" cost_usd={cost:.6}"));
    }
    s.push_str(&format!(
        " tool_ms={} setup_ms={} verify_ms={} acceptance_ms={} wait_ms={}",
        j.time.tool_ms, j.time.setup_ms, j.time.verify_ms, j.time.acceptance_ms, j.time.wait_ms
    ));
    let t = &j.tests;
    s.push_str(&format!(" verified_per_test={}", t.verified_per_test));
    if t.verified_per_test {
        s.push_str(&format!(
            " f2p={}/{} p2p={}/{} failing={} missing={}",
            t.f2p_passed.unwrap_or(0),
            t.f2p_total.unwrap_or(0),
            t.p2p_passed.unwrap_or(0),
            t.p2p_total.unwrap_or(0),
            t.failing_count,
            t.missing_count,
        ));
    }
    if let Some(record) = &j.integrity {
        s.push_str(&format!(
            " integrity_signals={} canaries={} twins={} canary_forged={}",
            record.signal_count,
            record.canaries,
            record.twins,
            record.forged()
        ));
        // The evidence, one line each, escaped: it names files and tests.
        for line in super::integrity_text::evidence(record) {
            s.push_str(&format!("\nintegrity: {}", escape::line(&line)));
        }
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use quick_xml::Reader;
    use quick_xml::events::Event;

    use super::*;
    use crate::report::fixture::sample;

    /// Element name -> how often it occurs, plus each testcase's attributes.
    fn structure(xml: &str) -> (BTreeMap<String, usize>, Vec<BTreeMap<String, String>>) {
        let mut reader = Reader::from_str(xml);
        let mut counts = BTreeMap::new();
        let mut cases = Vec::new();
        loop {
            match reader.read_event().unwrap() {
                Event::Eof => break,
                Event::Start(e) | Event::Empty(e) => {
                    let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                    if name == "testcase" {
                        cases.push(
                            e.attributes()
                                .map(|a| {
                                    let a = a.unwrap();
                                    (
                                        String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                                        String::from_utf8(a.value.to_vec()).unwrap(),
                                    )
                                })
                                .collect(),
                        );
                    }
                    *counts.entry(name).or_insert(0) += 1;
                }
                _ => {}
            }
        }
        (counts, cases)
    }

    #[test]
    fn junit_parses_with_one_testcase_per_job() {
        let report = sample();
        let xml = render_junit(&report);
        let (counts, cases) = structure(&xml);
        assert_eq!(counts["testsuites"], 1);
        assert_eq!(counts["testsuite"], 2);
        assert_eq!(counts["testcase"], report.jobs.len());
        // 7 failed + 1 cancelled; the pending job is skipped.
        assert_eq!(counts["failure"], 8);
        assert_eq!(counts["skipped"], 1);
        assert_eq!(counts["system-out"], report.jobs.len());
        let hostile = cases.iter().find(|c| c["name"] == "render_cell").unwrap();
        assert_eq!(hostile["classname"], "off_by_one");
        assert_eq!(hostile["time"], "61.000");
    }

    #[test]
    fn failure_message_is_the_failure_kind_and_the_first_test() {
        let xml = render_junit(&sample());
        assert!(xml.contains(
            "<failure message=\"tests_failed: test/acceptance::sums_to_n failed (F2P 1/2, P2P 3/3)\" type=\"tests_failed\">"
        ));
        assert!(xml.contains(
            "<failure message=\"tests_missing: test/acceptance::case_01 missing and 23 more (F2P 0/2, P2P 0/22)\" type=\"tests_missing\">"
        ));
        assert!(xml.contains(
            "<failure message=\"acceptance_failed: not verified per test\" type=\"acceptance_failed\">"
        ));
        assert!(xml.contains(
            "<failure message=\"invalid_baseline: every test passes at baseline: the task is already solved\" type=\"invalid_baseline\">"
        ));
        assert!(xml.contains("<failure message=\"patch_rejected\" type=\"patch_rejected\""));
        assert!(xml.contains("<failure message=\"cancelled\""));
        // Names from jobs are escaped in the attribute.
        assert!(xml.contains(
            "message=\"tests_failed: render::cell_&lt;b&gt;|&lt;/b&gt; failed and 1 more"
        ));
    }

    #[test]
    fn failure_text_lists_every_kept_name_and_the_rest_as_a_count() {
        let report = sample();
        let missing = report
            .jobs
            .iter()
            .find(|j| j.instance == "tokenize@alpha#3")
            .unwrap();
        let text = description(missing);
        assert!(text.starts_with("tests: F2P 0/2, P2P 0/22\nmissing: test/acceptance::case_01\n"));
        assert_eq!(text.matches("missing: ").count(), 20);
        assert!(text.ends_with("missing: test/acceptance::case_20\nand 4 more"));
        let system_out = line(missing);
        assert!(
            system_out.ends_with(" verified_per_test=true f2p=0/2 p2p=0/22 failing=0 missing=24\n")
        );
        let exit = report
            .jobs
            .iter()
            .find(|j| j.instance == "tokenize@beta#3")
            .unwrap();
        assert_eq!(description(exit), "tests: not verified per test");
        assert!(line(exit).contains(" baseline=passed "));
        assert!(line(exit).ends_with(" verified_per_test=false\n"));
    }

    #[test]
    fn junit_snapshot() {
        insta::assert_snapshot!(render_junit(&sample()));
    }
}
