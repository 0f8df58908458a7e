//! An attempt's timeline ([`AttemptTimeline`]), built once from the
//! detail fold's entries and, with `trace = "full"`, the attempt's
//! transcript: each model step with its call, cost, the model's reply,
//! the observation it got, its key fields and an edit as a diff, and the
//! runtime's actions in order. The report, the viewer and the exports
//! all read this one type; none reads the transcript again.

use crate::decision::{Decision, parse_decision};
use crate::protocol::{Action, AttemptTimeline, ModelStep, Moment, Price, TranscriptLine};
use crate::state::{Entry, Job};

/// Bytes of an observation, and of a reply, kept where a view keeps
/// excerpts (`results.json`, `report.html`).
pub(super) const OBSERVATION_EXCERPT: usize = 600;
pub(super) const REPLY_EXCERPT: usize = 2_000;
/// Lines of an edit's diff kept as an excerpt.
pub(super) const DIFF_LINES: usize = 40;
/// Bytes of a decision's key fields.
const FIELDS_CAP: usize = 300;

/// How much of the model's text a timeline keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Texts {
    /// Capped excerpts: a report of many jobs.
    Excerpts,
    /// Everything the transcript holds: one job's page, the exports.
    Whole,
}

/// The timelines of `job`: one per run of its entries of one attempt, in
/// log order (entries of no attempt, such as a retry between two, under
/// attempt 0); `transcript(n)` is attempt `n`'s transcript, when kept.
pub(crate) fn attempts(
    job: &Job,
    entries: &[Entry],
    transcript: &dyn Fn(u32) -> Option<Vec<TranscriptLine>>,
    texts: Texts,
) -> Vec<AttemptTimeline> {
    let mut out = Vec::new();
    let mut read: Vec<(u32, Vec<TranscriptLine>)> = Vec::new();
    let mut rest = entries;
    while let Some(first) = rest.first() {
        let n = first.attempt;
        let len = rest.iter().take_while(|e| e.attempt == n).count();
        let (mine, tail) = rest.split_at(len);
        rest = tail;
        if n > 0 && !read.iter().any(|(k, _)| *k == n) {
            read.push((n, transcript(n).unwrap_or_default()));
        }
        let lines = read
            .iter()
            .find(|(k, _)| *k == n)
            .map_or(&[][..], |(_, l)| l.as_slice());
        let end = job.attempt_numbered(n).and_then(|a| a.finished());
        let mine: Vec<&Entry> = mine.iter().collect();
        out.push(AttemptTimeline {
            attempt: n,
            started_ms: mine.first().map_or(0, |e| e.ts_ms),
            ended_ms: mine.last().map_or(0, |e| e.ts_ms),
            outcome: end.map(|(outcome, _)| outcome),
            failure_kind: end.and_then(|(_, kind)| kind),
            moments: moments(&mine, lines, job.price.as_ref(), texts),
        });
    }
    out
}

/// One attempt's entries as moments: a phase per entry outside the
/// model's steps, and a step per run of entries of one step number.
fn moments(
    entries: &[&Entry],
    transcript: &[TranscriptLine],
    price: Option<&Price>,
    texts: Texts,
) -> Vec<Moment> {
    let mut out = Vec::new();
    let mut rest = entries;
    while let Some(first) = rest.first() {
        let n = first.said.step;
        let len = if n == 0 {
            1
        } else {
            rest.iter().take_while(|e| e.said.step == n).count()
        };
        let (group, tail) = rest.split_at(len);
        rest = tail;
        if n == 0 {
            out.push(Moment::Phase(action(first)));
            continue;
        }
        let recorded = transcript.iter().find(|t| t.step == n);
        out.push(Moment::Step(step(group, recorded, price, texts)));
    }
    out
}

fn action(entry: &Entry) -> Action {
    Action {
        at_ms: entry.at_ms,
        kind: entry.said.kind,
        text: entry.said.text.clone(),
        ok: entry.said.ok,
        resources: entry.resources.as_deref().copied(),
    }
}

