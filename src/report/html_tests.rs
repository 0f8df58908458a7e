//! The page's tests: what it references, how text from jobs is escaped
//! and kept as data, and what its tables and details hold.

use super::*;
use crate::report::fixture::sample;
use crate::report::html_detail::{NOT_AVAILABLE, PATCH_LINES, TRACE_HINT};
use serde_json::Value;

const DATA_OPEN: &str = "<script type=\"application/json\" id=\"report-data\">";

/// The page's data document, as the script reads it.
fn data(html: &str) -> Value {
    let start = html.find(DATA_OPEN).unwrap() + DATA_OPEN.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// Every string in the details of job `i`, in order.
fn detail_text(data: &Value, i: usize) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(&detail(data, i), &mut out);
    out
}

/// The blocks of job `i`'s details (a JSON document of its own).
fn detail(data: &Value, i: usize) -> Value {
    serde_json::from_str(data["details"][i].as_str().unwrap()).unwrap()
}

fn table<'a>(data: &'a Value, id: &str) -> &'a Value {
    data["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap()
}

#[test]
fn escape_covers_markup_and_quotes() {
    assert_eq!(
        escape("<a href='x'>&\"</a>"),
        "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
    );
}

#[test]
fn html_references_nothing_outside_itself() {
    let html = render_html(&sample());
    assert!(!html.contains("http://"));
    assert!(!html.contains("https://"));
    assert!(!html.contains("src="));
    assert!(!html.contains("@import"));
    assert!(!html.contains("url("));
    for (i, _) in html.match_indices("href=") {
        assert!(html[i..].starts_with("href=\"#"), "{}", &html[i..i + 40]);
    }
    // The policy allows the page's own script, by its hash, and no loads.
    let csp = content_security_policy();
    assert!(html.contains(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">"
    )));
    assert!(csp.starts_with("default-src 'none'; script-src 'sha256-"));
    assert!(html.contains(&format!("<script>{SCRIPT}</script>")));
    // The links to a job's logs are relative paths, never a scheme.
    let data = data(&html);
    for i in 0..sample().jobs.len() {
        for block in detail(&data, i).as_array().unwrap() {
            if let Some(links) = block.get("links") {
                assert_eq!(links["base"], "");
                for path in links["paths"].as_array().unwrap() {
                    assert!(path.as_str().unwrap().starts_with("runs/"), "{path}");
                }
            }
        }
    }
}

