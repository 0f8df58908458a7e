//! The per-job details of `report.html`: one collapsible section with every
//! field, the baseline's reason, the failing and missing tests, the step
//! timeline and the coloured patch. Every piece of text is HTML-escaped.

use std::fmt::Write;

use super::format::{bytes, count, duration_ms};
use super::html::{badge, check_badge, dash, escape, outcome_badge, patch_cell, tests_cell};
use super::model::JobResult;
use super::verdict_text;

/// Patch lines shown per job; the rest is summarized in one line.
pub const PATCH_LINES: usize = 2_000;

/// Writes the details of job number `index` (the target of `#job-<index>`).
pub fn detail(out: &mut String, index: usize, j: &JobResult) {
    let _ = writeln!(
        out,
        "<details class=\"job\" id=\"job-{index}\"><summary>{} <strong>{}</strong> <span class=\"muted\">{}</span>{}\
         <span class=\"muted right\">{} steps · {}</span></summary>\n<div class=\"body\">",
        outcome_badge(j.outcome),
        escape(&j.instance),
        escape(&j.family),
        j.failure_kind
            .map(|k| format!(" {}", badge("failed", k.as_str())))
            .unwrap_or_default(),
        j.steps,
        duration_ms(j.wall_ms),
    );
    let facts = [
        ("provider", dash(j.provider.as_deref().unwrap_or(""))),
        (
            "repeat",
            j.repeat.map_or_else(|| dash(""), |r| r.to_string()),
        ),
        ("attempts", format!("{} of {}", j.attempts, j.max_attempts)),
        ("steps", j.steps.to_string()),
        ("invalid decisions", j.invalid_decisions.to_string()),
        (
            "tokens in / out",
            format!("{} / {}", count(j.input_tokens), count(j.output_tokens)),
        ),
        ("provider calls", j.provider_calls.to_string()),
        ("provider latency", duration_ms(j.provider_latency_ms)),
        ("wall time", duration_ms(j.wall_ms)),
        ("patch", patch_cell(j)),
        ("acceptance", check_badge(j.acceptance)),
        ("tests", tests_cell(j)),
        ("baseline", check_badge(j.baseline)),
    ];
    out.push_str("<div class=\"facts\">");
    for (k, v) in facts {
        let _ = write!(out, "<div><span>{k}</span><span>{v}</span></div>");
    }
    out.push_str("</div>\n");
    if let Some(cause) = &j.cause
        && j.outcome == crate::report::model::JobOutcome::Failed
    {
        let _ = writeln!(
            out,
            "<p class=\"note\"><span class=\"muted\">cause:</span> {}</p>",
            escape(cause)
        );
    }
    if let Some(reason) = &j.baseline_reason {
        let _ = writeln!(
            out,
            "<p class=\"note\"><span class=\"muted\">baseline:</span> {}</p>",
            escape(reason)
        );
    }
    test_names(out, j);
    timeline(out, j);
    out.push_str("<h3>Patch</h3>\n");
    match &j.patch {
        Some(patch) if !patch.is_empty() => diff(out, patch),
        _ => out.push_str("<p class=\"muted\">No patch.</p>\n"),
    }
    out.push_str("</div></details>\n");
}

/// The failing and missing tests, each with its mark, then how many more.
fn test_names(out: &mut String, j: &JobResult) {
    let (shown, rest) = verdict_text::names(&j.tests);
    if shown.is_empty() && rest == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "<h3>Failing and missing tests <span class=\"muted\">({} failing, {} missing)</span></h3>\n<ul class=\"tests\">",
        j.tests.failing_count, j.tests.missing_count
    );
    for (name, mark) in shown {
        let _ = writeln!(
            out,
            "<li>{} <span class=\"mono\">{}</span></li>",
            badge(mark.as_str(), mark.as_str()),
            escape(&name)
        );
    }
    if let Some(more) = verdict_text::more(rest) {
        let _ = writeln!(out, "<li class=\"muted\">{more}</li>");
    }
    out.push_str("</ul>\n");
}

fn timeline(out: &mut String, j: &JobResult) {
    out.push_str("<h3>Timeline</h3>\n");
    if j.timeline.is_empty() {
        out.push_str("<p class=\"muted\">No steps recorded.</p>\n");
        return;
    }
    out.push_str(
        "<div class=\"scroll\"><table class=\"timeline\">\n<thead><tr><th class=\"num\">attempt</th>\
         <th class=\"num\">step</th><th class=\"num\">at</th><th>kind</th><th></th><th>detail</th></tr></thead>\n<tbody>\n",
    );
    for t in &j.timeline {
        let (row, mark) = if t.ok {
            ("", "<span class=\"mark ok\" title=\"ok\">✓</span>")
        } else {
            (
                " class=\"step-failed\"",
                "<span class=\"mark bad\" title=\"failed\">✗</span>",
            )
        };
        let _ = writeln!(
            out,
            "<tr{row}><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"mono\">{}</td><td>{mark}</td><td class=\"wrap\">{}</td></tr>",
            t.attempt,
            t.step,
            duration_ms(t.at_ms),
            escape(&t.kind),
            escape(&t.detail),
        );
    }
    out.push_str("</tbody></table></div>\n");
}

fn diff(out: &mut String, patch: &str) {
    out.push_str("<pre class=\"diff\">");
    let mut shown = 0;
    for line in patch.lines() {
        if shown == PATCH_LINES {
            break;
        }
        shown += 1;
        let class = if line.starts_with("+++")
            || line.starts_with("---")
            || line.starts_with("diff ")
            || line.starts_with("index ")
        {
            "meta"
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else if line.starts_with("@@") {
            "hunk"
        } else {
            "ctx"
        };
        let _ = write!(out, "<span class=\"{class}\">{}</span>", escape(line));
    }
    out.push_str("</pre>\n");
    let rest = patch.lines().count().saturating_sub(shown);
    if rest > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{rest} more lines not shown ({} in total).</p>",
            bytes(patch.len() as u64)
        );
    }
}
