//! `report.html`: one self-contained page that works offline and
//! references nothing outside itself (inline CSS, inline SVG, one inline
//! script, a Content-Security-Policy that allows that script alone and no
//! loads). The summaries are HTML; the per-job tables and each job's
//! details are data (`html_data.rs`, `html_detail.rs`) that the script
//! renders a page at a time and on demand, so a report of 10,000 jobs
//! opens as fast as one of ten. Every piece of text from jobs is escaped:
//! HTML-escaped here, made visible and kept as text in the data.

use std::fmt::Write;

use sha2::{Digest, Sha256};

use super::chart::pass_rate_chart;
use super::columns;
use super::format::{count, duration_ms, percent, percent_ci, tally_cells, usd, utc};
use super::html_data::{page_data, write_page_data};
use super::markdown::{COMPARISON_NOTE, comparison_figures, means_cells};
use super::model::Report;
use super::style::{DETAIL_STYLE, STYLE};
use super::summary::{Figures, Summary};
use crate::table::{Align, Column};

/// The page's script: the job-detail renderer the live viewer shares,
/// then the tables'.
pub(super) const SCRIPT: &str = concat!(include_str!("detail.js"), include_str!("report.js"));

/// Instances named per failure kind in the failure analysis; the jobs
/// table's filter finds the rest.
pub(super) const FAILURE_INSTANCES_SHOWN: usize = 20;

/// Escapes `&`, `<`, `>`, `"` and `'` for text and attribute values, after
/// writing control and bidi characters as visible escapes (line breaks and
/// tabs kept, for `<pre>` blocks).
pub(super) fn escape(text: &str) -> String {
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

/// The policy of the page: its own script (by hash) and inline styles,
/// nothing loaded, no forms, no base.
fn content_security_policy() -> String {
    use base64::Engine;
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()));
    format!(
        "default-src 'none'; script-src 'sha256-{hash}'; style-src 'unsafe-inline'; \
         img-src data:; base-uri 'none'; form-action 'none'"
    )
}

/// Renders `report.html` with the links to each job's logs relative to
/// its data dir (as if the page lay there).
pub fn render_html(report: &Report) -> String {
    render_html_linked(report, &[])
}