/// One step from its entries (never empty) and its transcript line.
fn step(
    group: &[&Entry],
    recorded: Option<&TranscriptLine>,
    price: Option<&Price>,
    texts: Texts,
) -> ModelStep {
    let first = group[0];
    let with_call = group.iter().rev().find(|e| e.call.is_some());
    let head = with_call
        .or_else(|| group.iter().rev().find(|e| e.said.kind.heads_a_step()))
        .unwrap_or(&first);
    let call = with_call.and_then(|e| e.call.as_deref()).cloned();
    let cost_usd = call.as_ref().and_then(|c| {
        price.map(|p| p.cost(c.input_tokens, c.cached_input_tokens, c.output_tokens))
    });
    let decision = recorded.and_then(|t| parse_decision(&t.reply).ok());
    let keep = |text: &str, max: usize| match texts {
        Texts::Excerpts => cap(text, max),
        Texts::Whole => text.to_string(),
    };
    ModelStep {
        step: first.said.step,
        at_ms: first.at_ms,
        ts_ms: with_call.map_or(first.ts_ms, |e| e.ts_ms),
        call,
        cost_usd,
        headline: head.said.text.clone(),
        kind: head.said.kind,
        fields: recorded.map(|t| match &decision {
            Some(d) => key_fields(d),
            None => cap(&t.reply, FIELDS_CAP),
        }),
        reply: recorded.map(|t| keep(&t.reply, REPLY_EXCERPT)),
        observation: recorded
            .and_then(|t| t.observation.as_deref())
            .map(|o| keep(o, OBSERVATION_EXCERPT)),
        diff: decision
            .as_ref()
            .and_then(|d| edit_diff(d, texts == Texts::Excerpts)),
        actions: group.iter().map(|e| action(e)).collect(),
    }
}

/// The fields that say what a decision did, in one line.
pub(crate) fn key_fields(decision: &Decision) -> String {
    let text = match decision {
        Decision::ReadFile { path } | Decision::ListFiles { path } => format!("path={path}"),
        Decision::WriteFile { path, content } => {
            format!("path={path} ({} bytes)", content.len())
        }
        Decision::ReplaceText {
            path,
            expected,
            replacement,
        } => format!(
            "path={path} ({} bytes → {} bytes)",
            expected.len(),
            replacement.len()
        ),
        Decision::RunTool { program, args } => {
            let mut argv = vec![program.as_str()];
            argv.extend(args.iter().map(String::as_str));
            format!("argv={}", argv.join(" "))
        }
        Decision::Verify {} => String::new(),
        Decision::Finish { summary } => format!("summary={summary}"),
    };
    cap(&text, FIELDS_CAP)
}

/// An edit as diff lines: removed text `-`, written text `+`; cut to
/// [`DIFF_LINES`] when `cut`.
fn edit_diff(decision: &Decision, cut: bool) -> Option<String> {
    let (path, removed, added) = match decision {
        Decision::WriteFile { path, content } => (path, "", content.as_str()),
        Decision::ReplaceText {
            path,
            expected,
            replacement,
        } => (path, expected.as_str(), replacement.as_str()),
        _ => return None,
    };
    let mut lines = vec![format!("@@ {path}")];
    lines.extend(removed.lines().map(|l| format!("-{l}")));
    lines.extend(added.lines().map(|l| format!("+{l}")));
    let total = lines.len();
    if cut && total > DIFF_LINES {
        lines.truncate(DIFF_LINES);
        lines.push(format!("… {} more lines", total - DIFF_LINES));
    }
    Some(lines.join("\n"))
}

