//! The OpenAI APIs as the bridge serves and speaks them: the Responses API
//! (`POST /v1/responses`) and Chat Completions (`POST /v1/chat/completions`),
//! each a request read into a [`Conversation`] and a [`Reply`] written back
//! whole or as the events of a stream; and the other way round, a
//! conversation written as a request to such an API and its answer read
//! into a reply.
//!
//! What Codex CLI 0.171 sends and expects (seen on the wire):
//!
//! - Its system prompt comes as `developer` messages at the head of
//!   `input` (no `instructions`), each content a list of `input_text`
//!   parts; they join the system prompt here.
//! - An MCP server's tools come as one namespace tool,
//!   `{"type": "namespace", "name": "mcp__agent_runtime", "description":
//!   …, "tools": [{"type": "function", "name": "read_file", "description":
//!   …, "strict": false, "parameters": {…}}]}` (the server name's `-` made
//!   `_`); its own sub-agent tools come likewise (`multi_agent_v1`). A
//!   namespace's function is read as the tool `<namespace>__<function>`
//!   (`mcp__agent_runtime__read_file`).
//! - A call of it must come back as `{"type": "function_call", "call_id":
//!   …, "name": "read_file", "namespace": "mcp__agent_runtime",
//!   "arguments": "<JSON>"}`: a joined name, or the bare name without its
//!   namespace, is an "unsupported call". So a call whose name holds `__`
//!   is written back split at its last `__` into namespace and name (a
//!   plain function named with `__` would not round-trip; Codex has none).
//! - In the next request the call comes back as that item (with `id` and
//!   `status`) and its result as `{"type": "function_call_output",
//!   "call_id": …, "output": [{"type": "input_text", "text": "Wall time:
//!   …\nOutput:"}, {"type": "input_text", "text": "<the tool's text>"}]}`
//!   (a plain string for its own tools' results and for calls it refused).
//!   All of a response's calls come back first, then all their outputs.
//! - Of the stream it needs each item's `response.output_item.done` (the
//!   items are taken from there, not from the deltas) and a final
//!   `response.completed`; without the latter it retries the request. A
//!   `response.incomplete` ends the turn with an error naming its reason.
//!
//! Left out when read: reasoning items, images, and tools that are not
//! functions (`web_search`, `custom`, `local_shell`, …) with their calls.
//! The one impure thing here is the clock, for the `created` times.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use crate::protocol::{Conversation, DialectError, Reply, Stop, Tool, ToolCall, Turn};

const RESPONSES: &str = "OpenAI Responses";
const CHAT: &str = "OpenAI Chat Completions";

fn bad(dialect: &'static str, what: impl Into<String>) -> DialectError {
    DialectError {
        dialect,
        what: what.into(),
    }
}

/// Seconds since the epoch, for the `created` fields.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The text of a string, or of a list's parts of the given types, joined
/// by newlines.
fn text_of(value: &Value, kinds: &[&str]) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"].as_str().is_some_and(|t| kinds.contains(&t)))
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A call's arguments as sent: a JSON string (empty for none). What is not
/// JSON is kept as the string it was, so it is written back unchanged.
fn arguments_in(value: &Value) -> Value {
    match value {
        Value::String(text) if text.trim().is_empty() => json!({}),
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
        Value::Null => json!({}),
        other => other.clone(),
    }
}

