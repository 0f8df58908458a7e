//! The Anthropic Messages API as the bridge serves it: `POST /v1/messages`
//! read into a [`Conversation`] (a system prompt as a string or text
//! blocks; user and assistant turns as a string or content blocks: text,
//! `tool_use`, `tool_result`, with thinking and images left out), and a
//! [`Reply`] written back as one message or as the events of a stream
//! (`message_start`, a `content_block_start`/`_delta`/`_stop` per block —
//! text as `text_delta`, a tool call's input as one `input_json_delta` —
//! then `message_delta` with the stop reason and usage, `message_stop`).

use serde_json::{Value, json};

use crate::protocol::{Conversation, DialectError, Reply, Stop, Tool, ToolCall, Turn};

const DIALECT: &str = "Anthropic Messages";

fn bad(what: impl Into<String>) -> DialectError {
    DialectError {
        dialect: DIALECT,
        what: what.into(),
    }
}

/// The text of a string or of the text blocks of a list, joined by `sep`.
fn text_of(value: &Value, sep: &str) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(sep),
        _ => String::new(),
    }
}

/// Reads a Messages request body.
pub(crate) fn read_anthropic(body: &Value) -> Result<Conversation, DialectError> {
    let model = body["model"]
        .as_str()
        .ok_or_else(|| bad("no `model`"))?
        .to_string();
    let messages = body["messages"]
        .as_array()
        .ok_or_else(|| bad("no `messages` list"))?;
    let system = text_of(&body["system"], "\n\n");
    let mut turns = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        let content = &message["content"];
        match (role, content) {
            ("user", Value::String(text)) => turns.push(Turn::User(text.clone())),
            ("assistant", Value::String(text)) => turns.push(Turn::Assistant {
                text: text.clone(),
                calls: Vec::new(),
            }),
            ("user", Value::Array(blocks)) => {
                let mut text = Vec::new();
                for block in blocks {
                    match block["type"].as_str() {
                        Some("text") => text.extend(block["text"].as_str().map(String::from)),
                        Some("tool_result") => turns.push(Turn::ToolResult {
                            call_id: block["tool_use_id"].as_str().unwrap_or_default().into(),
                            text: text_of(&block["content"], "\n"),
                            error: block["is_error"].as_bool().unwrap_or(false),
                        }),
                        _ => {}
                    }
                }
                if !text.is_empty() {
                    turns.push(Turn::User(text.join("\n")));
                }
            }
            ("assistant", Value::Array(blocks)) => {
                let text = text_of(content, "\n");
                let calls = blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                    .map(|b| ToolCall {
                        id: b["id"].as_str().unwrap_or_default().into(),
                        name: b["name"].as_str().unwrap_or_default().into(),
                        input: b["input"].clone(),
                    })
                    .collect();
                turns.push(Turn::Assistant { text, calls });
            }
            _ => {
                return Err(bad(format!(
                    "message {i} has role {role:?} and content {content}"
                )));
            }
        }
    }
    let tools = body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| {
                    Some(Tool {
                        name: t["name"].as_str()?.to_string(),
                        description: t["description"].as_str().unwrap_or_default().into(),
                        schema: t["input_schema"].clone(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Conversation {
        model,
        system,
        turns,
        tools,
        stream: body["stream"].as_bool().unwrap_or(false),
        max_tokens: body["max_tokens"].as_u64(),
    })
}

fn stop_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "end_turn",
        Stop::ToolUse => "tool_use",
        Stop::MaxTokens => "max_tokens",
    }
}

/// The content blocks of a reply: its text (when there is any), then a
/// `tool_use` block per call.
fn blocks(reply: &Reply) -> Vec<Value> {
    let mut out = Vec::new();
    if !reply.text.is_empty() {
        out.push(json!({ "type": "text", "text": reply.text }));
    }
    for call in &reply.calls {
        out.push(
            json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": call.input }),
        );
    }
    out
}

/// A reply as one message (`id` the message's id).
pub(crate) fn anthropic_reply(id: &str, model: &str, reply: &Reply) -> Value {
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks(reply),
        "stop_reason": stop_reason(reply.stop),
        "stop_sequence": null,
        "usage": { "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens },
    })
}

