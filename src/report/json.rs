//! `results.json`: the [`Report`] itself plus its derived summaries, pretty
//! printed with a fixed key order. It parses back into a [`Report`] (the
//! summary keys are ignored then), so it doubles as the merge input format.

use serde::Serialize;

use super::compare::Comparison;
use super::model::{JobResult, Report};
use super::passk::PassAtK;
use super::summary::{FailureSummary, FamilySummary, Figures, ProviderSummary, Summary};

/// The document: the report's fields first, then what is derived from them.
#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    generated_at_ms: u64,
    sources: &'a [String],
    totals: &'a Figures,
    families: &'a [FamilySummary],
    providers: &'a [ProviderSummary],
    failures: &'a [FailureSummary],
    pass_at_k: Option<&'a PassAtK>,
    comparisons: &'a [Comparison],
    /// Each provider's flip rates, from a `--repeat` sweep.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    noise: &'a [super::noise::Noise],
    jobs: &'a [JobResult],
}

/// Renders `results.json`.
pub fn render_json(report: &Report) -> String {
    let mut out = Vec::new();
    // Writing into memory cannot fail.
    let _ = write_json(report, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes `results.json` into `out` as it is serialized, so a sweep of
/// thousands of jobs never holds the document's text.
pub(super) fn write_json(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let summary = Summary::of(report);
    let doc = Document {
        schema_version: report.schema_version,
        generated_at_ms: report.generated_at_ms,
        sources: &report.sources,
        totals: &summary.totals,
        families: &summary.families,
        providers: &summary.providers,
        failures: &summary.failures,
        pass_at_k: summary.pass_at_k.as_ref(),
        comparisons: &summary.comparisons,
        noise: &summary.noise,
        jobs: &report.jobs,
    };
    // Exact values; control and bidi characters written as `\uXXXX`.
    match crate::escape::write_json_pretty(&mut *out, &doc) {
        Ok(()) => {}
        // Plain structs, strings and finite numbers cannot fail to
        // serialize: a failure other than the writer's own would be a bug,
        // reported in the document rather than a panic.
        Err(e) if e.is_io() => return Err(std::io::Error::other(e)),
        Err(e) => write!(
            out,
            "{{\"schema_version\": {}, \"error\": {:?}}}",
            report.schema_version,
            e.to_string()
        )?,
    }
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;
    use crate::report::model::REPORT_SCHEMA_VERSION;

    #[test]
    fn results_json_round_trips_into_the_report() {
        let report = sample();
        let text = render_json(&report);
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back, report);
        assert_eq!(back.schema_version, REPORT_SCHEMA_VERSION);
    }

    #[test]
    fn schema_version_comes_first_and_summaries_are_present() {
        let text = render_json(&sample());
        assert!(text.starts_with("{\n  \"schema_version\": 11,"));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let job = &value["jobs"][0];
        assert_eq!(job["resources"]["cpu_ms"], 9_870);
        assert_eq!(job["resources"]["pids_peak"], 37);
        // An attempt's moments: a step holds its actions.
        let moments = job["timeline"][0]["moments"].as_array().unwrap();
        let command = moments
            .iter()
            .filter_map(|m| m["actions"].as_array())
            .flatten()
            .find(|e| e["kind"] == "command")
            .unwrap();
        assert_eq!(command["resources"]["peak_memory_bytes"], 412 << 20);
        assert_eq!(moments[0]["type"], "step");
        assert!(moments[0]["actions"][0].get("resources").is_none());
        assert_eq!(
            moments[1]["reply"].as_str().map(|r| r.contains("1..=n")),
            Some(true)
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["families"].as_array().map(Vec::len), Some(2));
        assert_eq!(value["providers"].as_array().map(Vec::len), Some(2));
        assert_eq!(value["failures"][0]["kind"], "tests_failed");
        assert_eq!(value["pass_at_k"]["k"], 3);
        assert_eq!(value["comparisons"][0]["a"], "alpha");
        assert_eq!(value["comparisons"][0]["p_value"], 1.0);
        assert_eq!(value["jobs"][1]["acceptance"], "failed");
        assert_eq!(value["jobs"][1]["outcome"], "failed");
        assert_eq!(value["jobs"][0]["failure_kind"], serde_json::Value::Null);
    }

    #[test]
    fn jobs_carry_the_per_test_verdict_after_the_baseline() {
        let text = render_json(&sample());
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let job = |instance: &str| {
            value["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|j| j["instance"] == instance)
                .unwrap()
                .clone()
        };
        let failed = job("tokenize@alpha#1");
        assert_eq!(failed["verified_per_test"], true);
        assert_eq!(
            (
                &failed["f2p_passed"],
                &failed["f2p_total"],
                &failed["p2p_passed"],
                &failed["p2p_total"]
            ),
            (&1.into(), &2.into(), &3.into(), &3.into())
        );
        assert_eq!(
            failed["failing_tests"],
            serde_json::json!(["test/acceptance::sums_to_n"])
        );
        assert_eq!(failed["failing_count"], 1);
        assert_eq!(failed["missing_tests"], serde_json::json!([]));
        assert_eq!(failed["baseline_reason"], serde_json::Value::Null);
        let missing = job("tokenize@alpha#3");
        assert_eq!(missing["missing_tests"].as_array().unwrap().len(), 20);
        assert_eq!(missing["missing_count"], 24);
        let exit = job("tokenize@beta#3");
        assert_eq!(exit["verified_per_test"], false);
        assert_eq!(exit["f2p_total"], serde_json::Value::Null);
        assert_eq!(
            job("parse_header")["baseline_reason"],
            "every test passes at baseline: the task is already solved"
        );
        // Key order: the per-test keys sit between `baseline` and `timeline`.
        let keys: Vec<&String> = failed.as_object().unwrap().keys().collect();
        let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
        assert!(at("baseline") < at("baseline_reason"));
        assert!(at("baseline_reason") < at("verified_per_test"));
        assert!(at("missing_count") < at("timeline"));
    }

    #[test]
    fn a_version_1_document_still_parses_without_verdicts() {
        let mut value: serde_json::Value = serde_json::from_str(&render_json(&sample())).unwrap();
        value["schema_version"] = 1.into();
        for job in value["jobs"].as_array_mut().unwrap() {
            let job = job.as_object_mut().unwrap();
            for key in [
                "baseline_reason",
                "verified_per_test",
                "f2p_passed",
                "f2p_total",
                "p2p_passed",
                "p2p_total",
                "failing_tests",
                "failing_count",
                "missing_tests",
                "missing_count",
            ] {
                assert!(job.remove(key).is_some(), "{key}");
            }
        }
        let back: Report = serde_json::from_value(value).unwrap();
        assert_eq!(back.schema_version, 1);
        assert!(back.jobs.iter().all(|j| !j.tests.verified_per_test
            && j.tests.failing_tests.is_empty()
            && j.baseline_reason.is_none()));
    }

    #[test]
    fn intervals_sit_beside_their_estimates() {
        let value: serde_json::Value = serde_json::from_str(&render_json(&sample())).unwrap();
        // Totals: 2 succeeded of 10 finished.
        let ci = &value["totals"]["pass_rate_ci"];
        let low = ci["low"].as_f64().unwrap();
        let high = ci["high"].as_f64().unwrap();
        assert!(
            (low - 0.056_7).abs() < 1e-4 && (high - 0.509_8).abs() < 1e-4,
            "{ci}"
        );
        let keys: Vec<&String> = value["totals"].as_object().unwrap().keys().collect();
        let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
        assert_eq!(at("pass_rate_ci"), at("pass_rate") + 1);
        let provider = &value["pass_at_k"]["providers"][0];
        for key in ["pass_at_1_ci", "pass_at_k_ci"] {
            assert!(provider[key]["low"].is_f64(), "{key}: {provider}");
        }
        assert_eq!(value["pass_at_k"]["families"][0]["family"], "parsing");
        assert_eq!(value["pass_at_k"]["groups"][0]["family"], "parsing");
        let c = &value["comparisons"][0];
        assert_eq!(
            (&c["a_wins"], &c["b_wins"], &c["ties"]),
            (&1.into(), &0.into(), &0.into())
        );
        assert_eq!(c["significant"], false);
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(render_json(&sample()), render_json(&sample()));
    }

    #[test]
    fn json_snapshot() {
        // Intervals and estimates to six places: their last digits may
        // differ with the platform's math library.
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(r"(\d+\.\d{6})\d+", "$1");
        settings.bind(|| insta::assert_snapshot!(render_json(&sample())));
    }
}