/// A call's arguments as a JSON string.
fn arguments_out(input: &Value) -> String {
    match input {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A tool's name from a function of a namespace (or of none).
fn joined(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(namespace) if !namespace.is_empty() => format!("{namespace}__{name}"),
        _ => name.to_string(),
    }
}

/// A tool's name split back into namespace and function, at its last `__`.
fn split(name: &str) -> (Option<&str>, &str) {
    match name.rsplit_once("__") {
        Some((namespace, function)) if !namespace.is_empty() && !function.is_empty() => {
            (Some(namespace), function)
        }
        _ => (None, name),
    }
}

/// An input's JSON Schema, an empty object's when there is none.
fn schema(parameters: &Value) -> Value {
    if parameters.is_null() {
        json!({ "type": "object", "properties": {} })
    } else {
        parameters.clone()
    }
}

/// Adds what the model said to the turns: to the assistant turn before it
/// when that has no calls yet, else as a turn of its own.
fn push_text(turns: &mut Vec<Turn>, said: String) {
    if let Some(Turn::Assistant { text, calls }) = turns.last_mut()
        && calls.is_empty()
    {
        if !text.is_empty() && !said.is_empty() {
            text.push('\n');
        }
        text.push_str(&said);
        return;
    }
    turns.push(Turn::Assistant {
        text: said,
        calls: Vec::new(),
    });
}

/// Adds a call to the assistant turn before it, or as a turn of its own.
fn push_call(turns: &mut Vec<Turn>, call: ToolCall) {
    if let Some(Turn::Assistant { calls, .. }) = turns.last_mut() {
        calls.push(call);
        return;
    }
    turns.push(Turn::Assistant {
        text: String::new(),
        calls: vec![call],
    });
}

fn tokens(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

// ---------------------------------------------------------------- Responses

const MESSAGE_PARTS: &[&str] = &["input_text", "output_text"];

/// Reads a Responses request body.
pub(crate) fn read_responses(body: &Value) -> Result<Conversation, DialectError> {
    let model = body["model"]
        .as_str()
        .ok_or_else(|| bad(RESPONSES, "no `model`"))?
        .to_string();
    let mut system: Vec<String> = body["instructions"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(String::from)
        .into_iter()
        .collect();
    let mut turns = Vec::new();
    match &body["input"] {
        Value::String(text) => turns.push(Turn::User(text.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                read_item(i, item, &mut system, &mut turns)?;
            }
        }
        _ => return Err(bad(RESPONSES, "no `input` string or list")),
    }
    Ok(Conversation {
        model,
        system: system.join("\n\n"),
        turns,
        tools: responses_tools(&body["tools"]),
        stream: body["stream"].as_bool().unwrap_or(false),
        max_tokens: body["max_output_tokens"].as_u64(),
    })
}

/// Reads one item of a Responses `input` into the system prompt or turns.
fn read_item(
    i: usize,
    item: &Value,
    system: &mut Vec<String>,
    turns: &mut Vec<Turn>,
) -> Result<(), DialectError> {
    // A message may come without its `type`, as `{role, content}`.
    let kind = item["type"]
        .as_str()
        .or_else(|| item.get("role").map(|_| "message"));
    match kind {
        Some("message") => {
            let text = text_of(&item["content"], MESSAGE_PARTS);
            match item["role"].as_str().unwrap_or_default() {
                "system" | "developer" => {
                    if !text.is_empty() {
                        system.push(text);
                    }
                }
                "user" => turns.push(Turn::User(text)),
                "assistant" => push_text(turns, text),
                role => {
                    return Err(bad(
                        RESPONSES,
                        format!("input item {i} is a message with role {role:?}"),
                    ));
                }
            }
        }
        Some("function_call") => push_call(
            turns,
            ToolCall {
                id: item["call_id"].as_str().unwrap_or_default().into(),
                name: joined(
                    item["namespace"].as_str(),
                    item["name"].as_str().unwrap_or_default(),
                ),
                input: arguments_in(&item["arguments"]),
            },
        ),
        Some("function_call_output") => turns.push(Turn::ToolResult {
            call_id: item["call_id"].as_str().unwrap_or_default().into(),
            text: text_of(&item["output"], MESSAGE_PARTS),
            error: false,
        }),
        // Reasoning, and the calls of tools that are not functions.
        _ => {}
    }
    Ok(())
}

/// The function tools of a Responses request, a namespace's flattened.
fn responses_tools(tools: &Value) -> Vec<Tool> {
    let function = |namespace: Option<&str>, t: &Value| {
        Some(Tool {
            name: joined(namespace, t["name"].as_str()?),
            description: t["description"].as_str().unwrap_or_default().into(),
            schema: schema(&t["parameters"]),
        })
    };
    let mut out = Vec::new();
    for tool in tools.as_array().into_iter().flatten() {
        match tool["type"].as_str() {
            Some("function") => out.extend(function(None, tool)),
            Some("namespace") => {
                let namespace = tool["name"].as_str();
                out.extend(
                    tool["tools"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|t| t["type"] == "function")
                        .filter_map(|t| function(namespace, t)),
                );
            }
            _ => {}
        }
    }
    out
}

/// The id of a response without its `resp_`, to name its items by.
fn stem(id: &str) -> &str {
    id.strip_prefix("resp_").unwrap_or(id)
}

fn text_part(text: &str) -> Value {
    json!({ "type": "output_text", "text": text, "annotations": [] })
}

fn message_item(id: &str, status: &str, content: Vec<Value>) -> Value {
    json!({ "type": "message", "id": id, "status": status, "role": "assistant", "content": content })
}

/// A call as a `function_call` item; a namespaced tool's with its namespace.
fn call_item(id: &str, call: &ToolCall, arguments: &str, status: &str) -> Value {
    let (namespace, name) = split(&call.name);
    let mut item = json!({
        "type": "function_call", "id": id, "call_id": call.id, "name": name,
        "arguments": arguments, "status": status,
    });
    if let Some(namespace) = namespace {
        item["namespace"] = namespace.into();
    }
    item
}

/// The output items of a reply: a message when it has text, then a
/// `function_call` per call.
fn responses_output(reply: &Reply, id: &str) -> Vec<Value> {
    let mut out = Vec::new();
    if !reply.text.is_empty() {
        out.push(message_item(
            &format!("msg_{}", stem(id)),
            "completed",
            vec![text_part(&reply.text)],
        ));
    }
    for (i, call) in reply.calls.iter().enumerate() {
        out.push(call_item(
            &format!("fc_{}_{i}", stem(id)),
            call,
            &arguments_out(&call.input),
            "completed",
        ));
    }
    out
}

/// A response object; `done` for its final state, with output and usage.
fn response_object(reply: &Reply, model: &str, id: &str, created: u64, done: bool) -> Value {
    let incomplete = reply.stop == Stop::MaxTokens;
    let (status, details, output, usage) = if done {
        (
            if incomplete {
                "incomplete"
            } else {
                "completed"
            },
            if incomplete {
                json!({ "reason": "max_output_tokens" })
            } else {
                Value::Null
            },
            responses_output(reply, id),
            json!({
                "input_tokens": reply.input_tokens,
                "input_tokens_details": { "cached_tokens": 0 },
                "output_tokens": reply.output_tokens,
                "output_tokens_details": { "reasoning_tokens": 0 },
                "total_tokens": reply.input_tokens + reply.output_tokens,
            }),
        )
    } else {
        ("in_progress", Value::Null, Vec::new(), Value::Null)
    };
    json!({
        "id": id, "object": "response", "created_at": created, "status": status,
        "error": null, "incomplete_details": details, "instructions": null,
        "model": model, "output": output, "parallel_tool_calls": true,
        "tool_choice": "auto", "tools": [], "usage": usage,
    })
}

/// A reply as one Responses response object (`id` the response's id).
pub(crate) fn responses_reply(reply: &Reply, model: &str, id: &str) -> Value {
    response_object(reply, model, id, now(), true)
}

/// The events of a Responses stream, in order, each with its `type` and
/// `sequence_number`.
struct Events(Vec<(String, Value)>);

impl Events {
    fn push(&mut self, name: &str, fields: Value) {
        let mut data = Map::new();
        data.insert("type".into(), name.into());
        data.insert("sequence_number".into(), self.0.len().into());
        if let Value::Object(fields) = fields {
            data.extend(fields);
        }
        self.0.push((name.to_string(), Value::Object(data)));
    }
}

/// A reply as the events of a Responses stream, each `(event name, data)`:
/// `response.created`, `response.in_progress`; per output item its
/// `output_item.added`, its text's or arguments' deltas and done, and
/// `output_item.done`; then `response.completed` with the whole response
/// (`response.incomplete` when the reply ran into its limit).
pub(crate) fn responses_events(reply: &Reply, model: &str, id: &str) -> Vec<(String, Value)> {
    let created = now();
    let mut events = Events(Vec::new());
    let start = response_object(reply, model, id, created, false);
    events.push("response.created", json!({ "response": start }));
    events.push("response.in_progress", json!({ "response": start }));
    for (index, item) in responses_output(reply, id).into_iter().enumerate() {
        let item_id = item["id"].clone();
        let at = json!({ "item_id": item_id, "output_index": index });
        let with = |fields: Value| {
            let mut data = at.clone();
            if let (Value::Object(data), Value::Object(fields)) = (&mut data, fields) {
                data.extend(fields);
            }
            data
        };
        if item["type"] == "message" {
            let text = item["content"][0]["text"].clone();
            let empty = message_item(
                item["id"].as_str().unwrap_or_default(),
                "in_progress",
                vec![],
            );
            events.push(
                "response.output_item.added",
                json!({ "output_index": index, "item": empty }),
            );
            events.push(
                "response.content_part.added",
                with(json!({ "content_index": 0, "part": text_part("") })),
            );
            events.push(
                "response.output_text.delta",
                with(json!({ "content_index": 0, "delta": text, "logprobs": [] })),
            );
            events.push(
                "response.output_text.done",
                with(json!({ "content_index": 0, "text": text, "logprobs": [] })),
            );
            events.push(
                "response.content_part.done",
                with(json!({ "content_index": 0, "part": item["content"][0] })),
            );
        } else {
            let mut empty = item.clone();
            empty["arguments"] = "".into();
            empty["status"] = "in_progress".into();
            events.push(
                "response.output_item.added",
                json!({ "output_index": index, "item": empty }),
            );
            events.push(
                "response.function_call_arguments.delta",
                with(json!({ "delta": item["arguments"] })),
            );
            events.push(
                "response.function_call_arguments.done",
                with(json!({ "name": item["name"], "arguments": item["arguments"] })),
            );
        }
        events.push(
            "response.output_item.done",
            json!({ "output_index": index, "item": item }),
        );
    }
    let end = if reply.stop == Stop::MaxTokens {
        "response.incomplete"
    } else {
        "response.completed"
    };
    let whole = response_object(reply, model, id, created, true);
    events.push(end, json!({ "response": whole }));
    events.0
}

/// A conversation as a Responses request body, not streamed and not
/// stored; its tools as plain functions, by their full names. With
/// [`read_responses_reply`], what tests check the served side against (no
/// provider speaks Responses yet).
#[cfg(test)]
pub(crate) fn responses_request(conversation: &Conversation) -> Value {
    let mut input = Vec::new();
    for turn in &conversation.turns {
        match turn {
            Turn::User(text) => input.push(json!({
                "type": "message", "role": "user",
                "content": [{ "type": "input_text", "text": text }],
            })),
            Turn::Assistant { text, calls } => {
                if !text.is_empty() {
                    input.push(json!({
                        "type": "message", "role": "assistant",
                        "content": [{ "type": "output_text", "text": text }],
                    }));
                }
                for call in calls {
                    input.push(json!({
                        "type": "function_call", "call_id": call.id, "name": call.name,
                        "arguments": arguments_out(&call.input),
                    }));
                }
            }
            Turn::ToolResult { call_id, text, .. } => input.push(json!({
                "type": "function_call_output", "call_id": call_id, "output": text,
            })),
        }
    }
    let mut body = json!({
        "model": conversation.model,
        "input": input,
        "stream": false,
        "store": false,
    });
    if !conversation.system.is_empty() {
        body["instructions"] = conversation.system.clone().into();
    }
    if !conversation.tools.is_empty() {
        body["tools"] = conversation
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function", "name": t.name, "description": t.description,
                    "parameters": t.schema, "strict": false,
                })
            })
            .collect();
    }
    if let Some(max) = conversation.max_tokens {
        body["max_output_tokens"] = max.into();
    }
    body
}

