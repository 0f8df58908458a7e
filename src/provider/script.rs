//! The scripted provider: replays model replies from JSON-lines files, for
//! offline runs, the demo and tests.
//!
//! Format, one reply per line:
//! - a JSON object is sent as the reply, serialized as compact JSON (keys
//!   in sorted order);
//! - a JSON string is sent verbatim, to simulate malformed output (prose,
//!   code fences, broken JSON);
//! - blank lines and lines whose first non-blank character is `#` are
//!   skipped (no JSON value starts with `#`, so this is unambiguous);
//! - anything else is an error naming the file, line and column.
//!
//! With several files, attempt k uses file k (1-based) and the last file
//! repeats. A script that runs out is a provider error: "script exhausted
//! after N replies". Token counts are estimates (see `tokens`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value};

use super::api::{ConverseTurn, Conversed, Provider, ProviderReply, ProviderRequest};
use super::error::ProviderError;
use super::tokens::estimate_tokens;
use crate::cancel::CancelToken;
use crate::decision::KINDS;
use crate::manifest::ScriptConfig;
use crate::protocol::ScriptDialect;
use crate::protocol::{Conversation, Reply, Stop, ToolCall, Turn};

/// The replies of one script file, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScriptReplies {
    pub(crate) path: PathBuf,
    pub(crate) replies: Vec<String>,
}

/// Reads and checks a script file.
pub(crate) fn load_script(path: &Path) -> Result<ScriptReplies, ProviderError> {
    let text = std::fs::read_to_string(path).map_err(|source| ProviderError::ScriptRead {
        path: path.to_path_buf(),
        source,
    })?;
    parse_script(path, &text)
}

/// Checks script `text` as if read from `path`.
pub(super) fn parse_script(path: &Path, text: &str) -> Result<ScriptReplies, ProviderError> {
    let mut replies = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = line.chars().take_while(|c| c.is_whitespace()).count();
        let error = |column: usize, message: String| ProviderError::ScriptParse {
            path: path.to_path_buf(),
            line: index + 1,
            column: indent + column,
            message,
        };
        let value: Value = serde_json::from_str(content).map_err(|e| {
            let message = e.to_string();
            let message = match message.rfind(" at line ") {
                Some(cut) => message.get(..cut).unwrap_or(&message).to_string(),
                None => message,
            };
            error(e.column().max(1), format!("invalid JSON: {message}"))
        })?;
        let reply = match value {
            Value::String(text) => text,
            Value::Object(_) => value.to_string(),
            other => {
                return Err(error(
                    1,
                    format!(
                        "expected a JSON object (a reply) or a string (sent verbatim), found {}",
                        crate::decision::json_type(&other)
                    ),
                ));
            }
        };
        replies.push(reply);
    }
    Ok(ScriptReplies {
        path: path.to_path_buf(),
        replies,
    })
}

/// Replays replies from script files.
#[derive(Debug)]
pub(crate) struct ScriptProvider {
    name: String,
    files: Vec<PathBuf>,
    /// The script of the attempt being replayed and the next reply's index.
    current: Option<(u32, ScriptReplies, usize)>,
    /// Tool calls made so far, numbering the next one's id.
    calls: usize,
    /// The API it answers an agent's calls as (see [`ScriptDialect`]).
    dialect: Option<ScriptDialect>,
}

impl ScriptProvider {
    /// A provider over `files` (attempt k uses entry k, the last repeats).
    pub(crate) fn new(files: Vec<PathBuf>) -> Result<ScriptProvider, ProviderError> {
        if files.is_empty() {
            return Err(ProviderError::Fatal {
                message: "a script provider needs at least one script file".to_string(),
            });
        }
        Ok(ScriptProvider {
            name: "script".to_string(),
            files,
            current: None,
            calls: 0,
            dialect: None,
        })
    }

    pub(crate) fn from_config(config: &ScriptConfig) -> Result<ScriptProvider, ProviderError> {
        let mut provider = ScriptProvider::new(config.script.clone())?;
        provider.dialect = config.dialect;
        Ok(provider)
    }

    /// Sets the name shown in reports.
    pub(crate) fn with_name(mut self, name: impl Into<String>) -> ScriptProvider {
        self.name = name.into();
        self
    }

    /// The file attempt `attempt` (1-based) replays.
    pub(crate) fn file_for(&self, attempt: u32) -> &Path {
        let index = (attempt.max(1) as usize - 1).min(self.files.len().saturating_sub(1));
        self.files
            .get(index)
            .map_or(Path::new(""), PathBuf::as_path)
    }
}

