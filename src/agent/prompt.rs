//! The prompt builder: pure functions from the job's facts and the history
//! of (reply, observation) turns to a provider request. Nothing here reads
//! files or knows about providers beyond the request shape.

use std::fmt::Write;

use crate::provider::{Message, ProviderRequest};

/// What the model is told about its job.
#[derive(Debug, Clone)]
pub(crate) struct PromptFacts {
    pub(crate) task: String,
    pub(crate) files: Vec<String>,
    pub(crate) files_complete: bool,
    pub(crate) allow: Vec<String>,
    pub(crate) editable: Vec<String>,
    pub(crate) verify: Vec<String>,
    pub(crate) max_steps: u32,
    pub(crate) max_invalid: u32,
    pub(crate) observation_cap: usize,
    pub(crate) schema: serde_json::Value,
}

/// One step of the conversation: the model's raw reply and what the
/// runtime observed when acting on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turn {
    pub(crate) reply: String,
    pub(crate) observation: String,
}

/// Marker that replaces text dropped to fit the context budget.
pub(crate) const ELIDED: &str = "[elided to fit the context budget]";

/// The fixed rules, the schema and the job's facts.
pub(crate) fn system_prompt(facts: &PromptFacts) -> String {
    let mut s = String::new();
    s.push_str(
        "You are a careful software engineer working in a sandboxed workspace. \
         You cannot run anything yourself: each reply is ONE decision, a single JSON object, \
         which the runtime checks and executes, then reports back what happened.\n\n",
    );
    s.push_str("Rules:\n");
    s.push_str("- Reply with exactly one JSON object and nothing else. No prose, no code fences, no second object.\n");
    s.push_str("- Paths are relative to the workspace root. Absolute paths, '..', .git and symlinks that leave the workspace are refused.\n");
    let _ = writeln!(
        s,
        "- You may only create or change files matching: {}",
        join_or_none(&facts.editable)
    );
    let _ = writeln!(
        s,
        "- run_tool commands must match an allow rule (tokens are globs, a final ** matches any remaining arguments): {}",
        join_or_none(&facts.allow)
    );
    let _ = writeln!(
        s,
        "- After any edit you must verify: {{\"kind\":\"verify\"}} runs `{}`. A finish with unverified edits makes the runtime run it; finish is accepted only if it passes.",
        facts.verify.join(" ")
    );
    s.push_str("- run_tool never counts as verification, even with the verify command.\n");
    s.push_str("- Finishing without any edit fails the task.\n");
    let _ = writeln!(
        s,
        "- You have at most {} steps; {} invalid decisions in a row end the attempt. Observations are cut to {} bytes.",
        facts.max_steps, facts.max_invalid, facts.observation_cap
    );
    s.push_str("\nDecisions (JSON Schema):\n");
    s.push_str(&serde_json::to_string(&facts.schema).unwrap_or_default());
    s.push_str(
        "\n\nExamples:\n{\"kind\":\"read_file\",\"path\":\"src/lib.rs\"}\n\
         {\"kind\":\"replace_text\",\"path\":\"src/lib.rs\",\"expected\":\"old text\",\"replacement\":\"new text\"}\n\
         {\"kind\":\"verify\"}\n{\"kind\":\"finish\",\"summary\":\"what changed and why\"}\n",
    );
    s
}

/// The opening user message: the task and the workspace's files.
pub(crate) fn task_message(facts: &PromptFacts) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Task:\n{}\n", facts.task.trim_end());
    s.push_str("Files in the workspace:\n");
    for file in &facts.files {
        let _ = writeln!(s, "{file}");
    }
    if !facts.files_complete {
        s.push_str("[listing cut short; use list_files on a directory]\n");
    }
    s.push_str("\nReply with your first decision.");
    s
}