/// A reply as the events of a stream, each `(event name, data)`.
pub(crate) fn anthropic_events(id: &str, model: &str, reply: &Reply) -> Vec<(&'static str, Value)> {
    let mut events = vec![(
        "message_start",
        json!({
            "type": "message_start",
            "message": {
                "id": id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": { "input_tokens": reply.input_tokens, "output_tokens": 0 },
            },
        }),
    )];
    for (index, block) in blocks(reply).into_iter().enumerate() {
        let (start, delta) = if block["type"] == "text" {
            (
                json!({ "type": "text", "text": "" }),
                json!({ "type": "text_delta", "text": block["text"] }),
            )
        } else {
            (
                json!({ "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} }),
                json!({ "type": "input_json_delta", "partial_json": block["input"].to_string() }),
            )
        };
        events.push((
            "content_block_start",
            json!({ "type": "content_block_start", "index": index, "content_block": start }),
        ));
        events.push((
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": index, "delta": delta }),
        ));
        events.push((
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": index }),
        ));
    }
    events.push((
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": { "stop_reason": stop_reason(reply.stop), "stop_sequence": null },
            "usage": { "output_tokens": reply.output_tokens },
        }),
    ));
    events.push(("message_stop", json!({ "type": "message_stop" })));
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Value {
        json!({
            "model": "local",
            "max_tokens": 4096,
            "stream": true,
            "system": [{"type": "text", "text": "You are an agent.\nOf code."}, {"type": "text", "text": "Be brief."}],
            "tools": [{"name": "mcp__agent-runtime__read_file", "description": "Read a file.",
                       "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}],
            "messages": [
                {"role": "user", "content": "Fix src/lib.rs."},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "Reading it."},
                    {"type": "tool_use", "id": "toolu_1", "name": "mcp__agent-runtime__read_file",
                     "input": {"path": "src/lib.rs"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": [{"type": "text", "text": "fn f() {}"}]},
                    {"type": "text", "text": "Go on."}]}
            ]
        })
    }

    #[test]
    fn a_request_reads_into_turns_tools_and_results() {
        let c = read_anthropic(&request()).unwrap();
        assert_eq!(c.model, "local");
        assert_eq!(c.system, "You are an agent.\nOf code.\n\nBe brief.");
        assert!(c.stream);
        assert_eq!(c.max_tokens, Some(4096));
        assert_eq!(c.tools.len(), 1);
        assert_eq!(c.tools[0].name, "mcp__agent-runtime__read_file");
        assert_eq!(c.tools[0].schema["properties"]["path"]["type"], "string");
        assert_eq!(c.turns[0], Turn::User("Fix src/lib.rs.".into()));
        let Turn::Assistant { text, calls } = &c.turns[1] else {
            panic!("{:?}", c.turns[1]);
        };
        assert_eq!(text, "Reading it.");
        assert_eq!(calls[0].input["path"], "src/lib.rs");
        assert_eq!(
            c.turns[2],
            Turn::ToolResult {
                call_id: "toolu_1".into(),
                text: "fn f() {}".into(),
                error: false
            }
        );
        assert_eq!(c.turns[3], Turn::User("Go on.".into()));
        let err = read_anthropic(&json!({"model": "m"})).unwrap_err();
        assert!(err.to_string().contains("no `messages`"), "{err}");
        let err =
            read_anthropic(&json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]}))
                .unwrap_err();
        assert!(err.to_string().contains("message 0"), "{err}");
    }

    #[test]
    fn a_reply_streams_as_the_sdk_reads_it_and_reassembles() {
        let reply = Reply {
            text: "Editing.".into(),
            calls: vec![ToolCall {
                id: "toolu_2".into(),
                name: "mcp__agent-runtime__replace_text".into(),
                input: json!({"path": "src/lib.rs", "expected": "1..n", "replacement": "1..=n"}),
            }],
            input_tokens: 120,
            output_tokens: 30,
            stop: Stop::ToolUse,
        };
        let whole = anthropic_reply("msg_1", "local", &reply);
        assert_eq!(whole["stop_reason"], "tool_use");
        assert_eq!(whole["content"][1]["input"]["replacement"], "1..=n");
        let events = anthropic_events("msg_1", "local", &reply);
        let names: Vec<&str> = events.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        // What a client rebuilds from the stream is the whole message.
        let mut content: Vec<Value> = Vec::new();
        for (_, data) in &events {
            match data["type"].as_str() {
                Some("content_block_start") => content.push(data["content_block"].clone()),
                Some("content_block_delta") => {
                    let block = content.last_mut().unwrap();
                    let delta = &data["delta"];
                    if delta["type"] == "text_delta" {
                        let text = format!(
                            "{}{}",
                            block["text"].as_str().unwrap(),
                            delta["text"].as_str().unwrap()
                        );
                        block["text"] = text.into();
                    } else {
                        block["input"] =
                            serde_json::from_str(delta["partial_json"].as_str().unwrap()).unwrap();
                    }
                }
                _ => {}
            }
        }
        assert_eq!(Value::Array(content), whole["content"]);
        assert_eq!(events[7].1["usage"]["output_tokens"], 30);
        let done = Reply {
            stop: Stop::EndTurn,
            calls: Vec::new(),
            ..reply.clone()
        };
        assert_eq!(
            anthropic_reply("m", "local", &done)["stop_reason"],
            "end_turn"
        );
        let cut = Reply {
            stop: Stop::MaxTokens,
            ..done
        };
        assert_eq!(anthropic_events("m", "local", &cut).len(), 6);
        assert_eq!(events[0].1["message"]["usage"]["input_tokens"], 120);
    }
}