impl ScriptProvider {
    /// The line after the last one read, if the script has one.
    fn peek_line(&self) -> Option<String> {
        let (_, script, next) = self.current.as_ref()?;
        script.replies.get(*next).cloned()
    }

    /// Passes over the line [`ScriptProvider::peek_line`] showed.
    fn skip_line(&mut self) {
        if let Some((_, _, next)) = self.current.as_mut() {
            *next += 1;
        }
    }

    /// The next line of attempt `attempt`'s script.
    fn next_line(&mut self, attempt: u32) -> Result<String, ProviderError> {
        let fresh = !matches!(&self.current, Some((a, _, _)) if *a == attempt);
        if fresh {
            let script = load_script(self.file_for(attempt))?;
            self.current = Some((attempt, script, 0));
        }
        let Some((_, script, next)) = self.current.as_mut() else {
            return Err(ProviderError::Fatal {
                message: "script state lost".to_string(),
            });
        };
        let Some(text) = script.replies.get(*next).cloned() else {
            return Err(ProviderError::ScriptExhausted {
                path: script.path.clone(),
                replies: script.replies.len(),
            });
        };
        *next += 1;
        Ok(text)
    }
}

impl Provider for ScriptProvider {
    fn complete(
        &mut self,
        request: &ProviderRequest,
        cancel: &CancelToken,
    ) -> Result<ProviderReply, ProviderError> {
        let started = Instant::now();
        if cancel.is_cancelled() {
            return Err(ProviderError::Cancelled);
        }
        let text = self.next_line(request.attempt)?;
        let prompt_tokens = estimate_tokens(&request.system)
            + request
                .messages
                .iter()
                .map(|m| estimate_tokens(&m.content))
                .sum::<u64>();
        Ok(ProviderReply {
            output_tokens: estimate_tokens(&text),
            input_tokens: prompt_tokens,
            cached_input_tokens: 0,
            text,
            latency: started.elapsed(),
            retries: Vec::new(),
        })
    }

    fn converse(
        &mut self,
        conversation: &Conversation,
        turn: ConverseTurn,
        cancel: &CancelToken,
    ) -> Result<Conversed, ProviderError> {
        let started = Instant::now();
        if cancel.is_cancelled() {
            return Err(ProviderError::Cancelled);
        }
        // An agent's own side request never uses a line.
        let line = if turn.side {
            String::new()
        } else {
            self.next_line(turn.attempt)?
        };
        let mut reply = reply_of_line(&line, self.calls);
        // Words before a call are the model's narration of it: a string
        // line followed by a decision is one reply, text and call, so a
        // script written for the runtime's loop (where prose is refused
        // and the model goes on) does not end an agent's turn.
        if reply.calls.is_empty()
            && !turn.side
            && let Some(next) = self.peek_line()
        {
            let then = reply_of_line(&next, self.calls);
            if !then.calls.is_empty() {
                self.skip_line();
                reply = Reply {
                    text: reply.text,
                    ..then
                };
            }
        }
        self.calls += reply.calls.len();
        reply.input_tokens = conversation_tokens(conversation);
        reply.output_tokens = estimate_tokens(&line);
        if let Some(dialect) = self.dialect {
            reply = through(dialect, conversation, reply)?;
        }
        let billed = ProviderReply {
            text: line,
            input_tokens: reply.input_tokens,
            cached_input_tokens: 0,
            output_tokens: reply.output_tokens,
            latency: started.elapsed(),
            retries: Vec::new(),
        };
        Ok(Conversed { reply, billed })
    }
}

/// A script line as an agent's model reply: a decision becomes a call of
/// the gateway's tool of its kind (its fields the input), a line
/// `{"kind":"agent_tool","name":N,"input":{...}}` a call of the agent's
/// own tool `N`, and a string (or any other line) what the model says.
/// `seq` numbers the calls' ids.
pub(crate) fn reply_of_line(line: &str, seq: usize) -> Reply {
    let said = |text: &str| Reply {
        text: text.to_string(),
        calls: Vec::new(),
        input_tokens: 0,
        output_tokens: 0,
        stop: Stop::EndTurn,
    };
    let Ok(Value::Object(mut fields)) = serde_json::from_str::<Value>(line) else {
        return said(line);
    };
    let kind = fields
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (name, input) = if kind == AGENT_TOOL {
        let Some(name) = fields.get("name").and_then(Value::as_str) else {
            return said(line);
        };
        let input = fields
            .get("input")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        (name.to_string(), input)
    } else if KINDS.iter().any(|spec| spec.kind == kind) {
        let kind = kind.to_string();
        fields.remove("kind");
        (kind, Value::Object(fields))
    } else {
        return said(line);
    };
    Reply {
        text: String::new(),
        calls: vec![ToolCall {
            id: format!("call_{:04}", seq + 1),
            name,
            input,
        }],
        input_tokens: 0,
        output_tokens: 0,
        stop: Stop::ToolUse,
    }
}

