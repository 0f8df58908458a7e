//! `results.json`: the [`Report`] itself plus its derived summaries, pretty
//! printed with a fixed key order. It parses back into a [`Report`] (the
//! summary keys are ignored then), so it doubles as the merge input format.

use serde::Serialize;

use super::model::{JobResult, Report};
use super::passk::PassAtK;
use super::summary::{FailureSummary, FamilySummary, ProviderSummary, Summary, Tally};

/// The document: the report's fields first, then what is derived from them.
#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    generated_at_ms: u64,
    sources: &'a [String],
    totals: &'a Tally,
    families: &'a [FamilySummary],
    providers: &'a [ProviderSummary],
    failures: &'a [FailureSummary],
    pass_at_k: Option<&'a PassAtK>,
    jobs: &'a [JobResult],
}

/// Renders `results.json`.
pub fn render_json(report: &Report) -> String {
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
        jobs: &report.jobs,
    };
    // Plain structs, strings and finite numbers cannot fail to serialize; a
    // failure here would be a bug, reported in the document rather than a panic.
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|e| {
        format!(
            "{{\"schema_version\": {}, \"error\": {:?}}}",
            report.schema_version,
            e.to_string()
        )
    });
    text.push('\n');
    text
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
        assert!(text.starts_with("{\n  \"schema_version\": 1,"));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["families"].as_array().map(Vec::len), Some(2));
        assert_eq!(value["providers"].as_array().map(Vec::len), Some(2));
        assert_eq!(value["failures"][0]["kind"], "acceptance_failed");
        assert_eq!(value["pass_at_k"]["k"], 3);
        assert_eq!(value["jobs"][1]["acceptance"], "failed");
        assert_eq!(value["jobs"][1]["outcome"], "failed");
        assert_eq!(value["jobs"][0]["failure_kind"], serde_json::Value::Null);
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(render_json(&sample()), render_json(&sample()));
    }
}