/// Builds the request, eliding the oldest observations and replies once the
/// history exceeds `context_budget` bytes (the newest turn is always whole).
pub(crate) fn build_request(
    facts: &PromptFacts,
    history: &[Turn],
    context_budget: usize,
    attempt: u32,
) -> ProviderRequest {
    let mut turns: Vec<Turn> = history.to_vec();
    let mut total: usize = turns
        .iter()
        .map(|t| t.reply.len() + t.observation.len())
        .sum();
    for turn in turns.iter_mut().rev().skip(1).rev() {
        if total <= context_budget {
            break;
        }
        for text in [&mut turn.observation, &mut turn.reply] {
            if text.len() > ELIDED.len() {
                total -= text.len() - ELIDED.len();
                *text = ELIDED.to_string();
            }
        }
    }
    let mut messages = vec![Message::user(task_message(facts))];
    for turn in turns {
        messages.push(Message::assistant(turn.reply));
        messages.push(Message::user(turn.observation));
    }
    ProviderRequest {
        system: system_prompt(facts),
        messages,
        schema: Some(facts.schema.clone()),
        attempt,
    }
}

/// Cuts `text` to at most `cap` bytes, keeping the head and the tail.
pub(crate) fn cap_text(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_string();
    }
    let keep = cap.saturating_sub(64) / 2;
    let head_end = floor_char_boundary(text, keep);
    let tail_start = ceil_char_boundary(text, text.len() - keep);
    format!(
        "{}\n[... {} bytes omitted ...]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn join_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_string()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> PromptFacts {
        PromptFacts {
            task: "Fix sum_up_to.".into(),
            files: vec!["src/".into(), "src/lib.rs".into()],
            files_complete: true,
            allow: vec!["cargo test **".into()],
            editable: vec!["src/**/*.rs".into()],
            verify: vec!["cargo".into(), "test".into()],
            max_steps: 16,
            max_invalid: 3,
            observation_cap: 16384,
            schema: serde_json::json!({"oneOf": []}),
        }
    }

    fn turn(n: usize, size: usize) -> Turn {
        Turn {
            reply: format!("reply{n}"),
            observation: format!("obs{n}:{}", "x".repeat(size)),
        }
    }

    #[test]
    fn system_prompt_states_the_rules_and_facts() {
        let s = system_prompt(&facts());
        for needle in [
            "src/**/*.rs",
            "cargo test **",
            "`cargo test`",
            "at most 16 steps",
            "oneOf",
            "exactly one JSON object",
        ] {
            assert!(s.contains(needle), "missing {needle}: {s}");
        }
        let t = task_message(&facts());
        assert!(t.contains("Fix sum_up_to.") && t.contains("src/lib.rs"));
    }

    #[test]
    fn conversation_alternates_and_starts_with_the_task() {
        let req = build_request(&facts(), &[turn(1, 3), turn(2, 3)], 1 << 20, 2);
        let roles: Vec<_> = req.messages.iter().map(|m| m.role).collect();
        use crate::provider::Role::*;
        assert_eq!(roles, [User, Assistant, User, Assistant, User]);
        assert_eq!(req.messages[3].content, "reply2");
        assert_eq!(req.attempt, 2);
        assert!(req.schema.is_some());
    }

    #[test]
    fn oldest_turns_are_elided_first_and_the_newest_never() {
        let history: Vec<Turn> = (0..5).map(|n| turn(n, 1000)).collect();
        let req = build_request(&facts(), &history, 2500, 1);
        let obs: Vec<&str> = req
            .messages
            .iter()
            .skip(2)
            .step_by(2)
            .map(|m| m.content.as_str())
            .collect();
        assert_eq!(obs[0], ELIDED);
        assert_eq!(obs[1], ELIDED);
        assert_eq!(obs[2], ELIDED);
        assert!(obs[3].starts_with("obs3"));
        assert!(obs[4].starts_with("obs4"));
        let tiny = build_request(&facts(), &history, 10, 1);
        let last = &tiny.messages.last().unwrap().content;
        assert!(
            last.starts_with("obs4"),
            "the newest observation is kept whole"
        );
    }

    #[test]
    fn cap_keeps_head_and_tail_on_char_boundaries() {
        let text = format!("{}{}", "é".repeat(200), "end");
        let capped = cap_text(&text, 128);
        assert!(capped.len() <= 128 + 40);
        assert!(capped.starts_with('é') && capped.ends_with("end"));
        assert!(capped.contains("bytes omitted"));
        assert_eq!(cap_text("short", 128), "short");
    }
}