/// Renders `report.html`; `links[i]` is the relative path from where the
/// page is written to the data dir of `report.sources[i]` (`../` for
/// `DATA/report/`), for the links to each job's logs.
pub fn render_html_linked(report: &Report, links: &[String]) -> String {
    let mut out = Vec::new();
    // Writing to memory does not fail.
    let _ = write_html_linked(report, links, &mut out);
    // Markup and serde_json's output are UTF-8; a failure here would be a
    // bug, shown as replacement characters, not a panic.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes `report.html` (see [`render_html_linked`]) to `w` as it is
/// rendered: the page's data, most of a sweep's page, goes out job by job
/// and is never held whole.
pub(super) fn write_html_linked(
    report: &Report,
    links: &[String],
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let summary = Summary::of(report);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>agent-runtime report</title>\n<style>{STYLE}{DETAIL_STYLE}</style>\n</head>\n<body>\n<main>\n",
        content_security_policy()
    );
    header(&mut out, report, &summary.totals);
    out.push_str("<h2>Pass rate by family</h2>\n");
    let families_rows: Vec<(&str, &Figures)> = summary
        .families
        .iter()
        .map(|f| (f.family.as_str(), &f.figures))
        .collect();
    out.push_str(&pass_rate_chart("Pass rate by family", &families_rows));
    if !summary.providers.is_empty() {
        out.push_str("<h2>Pass rate by provider</h2>\n");
        let provider_rows: Vec<(&str, &Figures)> = summary
            .providers
            .iter()
            .map(|p| (p.provider.as_str(), &p.figures))
            .collect();
        out.push_str(&pass_rate_chart("Pass rate by provider", &provider_rows));
    }
    out.push_str(
        "<p class=\"muted\">Whiskers: 95% Wilson score intervals, each finished job one trial.</p>\n",
    );
    out.push_str("<h2>Jobs</h2>\n");
    if report.jobs.is_empty() {
        out.push_str("<p class=\"muted\">No jobs.</p>\n");
    } else {
        out.push_str(
            "<noscript><p class=\"note\">The job tables and details are drawn by the page's \
             script; report.md and results.json hold the same figures.</p></noscript>\n\
             <div id=\"jobs-table\"></div>\n\
             <h2>Job details</h2>\n<p class=\"muted\" id=\"job-detail-hint\">Choose a job in \
             the table (or in the failure analysis) to see its details here.</p>\n\
             <div id=\"job-detail\" hidden></div>\n\
             <h2>Where the time went</h2>\n<div id=\"time-table\"></div>\n",
        );
    }
    families(&mut out, &summary);
    providers(&mut out, &summary);
    comparisons(&mut out, &summary);
    failures(&mut out, report, &summary);
    out.push_str("</main>\n<script type=\"application/json\" id=\"report-data\">");
    w.write_all(out.as_bytes())?;
    drop(out);
    // Serialized straight into the page: a sweep's page holds its data once.
    write_page_data(&mut *w, &page_data(report, &summary, links))?;
    write!(
        w,
        "</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

fn header(out: &mut String, report: &Report, t: &Figures) {
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
        ("Jobs", t.tally.jobs.to_string()),
        ("Succeeded", t.tally.succeeded.to_string()),
        ("Failed", t.tally.failed.to_string()),
        ("Cancelled", t.tally.cancelled.to_string()),
        ("Pending", t.tally.pending.to_string()),
        ("Pass rate", percent(t.pass_rate)),
        ("95% CI", percent_ci(t.pass_rate_ci)),
        ("Tokens in", count(t.input_tokens)),
        ("Tokens out", count(t.output_tokens)),
        ("Cost", usd(t.cost_usd)),
        ("Cost / success", usd(t.cost_per_success_usd)),
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

/// Writes a table under `columns` (a column aligned right is `num`). Cells
/// are HTML already; text wraps so the table fits the page.
fn table(out: &mut String, columns: &[Column], rows: &[Vec<String>]) {
    let class = |i: usize| match columns.get(i).map(Column::align) {
        Some(Align::Right) => " class=\"num\"",
        _ => "",
    };
    out.push_str("<div class=\"table-wrap\"><table>\n<thead><tr>");
    for (i, column) in columns.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", class(i), escape(column.header()));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{cell}</td>", class(i));
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

fn families(out: &mut String, summary: &Summary) {
    if summary.families.is_empty() {
        return;
    }
    out.push_str("<h2>Families</h2>\n");
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
            row.extend(tally_cells(&dash(""), &f.figures));
            row
        })
        .collect();
    table(out, &columns::families(), &rows);
}

fn providers(out: &mut String, summary: &Summary) {
    if !summary.providers.is_empty() {
        out.push_str("<h2>Providers</h2>\n");
        let rows: Vec<Vec<String>> = summary
            .providers
            .iter()
            .map(|p| {
                let mut row = vec![escape(&p.provider)];
                row.extend(tally_cells(&dash(""), &p.figures));
                row.push(count(p.figures.provider_calls));
                row.push(
                    p.figures
                        .mean_latency_ms()
                        .map_or_else(|| dash(""), duration_ms),
                );
                row
            })
            .collect();
        table(out, &columns::providers(), &rows);
    }
    let Some(pass) = &summary.pass_at_k else {
        return;
    };
    let at_k = format!("pass@{}", pass.k);
    let _ = writeln!(
        out,
        "<h2>pass@k <span class=\"muted\">(k = {})</span></h2>\n<p class=\"muted\">Unbiased estimates \
         from n runs with c succeeded, each run's sample its first attempt (a retry's success \
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
    table(out, &columns::means(&["provider"], &at_k), &rows);
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
    table(out, &columns::means(&["family", "provider"], &at_k), &rows);
    out.push_str("<h3>Per job</h3>\n<div id=\"passk-table\"></div>\n");
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
    table(out, &columns::comparisons(), &rows);
}

fn failures(out: &mut String, report: &Report, summary: &Summary) {
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
            "<p class=\"note\">{} (forged results or, under strict integrity, tamper signals), counted apart from failed fixes.</p>",
            crate::words::count(tampered.count as usize, "tampered job")
        );
    }
    // Each instance links to its details, by its place in the report.
    let index: std::collections::HashMap<&str, usize> = report
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.instance.as_str(), i))
        .collect();
    let rows: Vec<Vec<String>> = summary
        .failures
        .iter()
        .map(|f| {
            let mut instances: Vec<String> = f
                .instances
                .iter()
                .take(FAILURE_INSTANCES_SHOWN)
                .map(|i| match index.get(i.as_str()) {
                    Some(n) => format!("<a href=\"#job-{n}\">{}</a>", escape(i)),
                    None => escape(i),
                })
                .collect();
            let rest = f.instances.len().saturating_sub(FAILURE_INSTANCES_SHOWN);
            if rest > 0 {
                instances.push(format!(
                    "<span class=\"muted\">and {rest} more (filter the jobs table by {})</span>",
                    escape(f.kind.as_str())
                ));
            }
            vec![
                badge("failed", f.kind.as_str()),
                f.count.to_string(),
                instances.join(", "),
            ]
        })
        .collect();
    table(out, &columns::failures(), &rows);
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