/// Reads a Responses response object into a reply.
#[cfg(test)]
pub(crate) fn read_responses_reply(response: &Value) -> Result<Reply, DialectError> {
    if let Some(error) = response.get("error").filter(|e| !e.is_null()) {
        let message = error["message"]
            .as_str()
            .map_or(error.to_string(), String::from);
        return Err(bad(RESPONSES, format!("the response failed: {message}")));
    }
    let output = response["output"]
        .as_array()
        .ok_or_else(|| bad(RESPONSES, "no `output` list in the response"))?;
    let mut text: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    for item in output {
        match item["type"].as_str() {
            Some("message") => {
                let said: String = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["type"] == "output_text")
                    .filter_map(|p| p["text"].as_str())
                    .collect();
                if !said.is_empty() {
                    text.push(said);
                }
            }
            Some("function_call") => calls.push(ToolCall {
                id: item["call_id"].as_str().unwrap_or_default().into(),
                name: joined(
                    item["namespace"].as_str(),
                    item["name"].as_str().unwrap_or_default(),
                ),
                input: arguments_in(&item["arguments"]),
            }),
            _ => {}
        }
    }
    let stop = if response["status"] == "incomplete" {
        Stop::MaxTokens
    } else if calls.is_empty() {
        Stop::EndTurn
    } else {
        Stop::ToolUse
    };
    Ok(Reply {
        text: text.join("\n"),
        calls,
        input_tokens: tokens(&response["usage"]["input_tokens"]),
        output_tokens: tokens(&response["usage"]["output_tokens"]),
        stop,
    })
}