/// A conversation and its reply taken through another API's wire format
/// and back, as a provider speaking that API would: the request written
/// and read again (what reaches the model), the reply written in the API's
/// response format and read again. What a translation loses shows.
fn through(
    dialect: ScriptDialect,
    conversation: &Conversation,
    reply: Reply,
) -> Result<Reply, ProviderError> {
    use crate::wire::{anthropic, openai};
    let lost = |e: crate::protocol::DialectError| ProviderError::Fatal {
        message: format!("the script's dialect: {e}"),
    };
    let mut sent = match dialect {
        ScriptDialect::Anthropic => {
            anthropic::read_anthropic(&anthropic::anthropic_request(conversation, 4096))
        }
        ScriptDialect::Openai => openai::read_chat(&openai::chat_request(conversation)),
    }
    .map_err(lost)?;
    sent.stream = conversation.stream;
    sent.max_tokens = conversation.max_tokens;
    // Turns may merge (an API that wants one message per role), but no
    // call, result or tool may be lost.
    let (before, after) = (shape(conversation), shape(&sent));
    if before != after {
        return Err(ProviderError::Fatal {
            message: format!(
                "the script's dialect lost part of the conversation: {before:?} became {after:?} \
                 (calls, results, tools)"
            ),
        });
    }
    match dialect {
        ScriptDialect::Anthropic => {
            anthropic::read_anthropic_reply(&anthropic::anthropic_reply("msg", "script", &reply))
        }
        ScriptDialect::Openai => {
            openai::read_chat_reply(&openai::chat_reply(&reply, "script", "chatcmpl"))
        }
    }
    .map_err(lost)
}

/// A conversation's calls, tool results and tools, counted.
fn shape(conversation: &Conversation) -> (usize, usize, usize) {
    let calls = conversation
        .turns
        .iter()
        .map(|t| match t {
            Turn::Assistant { calls, .. } => calls.len(),
            _ => 0,
        })
        .sum();
    let results = conversation
        .turns
        .iter()
        .filter(|t| matches!(t, Turn::ToolResult { .. }))
        .count();
    (calls, results, conversation.tools.len())
}

/// The `kind` of a script line that is a raw call of an agent's own tool.
pub(crate) const AGENT_TOOL: &str = "agent_tool";