#[test]
fn model_text_is_escaped_and_stays_data() {
    let html = render_html(&sample());
    // Two script elements: the data and the page's own.
    assert_eq!(html.matches("<script").count(), 2);
    assert_eq!(html.matches("</script>").count(), 2);
    // Inside the data, markup is escaped so it cannot end the element.
    let start = html.find(DATA_OPEN).unwrap();
    let blob = &html[start + DATA_OPEN.len()..];
    let blob = &blob[..blob.find("</script>").unwrap()];
    assert!(!blob.contains('<') && !blob.contains('>'));
    assert!(blob.contains("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
    let data = data(&html);
    let text = detail_text(&data, 1);
    assert!(text.contains("left: \"</script><script>alert(1)</script>\""));
    // Control characters are visible escapes, as everywhere.
    assert!(text.contains("render::`tick` & <script>\\u{a}next"));
    assert!(text.contains("unknown kind \"<script>\" | bad\\u{a}second line"));
    // The static tables escape as HTML.
    assert!(html.contains("render_cell"));
    assert!(!html[..start].contains("<script>alert"));
}

#[test]
fn tables_and_details_are_data_one_per_job() {
    let report = sample();
    let html = render_html(&report);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.ends_with("</html>\n"));
    // One chart per family and one per provider of the sweep.
    assert_eq!(html.matches("<svg").count(), 2);
    for id in ["jobs-table", "time-table", "passk-table", "job-detail"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    let data = data(&html);
    let jobs = table(&data, "jobs");
    assert_eq!(jobs["rows"].as_array().unwrap().len(), report.jobs.len());
    assert_eq!(data["details"].as_array().unwrap().len(), report.jobs.len());
    assert_eq!(
        jobs["filters"],
        serde_json::json!(["outcome", "failure kind", "family", "provider"])
    );
    // A row: [job, cells, sort keys, filter values]; a styled cell
    // [text, class, under].
    let hostile = &jobs["rows"][1];
    assert_eq!(hostile[0], 1);
    assert_eq!(hostile[3][0], "failed");
    assert_eq!(hostile[3][1], "tests_failed");
    assert_eq!(
        hostile[1][0],
        serde_json::json!(["render_cell", "", ["off_by_one", "muted"]])
    );
    assert_eq!(
        hostile[1][1][2],
        serde_json::json!(["tests_failed", "badge failed"])
    );
    assert_eq!(hostile[1][8][2][1], "bad-text");
    assert_eq!(
        hostile[1][9],
        serde_json::json!(["fails as required", "badge passed"])
    );
    assert_eq!(hostile[2][5], 61_000.0);
    assert_eq!(
        table(&data, "time")["rows"].as_array().unwrap().len(),
        report.jobs.len()
    );
    assert_eq!(table(&data, "passk")["headers"][5], "pass@3");
    // The patch and an edit as diffs; a trajectory of phases and steps.
    let succeeded = detail_text(&data, 0);
    assert!(succeeded.contains("+    (1..=n).sum()"));
    let blocks = detail(&data, 0);
    let steps = blocks
        .as_array()
        .unwrap()
        .iter()
        .find_map(|b| b["steps"].as_array())
        .unwrap();
    // [ok, at, kind, text, [attempt, step], lines, call]; a line [ok,
    // kind, text]; the call the model's side of the step.
    assert_eq!(steps[1][4], serde_json::json!([1, 2]));
    assert_eq!(steps[1][6]["diff"], "@@ src/lib.rs\n-1..n\n+1..=n");
    assert_eq!(
        steps[1][6]["obs"],
        "replaced 1 occurrence in src/lib.rs <ok>"
    );
    assert!(
        steps[1][6]["reply"]
            .as_str()
            .unwrap()
            .contains("replace_text")
    );
    assert_eq!(steps[1][5][1].as_array().unwrap().len(), 3);
    assert_eq!(data["fact_names"][20], "baseline");
    assert_eq!(data["fact_names"][13], "cpu time");
    let facts = blocks
        .as_array()
        .unwrap()
        .iter()
        .find_map(|b| b["facts"].as_array())
        .unwrap();
    assert_eq!(facts[13], "9.9 s");
    assert_eq!(facts[14], "412.0 MiB");
    assert_eq!(facts[15], "37");
}

#[test]
fn a_failed_job_shows_its_prompt_excerpts_logs_and_the_trace_hint() {
    let report = sample();
    let data = data(&render_html_linked(&report, &["../".into()]));
    let text = detail_text(&data, 1);
    let said = |key: &str| data["texts"][key].as_str().unwrap().to_string();
    assert_eq!(said("trace"), TRACE_HINT);
    assert_eq!(said("not_available"), NOT_AVAILABLE);
    assert!(text.contains("Make cell(a, b) return \"<b>\" when either is set.\nKeep </script>"));
    assert!(text.contains("(2 failing, 0 missing)"));
    assert!(text.contains("assertion `left == right` failed\n  left: "));
    assert!(text.contains("timed out"));
    assert!(text.contains("no output of its own: see the acceptance log"));
    let says = |i: usize, key: &str| {
        detail(&data, i)
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["say"]["key"] == key)
    };
    assert!(says(1, "trace"));
    assert!(text.contains("6 model step(s), collapsed: open one for what the runtime did for it."));
    let blocks = detail(&data, 1);
    let links = blocks
        .as_array()
        .unwrap()
        .iter()
        .find_map(|b| b.get("links"))
        .unwrap();
    assert_eq!(links["base"], "../");
    assert_eq!(links["paths"].as_array().unwrap().len(), 4);
    assert_eq!(links["paths"][2], "runs/render_cell/2/acceptance.log");
    // A job whose tests failed without excerpts beside its log says so.
    let alpha = detail_text(&data, 5);
    assert!(says(5, "not_available"));
    assert!(!says(1, "not_available"));
    assert!(alpha.contains("test/acceptance::sums_to_n"));
    // The job that succeeded has no failing tests to explain.
    assert!(!detail_text(&data, 0).contains("Failing and missing tests"));
}

#[test]
fn links_are_percent_encoded_relative_paths() {
    use crate::report::html_detail::href;
    assert_eq!(
        href("../", "runs/tokenize@alpha#2/1/acceptance.log"),
        "../runs/tokenize%40alpha%232/1/acceptance.log"
    );
    assert_eq!(
        href("../../shard 2/", "runs/a/1/tests/excerpts.json"),
        "../../shard%202/runs/a/1/tests/excerpts.json"
    );
    assert_eq!(
        href("", "runs/javascript:x/1/a.log"),
        "runs/javascript%3Ax/1/a.log"
    );
}

#[test]
fn details_show_the_per_test_verdict_and_the_names() {
    let data = data(&render_html(&sample()));
    let missing = detail_text(&data, 7);
    assert!(missing.contains("(0 failing, 24 missing)"));
    assert!(missing.contains("test/acceptance::case_20\n"));
    assert!(missing.contains("and 4 more"));
    assert!(!missing.contains("case_21"));
    assert!(detail_text(&data, 10).contains("not verified per test"));
    assert!(
        detail_text(&data, 3).contains(
            "baseline:\nmuted\nevery test passes at baseline: the task is already solved"
        )
    );
    assert!(detail_text(&data, 3).contains("already passes"));
    let html = render_html(&sample());
    for kind in ["tests_failed", "tests_missing", "patch_rejected"] {
        assert!(
            html.contains(&format!(
                "<td><span class=\"badge failed\">{kind}</span></td>"
            )),
            "{kind} in the failure analysis"
        );
    }
    // Failure analysis instances link to their details.
    assert!(html.contains("<a href=\"#job-1\">render_cell</a>"));
}

#[test]
fn intervals_and_the_comparison_are_shown() {
    let html = render_html(&sample());
    assert!(html.contains("<div class=\"k\">95% CI</div><div class=\"n\">[5.7%, 51.0%]</div>"));
    assert!(html.contains("<td class=\"num\">12.5%</td><td class=\"num\">[2.2%, 47.1%]</td>"));
    assert!(html.contains("<h2>Paired comparison</h2>"));
    assert!(html.contains("<td class=\"num\">1.0000</td><td class=\"num\">0.934</td><td>within noise</td><td><span class=\"muted\">no significant difference</span></td>"));
    assert!(html.contains("<h3>Per family</h3>"));
    assert!(html.contains("class=\"ci\""));
}

#[test]
fn tables_align_the_same_columns_right_as_report_md() {
    let html = render_html(&sample());
    // Every figure of a tally is a number, costs too (families and providers).
    assert_eq!(
        html.matches("<th class=\"num\">cost</th>").count(),
        2,
        "{html}"
    );
    assert_eq!(
        html.matches("<th class=\"num\">cost / success</th>")
            .count(),
        2
    );
    assert!(!html.contains("<th>cost</th>"));
    assert!(html.contains("<th>family</th><th>first-attempt gate</th><th class=\"num\">jobs</th>"));
    assert!(html.contains("<th>failure kind</th><th class=\"num\">count</th><th>instances</th>"));
}

#[test]
fn long_patches_are_cut() {
    let mut report = sample();
    let patch: String = (0..PATCH_LINES + 5)
        .map(|i| format!("+line {i}\n"))
        .collect();
    report.jobs[0].patch = Some(patch);
    let text = detail_text(&data(&render_html(&report)), 0);
    assert!(text.contains("5 more lines not shown"));
    assert!(text.contains(&format!("+line {}\n", PATCH_LINES - 1)));
    assert!(!text.contains(&format!("+line {PATCH_LINES}\n")));
}

#[test]
fn empty_report_renders() {
    let html = render_html(&Report::new(0, vec![]));
    assert!(html.contains("No jobs."));
    assert!(html.contains("No failures."));
    assert_eq!(data(&html)["details"], serde_json::json!([]));
}

/// What the page shows of the first two jobs, as its data: the jobs
/// table's headers, filters and rows, and the details (attempts, patch,
/// trajectory) of the job that succeeded.
#[test]
fn html_data_snapshot() {
    let data = data(&render_html(&sample()));
    let jobs = table(&data, "jobs");
    let excerpt = serde_json::json!({
        "jobs_headers": jobs["headers"],
        "jobs_filters": jobs["filters"],
        "jobs_rows": [jobs["rows"][0], jobs["rows"][1]],
        "time_headers": table(&data, "time")["headers"],
        "details_of_job_0": detail(&data, 0),
    });
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"(\d+\.\d{6})\d+", "$1");
    settings.bind(|| insta::assert_snapshot!(serde_json::to_string_pretty(&excerpt).unwrap()));
}