// --------------------------------------------------------- Chat Completions

const CHAT_PARTS: &[&str] = &["text"];

/// The calls of a Chat Completions assistant message.
fn chat_calls(message: &Value) -> Vec<ToolCall> {
    message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| ToolCall {
            id: c["id"].as_str().unwrap_or_default().into(),
            name: c["function"]["name"].as_str().unwrap_or_default().into(),
            input: arguments_in(&c["function"]["arguments"]),
        })
        .collect()
}

/// Reads a Chat Completions request body.
pub(crate) fn read_chat(body: &Value) -> Result<Conversation, DialectError> {
    let model = body["model"]
        .as_str()
        .ok_or_else(|| bad(CHAT, "no `model`"))?
        .to_string();
    let messages = body["messages"]
        .as_array()
        .ok_or_else(|| bad(CHAT, "no `messages` list"))?;
    let mut system = Vec::new();
    let mut turns = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let text = text_of(&message["content"], CHAT_PARTS);
        match message["role"].as_str().unwrap_or_default() {
            "system" | "developer" => {
                if !text.is_empty() {
                    system.push(text);
                }
            }
            "user" => turns.push(Turn::User(text)),
            "assistant" => turns.push(Turn::Assistant {
                text,
                calls: chat_calls(message),
            }),
            "tool" => turns.push(Turn::ToolResult {
                call_id: message["tool_call_id"].as_str().unwrap_or_default().into(),
                text,
                error: false,
            }),
            role => return Err(bad(CHAT, format!("message {i} has role {role:?}"))),
        }
    }
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "function")
        .filter_map(|t| {
            let function = &t["function"];
            Some(Tool {
                name: function["name"].as_str()?.to_string(),
                description: function["description"].as_str().unwrap_or_default().into(),
                schema: schema(&function["parameters"]),
            })
        })
        .collect();
    Ok(Conversation {
        model,
        system: system.join("\n\n"),
        turns,
        tools,
        stream: body["stream"].as_bool().unwrap_or(false),
        max_tokens: body["max_completion_tokens"]
            .as_u64()
            .or_else(|| body["max_tokens"].as_u64()),
    })
}

fn finish_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "stop",
        Stop::ToolUse => "tool_calls",
        Stop::MaxTokens => "length",
    }
}

fn chat_tool_call(call: &ToolCall) -> Value {
    json!({
        "id": call.id, "type": "function",
        "function": { "name": call.name, "arguments": arguments_out(&call.input) },
    })
}

fn chat_usage(reply: &Reply) -> Value {
    json!({
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    })
}

/// A reply as one `chat.completion` (`id` the completion's id).
pub(crate) fn chat_reply(reply: &Reply, model: &str, id: &str) -> Value {
    let mut message = json!({ "role": "assistant", "content": reply.text, "refusal": null });
    if !reply.calls.is_empty() {
        if reply.text.is_empty() {
            message["content"] = Value::Null;
        }
        message["tool_calls"] = reply.calls.iter().map(chat_tool_call).collect();
    }
    json!({
        "id": id, "object": "chat.completion", "created": now(), "model": model,
        "choices": [{
            "index": 0, "message": message, "logprobs": null,
            "finish_reason": finish_reason(reply.stop),
        }],
        "usage": chat_usage(reply),
    })
}

