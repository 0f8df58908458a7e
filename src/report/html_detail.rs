//! The per-job details of `report.html`: one collapsible section with every
//! field, the baseline's reason, the failing and missing tests, the step
//! trajectory and the coloured patch. Every piece of text is HTML-escaped.

use std::fmt::Write;

use super::format::{bytes, count, duration_ms};
use super::html::{badge, check_badge, dash, escape, outcome_badge, patch_cell, tests_cell};
use super::model::{JobResult, TimelineEntry};
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
        ("integrity", integrity_cell(j)),
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
    integrity(out, j);
    timeline(out, j);
    out.push_str("<h3>Patch</h3>\n");
    match &j.patch {
        Some(patch) if !patch.is_empty() => diff(out, patch),
        _ => out.push_str("<p class=\"muted\">No patch.</p>\n"),
    }
    out.push_str("</div></details>\n");
}

/// The integrity summary, red when there is anything in it.
pub(super) fn integrity_cell(j: &JobResult) -> String {
    match &j.integrity {
        None => dash(""),
        Some(record) if record.is_clean() => escape(&j.integrity_summary()),
        Some(_) => format!(
            "<span class=\"bad-text\">{}</span>",
            escape(&j.integrity_summary())
        ),
    }
}

/// The last attempt's tamper signals and canary evidence, if any.
fn integrity(out: &mut String, j: &JobResult) {
    let Some(record) = j.integrity.as_ref().filter(|r| !r.is_clean()) else {
        return;
    };
    out.push_str("<h3>Integrity</h3>\n<ul class=\"tests\">");
    for forged in &record.forged {
        let _ = write!(
            out,
            "<li><span class=\"bad-text\">forged</span> {}</li>",
            escape(forged)
        );
    }
    for signal in &record.signals {
        let steps = match signal.steps {
            Some([a, b]) if a == b => format!(" <span class=\"muted\">step {a}</span>"),
            Some([a, b]) => format!(" <span class=\"muted\">steps {a}-{b}</span>"),
            None => String::new(),
        };
        let _ = write!(
            out,
            "<li><span class=\"muted\">{}</span> <code>{}</code>: {}{steps}</li>",
            signal.kind,
            escape(&signal.subject),
            escape(&signal.evidence)
        );
    }
    let hidden = super::integrity_text::left_out(record);
    if hidden > 0 {
        let _ = write!(out, "<li class=\"muted\">and {hidden} more</li>");
    }
    out.push_str("</ul>\n");
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

/// The attempt step by step: phases (baseline, patch, acceptance) as
/// lines, each model step as a collapsed `<details>` holding everything
/// the runtime did for it (the decision and its key fields, commands,
/// edits as diffs, verify results, refusals, retries and waits, the
/// observation the model got). Collapsed steps keep a 1,000-step page
/// small and quick to open.
fn timeline(out: &mut String, j: &JobResult) {
    out.push_str("<h3>Trajectory</h3>\n");
    if j.timeline.is_empty() {
        out.push_str("<p class=\"muted\">No steps recorded.</p>\n");
        return;
    }
    let mut groups: Vec<&[TimelineEntry]> = Vec::new();
    let mut rest = j.timeline.as_slice();
    while let Some(first) = rest.first() {
        let len = if first.step == 0 {
            1
        } else {
            rest.iter()
                .take_while(|e| e.attempt == first.attempt && e.step == first.step)
                .count()
        };
        let (group, tail) = rest.split_at(len);
        groups.push(group);
        rest = tail;
    }
    let steps = groups.iter().filter(|g| g[0].step > 0).count();
    let _ = writeln!(
        out,
        "<p class=\"muted\">{steps} model step(s), collapsed: open one for its decision, what the runtime did and what the model was told.</p>\n<ol class=\"trajectory\">"
    );
    for group in groups {
        let first = &group[0];
        let ok = group.iter().all(|e| e.ok);
        if first.step == 0 {
            let _ = writeln!(
                out,
                "<li class=\"phase\">{} <span class=\"muted\">{}</span> <span class=\"mono\">{}</span> {}</li>",
                mark(ok),
                duration_ms(first.at_ms),
                escape(&first.kind),
                escape(&first.detail)
            );
            continue;
        }
        let decision = group
            .iter()
            .find(|e| e.fields.is_some())
            .or_else(|| group.iter().rev().find(|e| is_step_kind(&e.kind)))
            .unwrap_or(first);
        let _ = write!(
            out,
            "<li><details class=\"step\"><summary>{} <span class=\"muted\">attempt {} · step {} · {}</span> <span class=\"mono\">{}</span> {}</summary><div class=\"lines\">",
            mark(ok),
            first.attempt,
            first.step,
            duration_ms(first.at_ms),
            escape(&decision.kind),
            escape(decision.fields.as_deref().unwrap_or(&decision.detail)),
        );
        for e in group {
            let _ = write!(
                out,
                "<div>{} <span class=\"mono\">{}</span> {}</div>",
                mark(e.ok),
                escape(&e.kind),
                escape(&e.detail)
            );
            if let Some(fields) = &e.fields {
                let _ = write!(out, "<div class=\"mono muted\">{}</div>", escape(fields));
            }
            if let Some(d) = &e.diff {
                diff(out, d);
            }
            if let Some(o) = &e.observation {
                let _ = write!(
                    out,
                    "<div class=\"muted\">observation</div><pre class=\"obs\">{}</pre>",
                    escape(o)
                );
            }
        }
        out.push_str("</div></details></li>\n");
    }
    out.push_str("</ol>\n");
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "<span class=\"mark ok\" title=\"ok\">✓</span>"
    } else {
        "<span class=\"mark bad\" title=\"failed\">✗</span>"
    }
}

/// Whether a timeline kind is a decision (the step's headline).
fn is_step_kind(kind: &str) -> bool {
    !matches!(kind, "command" | "edit" | "verify" | "retry" | "agent")
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
