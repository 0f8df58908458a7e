//! `report.html`: one self-contained page (inline CSS, a few lines of inline
//! script, inline SVG) that works offline and references nothing outside
//! itself. Every piece of text from the model is HTML-escaped: job ids,
//! test names, timeline details and patches may contain markup. The
//! per-job details are in `html_detail.rs`.

use std::fmt::Write;

use super::chart::pass_rate_chart;
use super::format::{
    JOB_HEADERS, TALLY_HEADERS, TIME_HEADERS, count, duration_ms, job_figures, percent, percent_ci,
    ratio, tally_cells, time_cells, usd, utc,
};
use super::html_detail::{detail, integrity_cell};
use super::markdown::{
    COMPARISON_HEADERS, COMPARISON_NOTE, comparison_figures, means_cells, means_headers, patch_size,
};
use super::model::{CheckResult, JobOutcome, JobResult, Report};
use super::style::{SCRIPT, STYLE};
use super::summary::{Summary, Tally};
use super::verdict_text::{self, NOT_VERIFIED};

/// Escapes `&`, `<`, `>`, `"` and `'` for text and attribute values, after
/// writing control and bidi characters as visible escapes (line breaks and
/// tabs kept, for `<pre>` blocks).
pub fn escape(text: &str) -> String {
    let text = crate::escape::block(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Renders `report.html`.
pub fn render_html(report: &Report) -> String {
    let summary = Summary::of(report);
    let mut out = String::with_capacity(64 * 1024);
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>agent-runtime report</title>\n<style>",
    );
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<main>\n");
    header(&mut out, report, &summary.totals);
    out.push_str("<h2>Pass rate by family</h2>\n");
    let families_rows: Vec<(&str, &Tally)> = summary
        .families
        .iter()
        .map(|f| (f.family.as_str(), &f.tally))
        .collect();
    out.push_str(&pass_rate_chart("Pass rate by family", &families_rows));
    if !summary.providers.is_empty() {
        out.push_str("<h2>Pass rate by provider</h2>\n");
        let provider_rows: Vec<(&str, &Tally)> = summary
            .providers
            .iter()
            .map(|p| (p.provider.as_str(), &p.tally))
            .collect();
        out.push_str(&pass_rate_chart("Pass rate by provider", &provider_rows));
    }
    out.push_str(
        "<p class=\"muted\">Whiskers: 95% Wilson score intervals, each finished job one trial.</p>\n",
    );
    jobs_table(&mut out, report);
    time_table(&mut out, report);
    families(&mut out, &summary);
    providers(&mut out, &summary);
    comparisons(&mut out, &summary);
    failures(&mut out, &summary);
    out.push_str("<h2>Job details</h2>\n");
    for (i, job) in report.jobs.iter().enumerate() {
        detail(&mut out, i, job);
    }
    let _ = write!(
        out,
        "</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    );
    out
}

fn header(out: &mut String, report: &Report, t: &Tally) {
    let sources: Vec<String> = report.sources.iter().map(|s| escape(s)).collect();
    let _ = writeln!(
        out,
        "<header><h1>agent-runtime report</h1><div class=\"muted\">Generated {} from <span class=\"mono\">{}</span></div></header>",
        utc(report.generated_at_ms),
        if sources.is_empty() {
            "no log".to_string()
        } else {
            sources.join(", ")
        }
    );
    out.push_str("<section class=\"cards\">\n");
    let cards = [
        ("Jobs", t.jobs.to_string()),
        ("Accepted", t.accepted.to_string()),
        ("Failed", t.failed.to_string()),
        ("Cancelled", t.cancelled.to_string()),
        ("Pending", t.pending.to_string()),
        ("Pass rate", percent(t.pass_rate)),
        ("95% CI", percent_ci(t.pass_rate_ci)),
        ("Tokens in", count(t.input_tokens)),
        ("Tokens out", count(t.output_tokens)),
        ("Cost", usd(t.cost_usd)),
        ("Cost / accepted", usd(t.cost_per_accepted_usd)),
        ("Elapsed", duration_ms(t.elapsed_ms)),
        ("Job time", duration_ms(t.wall_ms)),
    ];
    for (k, n) in cards {
        let _ = writeln!(
            out,
            "<div class=\"card\"><div class=\"k\">{k}</div><div class=\"n\">{n}</div></div>"
        );
    }
    out.push_str("</section>\n");
}

pub(super) fn badge(class: &str, text: &str) -> String {
    format!("<span class=\"badge {class}\">{}</span>", escape(text))
}

pub(super) fn outcome_badge(outcome: JobOutcome) -> String {
    badge(outcome.as_str(), outcome.as_str())
}

pub(super) fn check_badge(check: CheckResult) -> String {
    let class = match check {
        CheckResult::Passed => "passed",
        CheckResult::Failed | CheckResult::Error => "failed",
        CheckResult::NotRun | CheckResult::Skipped => "",
    };
    badge(class, &check.as_str().replace('_', " "))
}

/// Writes a table; `numeric` marks right-aligned columns. Cells are HTML already.
fn table(out: &mut String, headers: &[&str], numeric: &[usize], rows: &[Vec<String>]) {
    let rows: Vec<(String, Vec<String>)> =
        rows.iter().map(|r| (String::new(), r.clone())).collect();
    table_with(out, "", headers, numeric, &rows);
}

/// A table whose `<table>` and rows carry attributes (`attrs`, and each
/// row's first element), for the sorting and filtering script.
fn table_with(
    out: &mut String,
    attrs: &str,
    headers: &[&str],
    numeric: &[usize],
    rows: &[(String, Vec<String>)],
) {
    let _ = write!(out, "<div class=\"scroll\"><table{attrs}>\n<thead><tr>");
    for (i, h) in headers.iter().enumerate() {
        let class = if numeric.contains(&i) {
            " class=\"num\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (row_attrs, row) in rows {
        let _ = write!(out, "<tr{row_attrs}>");
        for (i, cell) in row.iter().enumerate() {
            let class = if numeric.contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

pub(super) fn dash(text: &str) -> String {
    if text.is_empty() {
        "<span class=\"muted\">–</span>".to_string()
    } else {
        escape(text)
    }
}

pub(super) fn patch_cell(j: &JobResult) -> String {
    if j.patch.is_none() && j.patch_bytes == 0 {
        dash("")
    } else {
        escape(&patch_size(j.patch_bytes, j.patch_files))
    }
}

/// `F2P 1/2, P2P 3/3` (red while a test fails or is missing), muted
/// "not verified per test", or a dash when acceptance did not run.
pub(super) fn tests_cell(j: &JobResult) -> String {
    match verdict_text::summary(j) {
        None => dash(""),
        Some(text) if text == NOT_VERIFIED => format!("<span class=\"muted\">{text}</span>"),
        Some(text) if j.tests.failing_count + j.tests.missing_count > 0 => {
            format!("<span class=\"bad-text\">{}</span>", escape(&text))
        }
        Some(text) => escape(&text),
    }
}

fn jobs_table(out: &mut String, report: &Report) {
    out.push_str("<h2>Jobs</h2>\n");
    if report.jobs.is_empty() {
        out.push_str("<p class=\"muted\">No jobs.</p>\n");
        return;
    }
    // Without the script every row shows; with it, these filter the table.
    out.push_str(
        "<div class=\"filters\" id=\"job-filters\" hidden>\
         <label>outcome <select data-key=\"outcome\"><option value=\"\">all</option></select></label>\
         <label>failure kind <select data-key=\"kind\"><option value=\"\">all</option></select></label>\
         <label>family <select data-key=\"family\"><option value=\"\">all</option></select></label>\
         <label>provider <select data-key=\"provider\"><option value=\"\">all</option></select></label>\
         <span class=\"muted\" id=\"job-count\"></span></div>\n",
    );
    let rows: Vec<(String, Vec<String>)> = report
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let attrs = format!(
                " data-outcome=\"{}\" data-kind=\"{}\" data-family=\"{}\" data-provider=\"{}\"",
                j.outcome.as_str(),
                j.failure_str(),
                escape(&j.family),
                escape(j.provider.as_deref().unwrap_or(""))
            );
            let mut row = vec![
                format!("<a href=\"#job-{i}\">{}</a>", escape(&j.instance)),
                escape(&j.family),
                outcome_badge(j.outcome),
                dash(j.failure_str()),
            ];
            row.extend(job_figures(j));
            row.extend([
                patch_cell(j),
                check_badge(j.acceptance),
                tests_cell(j),
                check_badge(j.baseline),
                integrity_cell(j),
            ]);
            (attrs, row)
        })
        .collect();
    table_with(
        out,
        " id=\"jobs\" class=\"sortable\"",
        &JOB_HEADERS,
        &[4, 5, 6, 7, 8, 9, 10, 11, 12],
        &rows,
    );
}

/// Where each job's time went.
fn time_table(out: &mut String, report: &Report) {
    if report.jobs.is_empty() {
        return;
    }
    out.push_str("<h2>Where the time went</h2>\n");
    let rows: Vec<Vec<String>> = report
        .jobs
        .iter()
        .map(|j| {
            let mut row = vec![escape(&j.instance)];
            row.extend(time_cells(j));
            row
        })
        .collect();
    table(out, &TIME_HEADERS, &[1, 2, 3, 4, 5, 6], &rows);
}

fn families(out: &mut String, summary: &Summary) {
    if summary.families.is_empty() {
        return;
    }
    out.push_str("<h2>Families</h2>\n");
    let mut headers = vec!["family", "first-attempt gate"];
    headers.extend(TALLY_HEADERS);
    let rows: Vec<Vec<String>> = summary
        .families
        .iter()
        .map(|f| {
            let gate = if f.first_attempt_gate {
                badge("passed", "pass")
            } else {
                badge("failed", "fail")
            };
            let mut row = vec![escape(&f.family), gate];
            row.extend(tally_cells(&dash(""), &f.tally));
            row
        })
        .collect();
    table(
        out,
        &headers,
        &[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15],
        &rows,
    );
}

fn providers(out: &mut String, summary: &Summary) {
    if !summary.providers.is_empty() {
        out.push_str("<h2>Providers</h2>\n");
        let mut headers = vec!["provider"];
        headers.extend(TALLY_HEADERS);
        headers.extend(["calls", "mean latency"]);
        let rows: Vec<Vec<String>> = summary
            .providers
            .iter()
            .map(|p| {
                let mut row = vec![escape(&p.provider)];
                row.extend(tally_cells(&dash(""), &p.tally));
                row.push(count(p.tally.provider_calls));
                row.push(
                    p.tally
                        .mean_latency_ms()
                        .map_or_else(|| dash(""), duration_ms),
                );
                row
            })
            .collect();
        table(
            out,
            &headers,
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
            &rows,
        );
    }
    let Some(pass) = &summary.pass_at_k else {
        return;
    };
    let at_k = format!("pass@{}", pass.k);
    let _ = writeln!(
        out,
        "<h2>pass@k <span class=\"muted\">(k = {})</span></h2>\n<p class=\"muted\">Unbiased estimates \
         from n runs with c accepted, each run's sample its first attempt (a retry's success \
         does not count; a restart after a fault of the infrastructure is the same attempt): \
         pass@k = 1 − C(n−c, k) / C(n, k). n/a until k runs of a group have a sample. Means \
         over jobs, with 95% percentile bootstrap intervals over the jobs.</p>",
        pass.k
    );
    let rows: Vec<Vec<String>> = pass
        .providers
        .iter()
        .map(|p| {
            let mut row = vec![dash(p.provider.as_deref().unwrap_or(""))];
            row.extend(means_cells(&p.means));
            row
        })
        .collect();
    let mut headers = vec!["provider"];
    headers.extend(means_headers(&at_k));
    table(out, &headers, &[1, 2, 3, 4, 5, 6], &rows);
    out.push_str("<h3>Per family</h3>\n");
    let rows: Vec<Vec<String>> = pass
        .families
        .iter()
        .map(|f| {
            let mut row = vec![escape(&f.family), dash(f.provider.as_deref().unwrap_or(""))];
            row.extend(means_cells(&f.means));
            row
        })
        .collect();
    let mut headers = vec!["family", "provider"];
    headers.extend(means_headers(&at_k));
    table(out, &headers, &[2, 3, 4, 5, 6, 7], &rows);
    out.push_str("<h3>Per job</h3>\n");
    let rows: Vec<Vec<String>> = pass
        .groups
        .iter()
        .map(|g| {
            vec![
                escape(&g.job),
                dash(g.provider.as_deref().unwrap_or("")),
                g.n.to_string(),
                g.c.to_string(),
                ratio(g.pass_at_1),
                ratio(g.pass_at_k),
            ]
        })
        .collect();
    table(
        out,
        &["job", "provider", "n", "c", "pass@1", &at_k],
        &[2, 3, 4, 5],
        &rows,
    );
}

fn comparisons(out: &mut String, summary: &Summary) {
    if summary.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h2>Paired comparison</h2>\n<p class=\"muted\">{}</p>",
        escape(COMPARISON_NOTE)
    );
    let rows: Vec<Vec<String>> = summary
        .comparisons
        .iter()
        .map(|c| {
            let verdict = if c.significant {
                badge("passed", &c.verdict())
            } else {
                format!("<span class=\"muted\">{}</span>", escape(&c.verdict()))
            };
            let mut row = vec![escape(&c.a), escape(&c.b)];
            row.extend(comparison_figures(c));
            row.push(verdict);
            row
        })
        .collect();
    table(
        out,
        &COMPARISON_HEADERS,
        &[2, 3, 4, 5, 6, 7, 8, 9, 10],
        &rows,
    );
}

fn failures(out: &mut String, summary: &Summary) {
    out.push_str("<h2>Failure analysis</h2>\n");
    if summary.failures.is_empty() {
        out.push_str("<p class=\"muted\">No failures.</p>\n");
        return;
    }
    if let Some(tampered) = summary
        .failures
        .iter()
        .find(|f| f.kind == crate::protocol::FailureKind::Tampered)
    {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} tampered job(s) (forged results or, under strict integrity, tamper signals), counted apart from failed fixes.</p>",
            tampered.count
        );
    }
    let rows: Vec<Vec<String>> = summary
        .failures
        .iter()
        .map(|f| {
            let instances: Vec<String> = f.instances.iter().map(|i| escape(i)).collect();
            vec![
                badge("failed", f.kind.as_str()),
                f.count.to_string(),
                format!("<span class=\"wrap\">{}</span>", instances.join(", ")),
            ]
        })
        .collect();
    table(out, &["failure kind", "count", "instances"], &[1], &rows);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;
    use crate::report::html_detail::PATCH_LINES;

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
    }

    #[test]
    fn model_text_is_escaped() {
        let html = render_html(&sample());
        // The only script element is the page's own.
        assert_eq!(html.matches("<script").count(), 1);
        assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
        assert!(html.contains("unknown kind &quot;&lt;script&gt;&quot; | bad\nsecond line"));
        assert!(html.contains("&amp;amp;"));
    }

    #[test]
    fn has_chart_table_and_one_detail_per_job() {
        let report = sample();
        let html = render_html(&report);
        assert!(html.starts_with("<!DOCTYPE html>"));
        // One chart per family and one per provider of the sweep.
        assert_eq!(html.matches("<svg").count(), 2);
        assert_eq!(
            html.matches("<details class=\"job\"").count(),
            report.jobs.len()
        );
        // Six patches and the one edit of the sample's trajectory.
        assert_eq!(html.matches("<pre class=\"diff\">").count(), 7);
        assert!(html.contains("<span class=\"add\">+    (1..=n).sum()</span>"));
        assert!(html.contains("<span class=\"del\">-    (1..n).sum()</span>"));
        // The trajectory: collapsed steps, a failed one marked, the
        // observation escaped.
        assert!(html.contains("<details class=\"step\">"));
        assert!(!html.contains("<details class=\"step\" open"));
        assert!(html.contains("title=\"failed\">✗</span>"));
        assert!(html.contains("replaced 1 occurrence in src/lib.rs &lt;ok&gt;"));
        assert!(html.contains("<span class=\"del\">-1..n</span><span class=\"add\">+1..=n</span>"));
        // Filters and sorting work on the jobs table's data.
        assert!(html.contains("<table id=\"jobs\" class=\"sortable\">"));
        assert!(html.contains("data-outcome=\"failed\" data-kind=\"tests_failed\""));
        assert!(html.contains("pass@3"));
        assert!(html.ends_with("</html>\n"));
    }

    #[test]
    fn details_show_the_per_test_verdict_and_the_names() {
        let html = render_html(&sample());
        assert!(html.contains(
            "<div><span>tests</span><span><span class=\"bad-text\">F2P 1/2, P2P 3/3</span></span></div>"
        ));
        assert!(html.contains(
            "<span>tests</span><span><span class=\"muted\">not verified per test</span>"
        ));
        assert!(html.contains(
            "<li><span class=\"badge failing\">failing</span> <span class=\"mono\">test/acceptance::sums_to_n</span></li>"
        ));
        assert!(html.contains(
            "<li><span class=\"badge missing\">missing</span> <span class=\"mono\">test/acceptance::case_20</span></li>\n<li class=\"muted\">and 4 more</li>"
        ));
        assert!(!html.contains("case_21"));
        assert!(html.contains("(0 failing, 24 missing)"));
        assert!(
            html.contains(
                "<span class=\"mono\">render::`tick` &amp; &lt;script&gt;\\u{a}next</span>"
            )
        );
        assert!(html.contains(
            "<span class=\"muted\">baseline:</span> every test passes at baseline: the task is already solved</p>"
        ));
        for kind in ["tests_failed", "tests_missing", "patch_rejected"] {
            assert!(
                html.contains(&format!(
                    "<td><span class=\"badge failed\">{kind}</span></td>"
                )),
                "{kind} in the failure analysis"
            );
        }
    }

    #[test]
    fn intervals_and_the_comparison_are_shown() {
        let html = render_html(&sample());
        assert!(html.contains("<div class=\"k\">95% CI</div><div class=\"n\">[5.7%, 51.0%]</div>"));
        assert!(html.contains("<td class=\"num\">12.5%</td><td class=\"num\">[2.2%, 47.1%]</td>"));
        assert!(html.contains("<h2>Paired comparison</h2>"));
        assert!(html.contains("<td class=\"num\">1.0000</td><td><span class=\"muted\">no significant difference</span></td>"));
        assert!(html.contains("<h3>Per family</h3>"));
        assert!(html.contains("class=\"ci\""));
    }

    #[test]
    fn long_patches_are_cut() {
        let mut report = sample();
        let patch: String = (0..PATCH_LINES + 5)
            .map(|i| format!("+line {i}\n"))
            .collect();
        report.jobs[0].patch = Some(patch);
        let html = render_html(&report);
        assert!(html.contains("5 more lines not shown"));
        assert!(!html.contains(&format!("+line {PATCH_LINES}<")));
    }

    #[test]
    fn empty_report_renders() {
        let html = render_html(&Report::new(0, vec![]));
        assert!(html.contains("No jobs."));
        assert!(html.contains("No failures."));
    }
}