/// `text` cut to at most `max` bytes at a character boundary, marked.
fn cap(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{DecisionKind, EntryKind, ModelCall};
    use crate::state::Said;

    fn entry(step: u32, kind: &str, text: &str, call: Option<DecisionKind>) -> Entry {
        Entry {
            attempt: 1,
            at_ms: u64::from(step) * 10,
            ts_ms: 1_000 + u64::from(step),
            said: Said {
                kind: kind.parse().expect("a timeline kind"),
                step,
                text: text.into(),
                ok: !text.contains("exit 1"),
            },
            call: call.map(|kind| {
                Box::new(ModelCall {
                    kind,
                    reason: None,
                    reply_bytes: 10,
                    reply_hash: "h".into(),
                    input_tokens: 100,
                    cached_input_tokens: 0,
                    output_tokens: 20,
                    latency_ms: 5,
                })
            }),
            resources: None,
        }
    }

    fn steps(moments: &[Moment]) -> Vec<&ModelStep> {
        moments
            .iter()
            .filter_map(|m| match m {
                Moment::Step(s) => Some(s),
                Moment::Phase(_) => None,
            })
            .collect()
    }

    #[test]
    fn each_step_holds_its_call_its_text_and_what_the_runtime_did() {
        let entries = [
            entry(0, "attempt", "attempt 1 started", None),
            entry(
                1,
                "replace_text",
                "step 1: replace_text src/lib.rs",
                Some(DecisionKind::ReplaceText),
            ),
            entry(1, "edit", "edit src/lib.rs", None),
            entry(2, "retry", "provider retry", None),
            entry(
                2,
                "run_tool",
                "step 2: run_tool cargo",
                Some(DecisionKind::RunTool),
            ),
            entry(2, "command", "tool: cargo (1 arg) exit 101", None),
            entry(3, "provider_error", "provider failed", None),
            entry(0, "acceptance", "acceptance passed", None),
        ];
        let refs: Vec<&Entry> = entries.iter().collect();
        let transcript = TranscriptLine::read_all(concat!(
            r#"{"step":1,"reply":"{\"kind\":\"replace_text\",\"path\":\"src/lib.rs\",\"expected\":\"1..n\",\"replacement\":\"1..=n\"}","observation":"replaced 1 occurrence"}"#,
            "\n",
            r#"{"step":2,"reply":"no json here","observation":"invalid decision"}"#,
            "\nnot a line\n"
        ));
        assert_eq!(transcript.len(), 2);
        let price = Price {
            input_per_mtok: 1.0,
            cached_input_per_mtok: None,
            output_per_mtok: 2.0,
        };
        let moments = moments(&refs, &transcript, Some(&price), Texts::Excerpts);
        assert_eq!(moments.len(), 5, "{moments:#?}");
        assert!(matches!(&moments[0], Moment::Phase(a) if a.kind == EntryKind::Attempt));
        assert!(matches!(&moments[4], Moment::Phase(a) if a.kind == EntryKind::Acceptance));
        let steps = steps(&moments);
        let edit = steps[0];
        assert_eq!(edit.kind_name(), "replace_text");
        assert_eq!(edit.headline, "step 1: replace_text src/lib.rs");
        assert_eq!(
            edit.fields.as_deref(),
            Some("path=src/lib.rs (4 bytes → 5 bytes)")
        );
        assert_eq!(edit.observation.as_deref(), Some("replaced 1 occurrence"));
        assert_eq!(edit.diff.as_deref(), Some("@@ src/lib.rs\n-1..n\n+1..=n"));
        assert!(edit.cost_usd.is_some_and(|c| (c - 0.000_14).abs() < 1e-12));
        assert_eq!(edit.observed(), "replaced 1 occurrence");
        // The retry before the call belongs to its step; the failing
        // command marks it.
        let tool = steps[1];
        assert_eq!(tool.actions.len(), 3);
        assert_eq!(tool.headline, "step 2: run_tool cargo");
        assert_eq!(tool.ts_ms, 1_002);
        assert_eq!(tool.fields.as_deref(), Some("no json here"));
        assert_eq!(tool.diff, None);
        assert_eq!(tool.failure().as_deref(), Some("exit 101"));
        // A failed provider call: no decision, the log's words observed.
        let failed = steps[2];
        assert_eq!(failed.kind_name(), "provider_error");
        assert_eq!(failed.observed(), "provider failed");
        assert_eq!((failed.reply.as_ref(), failed.cost_usd), (None, None));
    }

    #[test]
    fn excerpts_are_capped_and_whole_texts_are_not() {
        let long = "x".repeat(5_000);
        let capped = cap(&long, OBSERVATION_EXCERPT);
        assert!(capped.len() < OBSERVATION_EXCERPT + 40);
        assert!(capped.ends_with("(5000 bytes in all)"));
        let write = Decision::WriteFile {
            path: "a".into(),
            content: "l\n".repeat(100),
        };
        let diff = edit_diff(&write, true).unwrap();
        assert_eq!(diff.lines().count(), DIFF_LINES + 1);
        assert!(diff.ends_with("… 61 more lines"));
        assert_eq!(edit_diff(&write, false).unwrap().lines().count(), 101);
        let entries = [entry(
            1,
            "read_file",
            "step 1: read_file a",
            Some(DecisionKind::ReadFile),
        )];
        let line = TranscriptLine {
            step: 1,
            reply: r#"{"kind":"read_file","path":"a"}"#.into(),
            observation: Some(long.clone()),
            ..TranscriptLine::default()
        };
        let refs: Vec<&Entry> = entries.iter().collect();
        for (texts, expect) in [(Texts::Excerpts, capped), (Texts::Whole, long)] {
            let moments = moments(&refs, std::slice::from_ref(&line), None, texts);
            assert_eq!(
                steps(&moments)[0].observation.as_deref(),
                Some(expect.as_str())
            );
        }
    }
}