/// A reply as the `chat.completion.chunk`s of a stream: the role, the
/// text, each call's name then its arguments, the finish reason, and a
/// last chunk with no choices and the usage. The caller writes each as
/// `data: {json}` and ends with `data: [DONE]`.
pub(crate) fn chat_chunks(reply: &Reply, model: &str, id: &str) -> Vec<Value> {
    let created = now();
    let chunk = |choices: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": created,
            "model": model, "choices": choices,
        })
    };
    let delta = |delta: Value, finish: Value| {
        chunk(json!([{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }]))
    };
    let mut chunks = vec![delta(
        json!({ "role": "assistant", "content": "", "refusal": null }),
        Value::Null,
    )];
    if !reply.text.is_empty() {
        chunks.push(delta(json!({ "content": reply.text }), Value::Null));
    }
    for (index, call) in reply.calls.iter().enumerate() {
        chunks.push(delta(
            json!({ "tool_calls": [{
                "index": index, "id": call.id, "type": "function",
                "function": { "name": call.name, "arguments": "" },
            }] }),
            Value::Null,
        ));
        chunks.push(delta(
            json!({ "tool_calls": [{
                "index": index, "function": { "arguments": arguments_out(&call.input) },
            }] }),
            Value::Null,
        ));
    }
    chunks.push(delta(json!({}), finish_reason(reply.stop).into()));
    let mut usage = chunk(json!([]));
    usage["usage"] = chat_usage(reply);
    chunks.push(usage);
    chunks
}

/// A conversation as a Chat Completions request body, not streamed.
pub(crate) fn chat_request(conversation: &Conversation) -> Value {
    let mut messages = Vec::new();
    if !conversation.system.is_empty() {
        messages.push(json!({ "role": "system", "content": conversation.system }));
    }
    for turn in &conversation.turns {
        messages.push(match turn {
            Turn::User(text) => json!({ "role": "user", "content": text }),
            Turn::Assistant { text, calls } => {
                let mut message = json!({ "role": "assistant", "content": text });
                if !calls.is_empty() {
                    if text.is_empty() {
                        message["content"] = Value::Null;
                    }
                    message["tool_calls"] = calls.iter().map(chat_tool_call).collect();
                }
                message
            }
            Turn::ToolResult { call_id, text, .. } => {
                json!({ "role": "tool", "tool_call_id": call_id, "content": text })
            }
        });
    }
    let mut body = json!({
        "model": conversation.model,
        "messages": messages,
        "stream": false,
    });
    if !conversation.tools.is_empty() {
        body["tools"] = conversation
            .tools
            .iter()
            .map(|t| {
                json!({ "type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.schema,
                } })
            })
            .collect();
    }
    if let Some(max) = conversation.max_tokens {
        body["max_tokens"] = max.into();
    }
    body
}

