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
    let mut system = text_of(&body["system"], "\n\n");
    let mut turns = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        let content = &message["content"];
        match (role, content) {
            // Claude Code passes its MCP servers' instructions as a
            // system message among the turns: part of the system prompt.
            ("system", Value::String(_) | Value::Array(_)) => {
                let text = text_of(content, "\n");
                if !text.is_empty() {
                    if !system.is_empty() {
                        system.push_str("\n\n");
                    }
                    system.push_str(&text);
                }
            }
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

/// A conversation as a Messages request (not streamed), for a provider
/// that speaks the API on an agent's behalf.
pub(crate) fn anthropic_request(conversation: &Conversation, max_tokens: u64) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    // Consecutive blocks of one role go in one message, as the API wants.
    let mut push = |role: &str, block: Value| match messages.last_mut() {
        Some(last) if last["role"] == role => {
            if let Some(blocks) = last["content"].as_array_mut() {
                blocks.push(block);
            }
        }
        _ => messages.push(json!({ "role": role, "content": [block] })),
    };
    for turn in &conversation.turns {
        match turn {
            Turn::User(text) => push("user", json!({ "type": "text", "text": text })),
            Turn::Assistant { text, calls } => {
                if !text.is_empty() {
                    push("assistant", json!({ "type": "text", "text": text }));
                }
                for call in calls {
                    let input = if call.input.is_object() {
                        call.input.clone()
                    } else {
                        json!({})
                    };
                    push(
                        "assistant",
                        json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }),
                    );
                }
            }
            Turn::ToolResult {
                call_id,
                text,
                error,
            } => push(
                "user",
                json!({ "type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error }),
            ),
        }
    }
    let mut body = json!({
        "model": conversation.model,
        "max_tokens": conversation.max_tokens.unwrap_or(max_tokens),
        "messages": messages,
    });
    if !conversation.system.is_empty() {
        body["system"] = Value::String(conversation.system.clone());
    }
    if !conversation.tools.is_empty() {
        body["tools"] = conversation
            .tools
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.schema }))
            .collect();
    }
    body
}

/// Reads a Messages response into a reply.
pub(crate) fn read_anthropic_reply(response: &Value) -> Result<Reply, DialectError> {
    if response["type"] == "error" {
        let message = response["error"]["message"]
            .as_str()
            .map_or(response["error"].to_string(), String::from);
        return Err(bad(format!("the model answered an error: {message}")));
    }
    let content = response["content"]
        .as_array()
        .ok_or_else(|| bad("no `content` in the response"))?;
    let calls: Vec<ToolCall> = content
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| ToolCall {
            id: b["id"].as_str().unwrap_or_default().into(),
            name: b["name"].as_str().unwrap_or_default().into(),
            input: b["input"].clone(),
        })
        .collect();
    let stop = match response["stop_reason"].as_str() {
        Some("max_tokens") => Stop::MaxTokens,
        _ if !calls.is_empty() => Stop::ToolUse,
        _ => Stop::EndTurn,
    };
    Ok(Reply {
        text: text_of(&response["content"], "\n"),
        calls,
        input_tokens: response["usage"]["input_tokens"].as_u64().unwrap_or(0),
        output_tokens: response["usage"]["output_tokens"].as_u64().unwrap_or(0),
        stop,
    })
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
        // A system message among the turns (Claude Code's MCP server
        // instructions) joins the system prompt.
        let c = read_anthropic(&json!({"model": "m", "system": "Be brief.", "messages": [
            {"role": "system", "content": "# MCP Server Instructions"},
            {"role": "user", "content": "Go."}
        ]}))
        .unwrap();
        assert_eq!(c.system, "Be brief.\n\n# MCP Server Instructions");
        assert_eq!(c.turns, [Turn::User("Go.".into())]);
    }

    #[test]
    fn a_conversation_goes_out_as_a_request_and_a_reply_reads_back() {
        let c = read_anthropic(&request()).unwrap();
        let body = anthropic_request(&c, 1024);
        // What goes out reads back as the same conversation.
        let mut again = read_anthropic(&body).unwrap();
        again.stream = c.stream;
        assert_eq!(again, c);
        let reply = Reply {
            text: "Here.".into(),
            calls: vec![ToolCall {
                id: "toolu_9".into(),
                name: "read_file".into(),
                input: json!({"path": "a"}),
            }],
            input_tokens: 10,
            output_tokens: 3,
            stop: Stop::ToolUse,
        };
        assert_eq!(
            read_anthropic_reply(&anthropic_reply("m1", "local", &reply)).unwrap(),
            reply
        );
        let err = read_anthropic_reply(
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("busy"), "{err}");
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
