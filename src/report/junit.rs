//! `junit.xml` for CI: one `testsuite` per family, one `testcase` per job
//! instance with the family as `classname`. A failed or cancelled job is a
//! `failure` whose message is its failure kind; a pending job is `skipped`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use super::model::{JobOutcome, JobResult, Report};
use super::summary::Summary;

/// Renders `junit.xml`.
pub fn render_junit(report: &Report) -> String {
    let summary = Summary::of(report);
    let mut junit = quick_junit::Report::new("agent-runtime");
    junit.set_time(Duration::from_millis(summary.totals.wall_ms));
    for family in &summary.families {
        let mut suite = TestSuite::new(family.family.as_str());
        suite.set_time(Duration::from_millis(family.tally.wall_ms));
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
        JobOutcome::Accepted => TestCaseStatus::success(),
        JobOutcome::Failed | JobOutcome::Cancelled => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let kind = match job.failure_kind {
                Some(kind) => kind.as_str(),
                None => job.outcome.as_str(),
            };
            status.set_message(kind).set_type(kind);
            if let Some(step) = job.timeline.iter().rev().find(|t| !t.ok) {
                status.set_description(format!(
                    "last failed step: attempt {} step {} {}: {}",
                    step.attempt, step.step, step.kind, step.detail
                ));
            }
            status
        }
        JobOutcome::Pending => {
            let mut status = TestCaseStatus::skipped();
            status.set_message("pending: the job has not finished");
            status
        }
    };
    let mut case = TestCase::new(job.instance.as_str(), status);
    case.set_classname(job.family.as_str());
    case.set_time(Duration::from_millis(job.wall_ms));
    case.set_system_out(line(job));
    case
}

/// The short summary put in `system-out`.
fn line(j: &JobResult) -> String {
    let mut s = format!("outcome={}", j.outcome);
    if let Some(kind) = j.failure_kind {
        s.push_str(&format!(" failure_kind={kind}"));
    }
    s.push_str(&format!(
        " attempts={}/{} steps={} invalid_decisions={} input_tokens={} output_tokens={} \
         provider_latency_ms={} wall_ms={} patch_bytes={} patch_files={} acceptance={} baseline={}\n",
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
    fn failure_message_is_the_failure_kind() {
        let xml = render_junit(&sample());
        assert!(xml.contains("<failure message=\"acceptance_failed\" type=\"acceptance_failed\">"));
        assert!(xml.contains("<failure message=\"invalid_baseline\""));
        assert!(xml.contains("<failure message=\"cancelled\""));
    }

    #[test]
    fn junit_snapshot() {
        insta::assert_snapshot!(render_junit(&sample()));
    }
}