/// Estimated tokens of a conversation as sent.
fn conversation_tokens(conversation: &Conversation) -> u64 {
    let turns: u64 = conversation
        .turns
        .iter()
        .map(|turn| match turn {
            Turn::User(text) => estimate_tokens(text),
            Turn::Assistant { text, calls } => {
                estimate_tokens(text)
                    + calls
                        .iter()
                        .map(|c| estimate_tokens(&c.input.to_string()))
                        .sum::<u64>()
            }
            Turn::ToolResult { text, .. } => estimate_tokens(text),
        })
        .sum();
    let tools: u64 = conversation
        .tools
        .iter()
        .map(|t| estimate_tokens(&t.description) + estimate_tokens(&t.schema.to_string()))
        .sum();
    estimate_tokens(&conversation.system) + turns + tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Message;

    fn request(attempt: u32) -> ProviderRequest {
        ProviderRequest {
            system: "You fix bugs.".to_string(),
            messages: vec![Message::user("Fix sum_up_to.")],
            schema: None,
            attempt,
        }
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn objects_are_compact_strings_verbatim_comments_skipped() {
        let text = "# a comment\n\n{ \"kind\": \"read_file\", \"path\": \"src/lib.rs\" }\n  # indented comment\n\"Sure! ```json {oops```\"\r\n";
        let script = parse_script(Path::new("s.jsonl"), text).unwrap();
        assert_eq!(
            script.replies,
            [
                r#"{"kind":"read_file","path":"src/lib.rs"}"#,
                "Sure! ```json {oops```"
            ]
        );
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let err = parse_script(
            Path::new("s.jsonl"),
            "# ok\n{\"kind\":\"verify\"}\n  {\"kind\": }\n",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.jsonl:3:12: invalid JSON: expected value"
        );
        let err = parse_script(Path::new("s.jsonl"), "[1, 2]\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.jsonl:1:1: expected a JSON object (a reply) or a string (sent verbatim), found an array"
        );
        let err = load_script(Path::new("/nonexistent/s.jsonl")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/s.jsonl: cannot read script:"),
            "{err}"
        );
    }

    #[test]
    fn replays_in_order_then_reports_exhaustion() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "a.jsonl",
            "{\"kind\":\"verify\"}\n\"not json\"\n",
        );
        let mut provider = ScriptProvider::new(vec![path.clone()]).unwrap();
        let cancel = CancelToken::new();
        let first = provider.complete(&request(1), &cancel).unwrap();
        assert_eq!(first.text, r#"{"kind":"verify"}"#);
        assert_eq!(first.output_tokens, 5);
        assert_eq!(first.input_tokens, 4 + 4);
        assert_eq!(
            provider.complete(&request(1), &cancel).unwrap().text,
            "not json"
        );
        let err = provider.complete(&request(1), &cancel).unwrap_err();
        assert!(matches!(
            err,
            ProviderError::ScriptExhausted { replies: 2, .. }
        ));
        assert_eq!(
            err.to_string(),
            format!("script {} exhausted after 2 replies", path.display())
        );
        assert!(!err.is_retryable());
    }

    #[test]
    fn attempt_k_uses_entry_k_and_the_last_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let one = write(dir.path(), "1.jsonl", "\"first\"\n");
        let two = write(dir.path(), "2.jsonl", "\"second\"\n");
        let mut provider = ScriptProvider::new(vec![one, two])
            .unwrap()
            .with_name("sweep");
        let cancel = CancelToken::new();
        assert_eq!(
            provider.complete(&request(1), &cancel).unwrap().text,
            "first"
        );
        assert_eq!(
            provider.complete(&request(2), &cancel).unwrap().text,
            "second"
        );
        // A new attempt starts its file from the top, the last file repeats.
        assert_eq!(
            provider.complete(&request(3), &cancel).unwrap().text,
            "second"
        );
        assert!(provider.complete(&request(3), &cancel).is_err());
    }

    #[test]
    fn refuses_when_cancelled_or_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "a.jsonl", "\"x\"\n");
        let mut provider = ScriptProvider::new(vec![path]).unwrap();
        let cancel = CancelToken::new();
        cancel.cancel();
        assert!(matches!(
            provider.complete(&request(1), &cancel),
            Err(ProviderError::Cancelled)
        ));
        assert!(ScriptProvider::new(vec![]).is_err());
    }

    #[test]
    fn behind_the_bridge_prose_before_a_decision_is_its_narration() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "s.jsonl",
            "\"Let me look.\"\n{\"kind\":\"read_file\",\"path\":\"a\"}\n\"All done.\"\n",
        );
        let mut provider = ScriptProvider::new(vec![path]).unwrap();
        let conversation = crate::protocol::Conversation {
            model: "m".into(),
            system: String::new(),
            turns: Vec::new(),
            tools: Vec::new(),
            stream: false,
            max_tokens: None,
        };
        let turn = ConverseTurn {
            attempt: 1,
            side: false,
        };
        let cancel = CancelToken::new();
        let first = provider
            .converse(&conversation, turn, &cancel)
            .unwrap()
            .reply;
        assert_eq!(first.text, "Let me look.");
        assert_eq!(first.calls[0].name, "read_file");
        assert_eq!(first.stop, Stop::ToolUse);
        // Prose with no decision after it ends the turn.
        let last = provider
            .converse(&conversation, turn, &cancel)
            .unwrap()
            .reply;
        assert_eq!(
            (last.text.as_str(), last.stop),
            ("All done.", Stop::EndTurn)
        );
        assert!(last.calls.is_empty());
    }

    #[test]
    fn the_example_script_replays_the_example_fix() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("evaluation/scripts/off_by_one.jsonl");
        let script = load_script(&path).unwrap();
        let kinds: Vec<&'static str> = script
            .replies
            .iter()
            .map(|reply| crate::decision::parse_decision(reply).unwrap().kind())
            .collect();
        assert_eq!(kinds, ["read_file", "replace_text", "verify", "finish"]);
    }
}
