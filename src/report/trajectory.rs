//! What a `trace = "full"` transcript adds to a job's timeline: per step,
//! the decision's key fields, an excerpt of the observation the model got,
//! and an edit as a diff. The log alone never holds file contents or
//! output; only the opt-in transcript does, and only capped excerpts of it
//! reach the report.

use super::model::TimelineEntry;
use crate::decision::{Decision, parse_decision};
use crate::protocol::TranscriptLine;

/// Bytes of an observation shown per step.
pub(super) const OBSERVATION_EXCERPT: usize = 600;
/// Lines of an edit's diff shown per step.
pub(super) const DIFF_LINES: usize = 40;
/// Bytes of a decision's key fields.
const FIELDS_CAP: usize = 300;

/// Attaches attempt `attempt`'s transcript to its decision entries.
pub(super) fn attach(timeline: &mut [TimelineEntry], attempt: u32, steps: &[TranscriptLine]) {
    for step in steps {
        let Some(entry) = timeline
            .iter_mut()
            .find(|e| e.attempt == attempt && e.step == step.step && e.kind.is_decision())
        else {
            continue;
        };
        let decision = parse_decision(&step.reply).ok();
        entry.fields = Some(match &decision {
            Some(d) => key_fields(d),
            None => cap(&step.reply, FIELDS_CAP),
        });
        entry.observation = step
            .observation
            .as_deref()
            .map(|o| cap(o, OBSERVATION_EXCERPT));
        entry.diff = decision.as_ref().and_then(edit_diff);
    }
}

/// The fields that say what a decision did, in one line.
pub(super) fn key_fields(decision: &Decision) -> String {
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

/// An edit as diff lines: removed text `-`, written text `+`.
fn edit_diff(decision: &Decision) -> Option<String> {
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
    lines.truncate(DIFF_LINES);
    if total > DIFF_LINES {
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

    fn entry(step: u32, kind: &str) -> TimelineEntry {
        TimelineEntry {
            attempt: 1,
            step,
            at_ms: 0,
            kind: kind.parse().expect("a timeline kind"),
            detail: String::new(),
            ok: true,
            fields: None,
            observation: None,
            diff: None,
            resources: None,
        }
    }

    #[test]
    fn transcripts_fill_the_decision_entries_of_their_steps() {
        let text = concat!(
            r#"{"step":1,"reply":"{\"kind\":\"replace_text\",\"path\":\"src/lib.rs\",\"expected\":\"1..n\",\"replacement\":\"1..=n\"}","observation":"replaced 1 occurrence"}"#,
            "\n",
            r#"{"step":2,"reply":"no json here","observation":"invalid decision"}"#,
            "\nnot a line\n"
        );
        let steps = TranscriptLine::read_all(text);
        assert_eq!(steps.len(), 2);
        let mut timeline = vec![
            entry(0, "attempt"),
            entry(1, "replace_text"),
            entry(1, "edit"),
            entry(2, "invalid"),
        ];
        attach(&mut timeline, 1, &steps);
        assert_eq!(timeline[0].fields, None);
        assert_eq!(
            timeline[1].fields.as_deref(),
            Some("path=src/lib.rs (4 bytes → 5 bytes)")
        );
        assert_eq!(
            timeline[1].observation.as_deref(),
            Some("replaced 1 occurrence")
        );
        assert_eq!(
            timeline[1].diff.as_deref(),
            Some("@@ src/lib.rs\n-1..n\n+1..=n")
        );
        assert_eq!(
            timeline[2].fields, None,
            "the edit entry is not the decision"
        );
        assert_eq!(timeline[3].fields.as_deref(), Some("no json here"));
    }

    #[test]
    fn long_text_is_capped() {
        let long = "x".repeat(5_000);
        let capped = cap(&long, OBSERVATION_EXCERPT);
        assert!(capped.len() < OBSERVATION_EXCERPT + 40);
        assert!(capped.ends_with("(5000 bytes in all)"));
        let write = Decision::WriteFile {
            path: "a".into(),
            content: "l\n".repeat(100),
        };
        let diff = edit_diff(&write).unwrap();
        assert_eq!(diff.lines().count(), DIFF_LINES + 1);
        assert!(diff.ends_with("… 61 more lines"));
    }
}
