//! An attempt's timeline ([`AttemptTimeline`]), built once from the
//! detail fold's entries and, with `trace = "full"`, the attempt's
//! transcript: each model step with its call, cost, the model's reply,
//! the observation it got, its key fields and an edit as a diff, and the
//! runtime's actions in order. The report, the viewer and the exports
//! all read this one type; none reads the transcript again.

use crate::decision::{Decision, parse_decision};
use crate::protocol::{
    Action, AttemptTimeline, FailureKind, ModelStep, Moment, Outcome, Price, TranscriptLine,
};
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

/// The timelines of `job`: its entries grouped as every flat list is
/// ([`AttemptTimeline::from_flat`]: one per run of one attempt, in log
/// order, entries of no attempt such as a retry between two under attempt
/// 0; a step per run of one step number), then each step given what the
/// log's lines leave out: its call and cost, and from `transcript(n)`
/// (attempt `n`'s transcript, when kept) the model's text.
pub(crate) fn attempts(
    job: &Job,
    entries: &[Entry],
    transcript: &dyn Fn(u32) -> Option<Vec<TranscriptLine>>,
    texts: Texts,
) -> Vec<AttemptTimeline> {
    let end = |n: u32| job.attempt_numbered(n).and_then(|a| a.finished());
    build(entries, transcript, &end, job.price.as_ref(), texts)
}

/// How an attempt ended, once it did.
type End = Option<(Outcome, Option<FailureKind>)>;

/// [`attempts`], given how each attempt ended and the job's price.
fn build(
    entries: &[Entry],
    transcript: &dyn Fn(u32) -> Option<Vec<TranscriptLine>>,
    end: &dyn Fn(u32) -> End,
    price: Option<&Price>,
    texts: Texts,
) -> Vec<AttemptTimeline> {
    let flat = entries.iter().map(|e| {
        let action = Action {
            at_ms: e.at_ms,
            kind: e.said.kind,
            text: e.said.text.clone(),
            ok: e.said.ok,
            status: e.said.status.clone(),
            resources: e.resources.as_deref().copied(),
        };
        (e.attempt, e.said.step, action)
    });
    let mut timelines = AttemptTimeline::from_flat(flat);
    let mut read: Vec<(u32, Vec<TranscriptLine>)> = Vec::new();
    let mut rest = entries;
    for timeline in &mut timelines {
        let n = timeline.attempt;
        if n > 0 && !read.iter().any(|(k, _)| *k == n) {
            read.push((n, transcript(n).unwrap_or_default()));
        }
        let lines = read
            .iter()
            .find(|(k, _)| *k == n)
            .map_or(&[][..], |(_, l)| l.as_slice());
        // The timeline's entries, in the order its actions hold them.
        let (mine, tail) = rest.split_at(timeline.actions().count().min(rest.len()));
        rest = tail;
        timeline.started_ms = mine.first().map_or(0, |e| e.ts_ms);
        timeline.ended_ms = mine.last().map_or(0, |e| e.ts_ms);
        let end = end(n);
        timeline.outcome = end.map(|(outcome, _)| outcome);
        timeline.failure_kind = end.and_then(|(_, kind)| kind);
        let mut at = 0;
        for moment in &mut timeline.moments {
            let Moment::Step(step) = moment else {
                at += 1;
                continue;
            };
            let group = mine.get(at..at + step.actions.len()).unwrap_or_default();
            at += step.actions.len();
            let recorded = lines.iter().find(|t| t.step == step.step);
            complete(step, group, recorded, price, texts);
        }
    }
    timelines
}

/// Gives `step` what its entries (`group`) and its transcript line hold
/// beyond its lines: the call (whose entry heads the step), when and what
/// it cost, and the model's text.
fn complete(
    step: &mut ModelStep,
    group: &[Entry],
    recorded: Option<&TranscriptLine>,
    price: Option<&Price>,
    texts: Texts,
) {
    if let Some(with_call) = group.iter().rev().find(|e| e.call.is_some()) {
        step.ts_ms = with_call.ts_ms;
        step.headline.clone_from(&with_call.said.text);
        step.kind = with_call.said.kind;
        step.call = with_call.call.as_deref().cloned();
    } else if let Some(first) = group.first() {
        step.ts_ms = first.ts_ms;
    }
    step.cost_usd = step.call.as_ref().and_then(|c| {
        price.map(|p| p.cost(c.input_tokens, c.cached_input_tokens, c.output_tokens))
    });
    let Some(recorded) = recorded else {
        return;
    };
    let decision = parse_decision(&recorded.reply).ok();
    let keep = |text: &str, max: usize| match texts {
        Texts::Excerpts => cap(text, max),
        Texts::Whole => text.to_string(),
    };
    step.fields = Some(match &decision {
        Some(d) => key_fields(d),
        None => cap(&recorded.reply, FIELDS_CAP),
    });
    step.reply = Some(keep(&recorded.reply, REPLY_EXCERPT));
    step.observation = recorded
        .observation
        .as_deref()
        .map(|o| keep(o, OBSERVATION_EXCERPT));
    step.diff = decision
        .as_ref()
        .and_then(|d| edit_diff(d, texts == Texts::Excerpts));
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
                status: text.split_once(") ").map(|(_, status)| status.to_string()),
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
        let ended = |_| Some((Outcome::Failed, Some(FailureKind::TestsFailed)));
        let built = build(
            &entries,
            &|n| (n == 1).then(|| transcript.clone()),
            &ended,
            Some(&price),
            Texts::Excerpts,
        );
        assert_eq!(built.len(), 1);
        let attempt = &built[0];
        assert_eq!((attempt.started_ms, attempt.ended_ms), (1_000, 1_000));
        assert_eq!(attempt.failure_kind, Some(FailureKind::TestsFailed));
        let moments = &attempt.moments;
        assert_eq!(moments.len(), 5, "{moments:#?}");
        assert!(matches!(&moments[0], Moment::Phase(a) if a.kind == EntryKind::Attempt));
        assert!(matches!(&moments[4], Moment::Phase(a) if a.kind == EntryKind::Acceptance));
        let steps = steps(moments);
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
        for (texts, expect) in [(Texts::Excerpts, capped), (Texts::Whole, long)] {
            let built = build(
                &entries,
                &|_| Some(vec![line.clone()]),
                &|_| None,
                None,
                texts,
            );
            let moments = &built[0].moments;
            assert_eq!(
                steps(moments)[0].observation.as_deref(),
                Some(expect.as_str())
            );
        }
    }
}