/// Reads a `chat.completion` into a reply. A finish reason of `length`
/// is the output limit; otherwise calls make it a tool-use stop, whatever
/// the reason says (some servers say `stop` for calls).
pub(crate) fn read_chat_reply(response: &Value) -> Result<Reply, DialectError> {
    if let Some(error) = response.get("error").filter(|e| !e.is_null()) {
        let message = error["message"]
            .as_str()
            .map_or(error.to_string(), String::from);
        return Err(bad(CHAT, format!("the completion failed: {message}")));
    }
    let choice = response["choices"]
        .as_array()
        .and_then(|choices| choices.first())
        .ok_or_else(|| bad(CHAT, "no `choices` in the completion"))?;
    let message = &choice["message"];
    let calls = chat_calls(message);
    let stop = if choice["finish_reason"] == "length" {
        Stop::MaxTokens
    } else if calls.is_empty() {
        Stop::EndTurn
    } else {
        Stop::ToolUse
    };
    Ok(Reply {
        text: text_of(&message["content"], CHAT_PARTS),
        calls,
        input_tokens: tokens(&response["usage"]["prompt_tokens"]),
        output_tokens: tokens(&response["usage"]["completion_tokens"]),
        stop,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request as Codex CLI sends it, trimmed: its prompt as developer
    /// messages, an MCP server's tools as a namespace, a call of one of
    /// them and its output in the history.
    fn codex_request() -> Value {
        json!({
            "model": "local",
            "stream": true,
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"summary": "auto"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"type": "message", "id": "msg_a", "role": "developer",
                 "content": [{"type": "input_text", "text": "You are a coding agent.\nBe precise."}]},
                {"type": "message", "id": "msg_b", "role": "developer",
                 "content": [{"type": "input_text", "text": "<skills_instructions/>"}]},
                {"type": "message", "id": "msg_c", "role": "user",
                 "content": [{"type": "input_text", "text": "<environment_context/>"}]},
                {"type": "message", "id": "msg_d", "role": "user",
                 "content": [{"type": "input_text", "text": "Fix src/lib.rs."}]},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
                {"type": "message", "id": "msg_e", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}]},
                {"type": "function_call", "status": "completed", "id": "fc_1",
                 "name": "read_file", "namespace": "mcp__agent_runtime",
                 "arguments": "{\"path\": \"src/lib.rs\"}", "call_id": "call_abc"},
                {"type": "function_call_output", "id": "fco_1", "call_id": "call_abc",
                 "output": [{"type": "input_text", "text": "Wall time: 0.0045 seconds\nOutput:"},
                            {"type": "input_text", "text": "fn f() {}"}]},
                {"type": "function_call", "id": "fc_2", "name": "get_goal",
                 "arguments": "", "call_id": "call_def"},
                {"type": "function_call_output", "call_id": "call_def", "output": "no goal"},
                {"role": "user", "content": "Go on."}
            ],
            "tools": [
                {"type": "function", "name": "get_goal", "description": "Get the goal.",
                 "strict": false, "parameters": {"type": "object", "properties": {}}},
                {"type": "namespace", "name": "mcp__agent_runtime",
                 "description": "Tools in the mcp__agent_runtime namespace.",
                 "tools": [{"type": "function", "name": "read_file", "description": "Read a file.",
                            "strict": false,
                            "parameters": {"type": "object",
                                           "properties": {"path": {"type": "string"}},
                                           "required": ["path"]}}]},
                {"type": "web_search", "external_web_access": false},
                {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}
            ]
        })
    }

    fn two_calls(stop: Stop) -> Reply {
        Reply {
            text: "Editing.".into(),
            calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "mcp__agent_runtime__replace_text".into(),
                    input: json!({"path": "src/lib.rs", "expected": "1..n", "replacement": "1..=n"}),
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "get_goal".into(),
                    input: json!({}),
                },
            ],
            input_tokens: 120,
            output_tokens: 30,
            stop,
        }
    }

    #[test]
    fn a_codex_request_reads_into_turns_tools_and_results() {
        let c = read_responses(&codex_request()).unwrap();
        assert_eq!(c.model, "local");
        assert_eq!(
            c.system,
            "You are a coding agent.\nBe precise.\n\n<skills_instructions/>"
        );
        assert!(c.stream);
        assert_eq!(c.max_tokens, None);
        let names: Vec<&str> = c.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["get_goal", "mcp__agent_runtime__read_file"]);
        assert_eq!(c.tools[1].description, "Read a file.");
        assert_eq!(c.tools[1].schema["required"][0], "path");
        assert_eq!(c.turns[0], Turn::User("<environment_context/>".into()));
        assert_eq!(c.turns[1], Turn::User("Fix src/lib.rs.".into()));
        assert_eq!(
            c.turns[2],
            Turn::Assistant {
                text: "Reading it.".into(),
                calls: vec![ToolCall {
                    id: "call_abc".into(),
                    name: "mcp__agent_runtime__read_file".into(),
                    input: json!({"path": "src/lib.rs"}),
                }],
            }
        );
        assert_eq!(
            c.turns[3],
            Turn::ToolResult {
                call_id: "call_abc".into(),
                text: "Wall time: 0.0045 seconds\nOutput:\nfn f() {}".into(),
                error: false,
            }
        );
        let Turn::Assistant { text, calls } = &c.turns[4] else {
            panic!("{:?}", c.turns[4]);
        };
        assert_eq!(text, "");
        assert_eq!(calls[0].input, json!({}));
        assert_eq!(c.turns[6], Turn::User("Go on.".into()));
        assert_eq!(c.turns.len(), 7);

        let short = read_responses(&json!({
            "model": "m", "instructions": "Be brief.", "input": "Hi.", "max_output_tokens": 64,
            "tools": [{"type": "function", "name": "f"}]
        }))
        .unwrap();
        assert_eq!(short.system, "Be brief.");
        assert_eq!(short.turns, [Turn::User("Hi.".into())]);
        assert_eq!(short.max_tokens, Some(64));
        assert_eq!(short.tools[0].schema["type"], "object");
        assert!(!short.stream);

        let err = read_responses(&json!({"input": "x"})).unwrap_err();
        assert!(err.to_string().contains("no `model`"), "{err}");
        let err = read_responses(&json!({"model": "m"})).unwrap_err();
        assert!(err.to_string().contains("no `input`"), "{err}");
        let err =
            read_responses(&json!({"model": "m", "input": [{"role": "tool", "content": "x"}]}))
                .unwrap_err();
        assert!(err.to_string().contains("input item 0"), "{err}");
    }

    #[test]
    fn a_reply_is_written_whole_with_namespaces_and_reads_back() {
        let reply = two_calls(Stop::ToolUse);
        let whole = responses_reply(&reply, "local", "resp_1");
        assert_eq!(whole["object"], "response");
        assert_eq!(whole["status"], "completed");
        assert_eq!(whole["model"], "local");
        let output = whole["output"].as_array().unwrap();
        assert_eq!(output.len(), 3);
        assert_eq!(output[0]["type"], "message");
        assert_eq!(output[0]["content"][0]["type"], "output_text");
        assert_eq!(output[0]["content"][0]["text"], "Editing.");
        assert_eq!(output[1]["type"], "function_call");
        assert_eq!(output[1]["call_id"], "call_1");
        assert_eq!(output[1]["name"], "replace_text");
        assert_eq!(output[1]["namespace"], "mcp__agent_runtime");
        let arguments: Value =
            serde_json::from_str(output[1]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(arguments["replacement"], "1..=n");
        assert_eq!(output[2]["name"], "get_goal");
        assert!(output[2].get("namespace").is_none());
        assert_eq!(whole["usage"]["total_tokens"], 150);
        assert_eq!(read_responses_reply(&whole).unwrap(), reply);

        let cut = Reply {
            calls: Vec::new(),
            ..two_calls(Stop::MaxTokens)
        };
        let whole = responses_reply(&cut, "local", "resp_2");
        assert_eq!(whole["status"], "incomplete");
        assert_eq!(whole["incomplete_details"]["reason"], "max_output_tokens");
        assert_eq!(read_responses_reply(&whole).unwrap(), cut);
        let silent = Reply {
            text: String::new(),
            ..two_calls(Stop::ToolUse)
        };
        let whole = responses_reply(&silent, "local", "resp_3");
        assert_eq!(whole["output"].as_array().unwrap().len(), 2);

        let err = read_responses_reply(&json!({"error": {"message": "overloaded"}})).unwrap_err();
        assert!(err.to_string().contains("overloaded"), "{err}");
        let err = read_responses_reply(&json!({"status": "completed"})).unwrap_err();
        assert!(err.to_string().contains("no `output`"), "{err}");
    }

    #[test]
    fn a_reply_streams_as_codex_reads_it_and_reassembles() {
        let reply = two_calls(Stop::ToolUse);
        let events = responses_events(&reply, "local", "resp_1");
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        for (i, (name, data)) in events.iter().enumerate() {
            assert_eq!(data["type"], *name);
            assert_eq!(data["sequence_number"], i);
        }
        // What a client rebuilds from the deltas is what the items say.
        let mut output: Vec<Value> = Vec::new();
        for (name, data) in &events {
            match name.as_str() {
                "response.output_item.added" => output.push(data["item"].clone()),
                "response.content_part.added" => {
                    let item = output.last_mut().unwrap();
                    item["content"] = json!([data["part"]]);
                }
                "response.output_text.delta" => {
                    let part = &mut output.last_mut().unwrap()["content"][0];
                    let text = format!(
                        "{}{}",
                        part["text"].as_str().unwrap(),
                        data["delta"].as_str().unwrap()
                    );
                    part["text"] = text.into();
                }
                "response.function_call_arguments.delta" => {
                    let item = output.last_mut().unwrap();
                    let arguments = format!(
                        "{}{}",
                        item["arguments"].as_str().unwrap(),
                        data["delta"].as_str().unwrap()
                    );
                    item["arguments"] = arguments.into();
                }
                "response.output_item.done" => {
                    let item = output.last_mut().unwrap();
                    item["status"] = "completed".into();
                    assert_eq!(*item, data["item"]);
                    assert_eq!(data["output_index"], output.len() - 1);
                }
                _ => {}
            }
        }
        let (_, last) = &events[16];
        assert_eq!(Value::Array(output), last["response"]["output"]);
        assert_eq!(last["response"]["status"], "completed");
        assert_eq!(last["response"]["usage"]["output_tokens"], 30);
        assert_eq!(events[0].1["response"]["status"], "in_progress");
        assert_eq!(events[10].1["name"], "replace_text");
        assert_eq!(read_responses_reply(&last["response"]).unwrap(), reply);

        let cut = Reply {
            calls: Vec::new(),
            ..two_calls(Stop::MaxTokens)
        };
        let events = responses_events(&cut, "local", "resp_2");
        assert_eq!(events.len(), 9);
        let (name, data) = &events[8];
        assert_eq!(name, "response.incomplete");
        assert_eq!(data["response"]["status"], "incomplete");
    }

    #[test]
    fn a_conversation_goes_out_as_a_responses_request_and_back() {
        let c = read_responses(&codex_request()).unwrap();
        let body = responses_request(&c);
        assert_eq!(body["stream"], false);
        assert_eq!(body["store"], false);
        assert_eq!(body["instructions"], c.system.as_str());
        assert_eq!(body["tools"][1]["name"], "mcp__agent_runtime__read_file");
        assert_eq!(body["input"][3]["type"], "function_call");
        assert_eq!(body["input"][3]["arguments"], "{\"path\":\"src/lib.rs\"}");
        assert_eq!(
            body["input"][4]["output"],
            "Wall time: 0.0045 seconds\nOutput:\nfn f() {}"
        );
        let back = read_responses(&body).unwrap();
        assert_eq!(
            back,
            Conversation {
                stream: false,
                ..c.clone()
            }
        );
        let limited = Conversation {
            max_tokens: Some(100),
            ..c
        };
        assert_eq!(responses_request(&limited)["max_output_tokens"], 100);
    }

    fn chat_request_body() -> Value {
        json!({
            "model": "local",
            "stream": true,
            "max_completion_tokens": 512,
            "max_tokens": 1024,
            "messages": [
                {"role": "system", "content": "You are an agent."},
                {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
                {"role": "user", "content": [{"type": "text", "text": "Fix src/lib.rs."},
                                              {"type": "image_url", "image_url": {"url": "x"}}]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "fn f() {}"},
                {"role": "assistant", "content": "Done."},
                {"role": "user", "content": "Thanks."}
            ],
            "tools": [{"type": "function", "function": {"name": "read_file",
                       "description": "Read a file.",
                       "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
        })
    }

    #[test]
    fn a_chat_request_reads_and_goes_back_out() {
        let c = read_chat(&chat_request_body()).unwrap();
        assert_eq!(c.system, "You are an agent.\n\nBe brief.");
        assert!(c.stream);
        assert_eq!(c.max_tokens, Some(512));
        assert_eq!(c.tools[0].name, "read_file");
        assert_eq!(c.tools[0].schema["properties"]["path"]["type"], "string");
        assert_eq!(c.turns[0], Turn::User("Fix src/lib.rs.".into()));
        assert_eq!(
            c.turns[1],
            Turn::Assistant {
                text: String::new(),
                calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "src/lib.rs"}),
                }],
            }
        );
        assert_eq!(
            c.turns[2],
            Turn::ToolResult {
                call_id: "call_1".into(),
                text: "fn f() {}".into(),
                error: false,
            }
        );
        assert_eq!(c.turns.len(), 5);
        let body = chat_request(&c);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(body["max_tokens"], 512);
        assert_eq!(body["stream"], false);
        assert_eq!(
            read_chat(&body).unwrap(),
            Conversation { stream: false, ..c }
        );
        let err = read_chat(&json!({"model": "m"})).unwrap_err();
        assert!(err.to_string().contains("no `messages`"), "{err}");
        let err =
            read_chat(&json!({"model": "m", "messages": [{"role": "function", "content": "x"}]}))
                .unwrap_err();
        assert!(err.to_string().contains("message 0"), "{err}");
    }

    #[test]
    fn a_chat_reply_is_written_whole_and_streamed_and_reads_back() {
        let reply = two_calls(Stop::ToolUse);
        let whole = chat_reply(&reply, "local", "chatcmpl-1");
        assert_eq!(whole["object"], "chat.completion");
        let choice = &whole["choices"][0];
        assert_eq!(choice["finish_reason"], "tool_calls");
        assert_eq!(choice["message"]["content"], "Editing.");
        assert_eq!(
            choice["message"]["tool_calls"][0]["function"]["name"],
            "mcp__agent_runtime__replace_text"
        );
        assert_eq!(whole["usage"]["total_tokens"], 150);
        assert_eq!(read_chat_reply(&whole).unwrap(), reply);

        // What a client rebuilds from the chunks is the whole message.
        let chunks = chat_chunks(&reply, "local", "chatcmpl-1");
        assert_eq!(chunks.len(), 8);
        let mut message = json!({"content": ""});
        let mut finish = Value::Null;
        for chunk in &chunks {
            assert_eq!(chunk["object"], "chat.completion.chunk");
            assert_eq!(chunk["id"], "chatcmpl-1");
            let Some(choice) = chunk["choices"].get(0) else {
                continue;
            };
            let delta = &choice["delta"];
            if let Some(role) = delta.get("role") {
                message["role"] = role.clone();
            }
            if let Some(text) = delta["content"].as_str() {
                let text = format!("{}{text}", message["content"].as_str().unwrap());
                message["content"] = text.into();
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap() as usize;
                let calls = message["tool_calls"].as_array().map_or(0, Vec::len);
                if index == calls {
                    let mut new = call.clone();
                    new.as_object_mut().unwrap().remove("index");
                    match message["tool_calls"].as_array_mut() {
                        Some(calls) => calls.push(new),
                        None => message["tool_calls"] = json!([new]),
                    }
                } else {
                    let known = &mut message["tool_calls"][index]["function"]["arguments"];
                    let arguments = format!(
                        "{}{}",
                        known.as_str().unwrap(),
                        call["function"]["arguments"].as_str().unwrap()
                    );
                    *known = arguments.into();
                }
            }
            if !choice["finish_reason"].is_null() {
                finish = choice["finish_reason"].clone();
            }
        }
        message["refusal"] = Value::Null;
        assert_eq!(message, whole["choices"][0]["message"]);
        assert_eq!(finish, "tool_calls");
        let last = chunks.last().unwrap();
        assert_eq!(last["choices"], json!([]));
        assert_eq!(last["usage"]["prompt_tokens"], 120);

        let silent = Reply {
            text: String::new(),
            ..reply.clone()
        };
        assert_eq!(
            chat_reply(&silent, "local", "c")["choices"][0]["message"]["content"],
            Value::Null
        );
        assert_eq!(chat_chunks(&silent, "local", "c").len(), 7);
        let cut = Reply {
            calls: Vec::new(),
            ..two_calls(Stop::MaxTokens)
        };
        let whole = chat_reply(&cut, "local", "c");
        assert_eq!(whole["choices"][0]["finish_reason"], "length");
        assert!(whole["choices"][0]["message"].get("tool_calls").is_none());
        assert_eq!(read_chat_reply(&whole).unwrap(), cut);
        let done = Reply {
            calls: Vec::new(),
            ..two_calls(Stop::EndTurn)
        };
        assert_eq!(
            chat_reply(&done, "local", "c")["choices"][0]["finish_reason"],
            "stop"
        );
        // Some servers say `stop` for calls: the calls decide.
        let mut stopped = chat_reply(&reply, "local", "c");
        stopped["choices"][0]["finish_reason"] = "stop".into();
        assert_eq!(read_chat_reply(&stopped).unwrap().stop, Stop::ToolUse);
        let err = read_chat_reply(&json!({"choices": []})).unwrap_err();
        assert!(err.to_string().contains("no `choices`"), "{err}");
    }
}
