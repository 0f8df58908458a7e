//! Decision kinds as tools (function calling), both ways.
//!
//! Out: one tool per kind of [`KINDS`], named after the kind, its
//! parameters the kind's fields (the `kind` tag itself is the tool name).
//! In: a tool call becomes the decision text `{"kind": <name>, ...arguments}`
//! so the agent loop parses it with `parse_decision` like any other reply.
//! Arguments that are not a JSON object are passed on as they came, with
//! the kind spliced in, so the parser refuses them with a precise message
//! instead of anything crashing. Several calls in one reply become a JSON
//! array, which the parser refuses as "several decisions".
//!
//! History is converted statelessly: an earlier assistant reply that parses
//! as a decision is replayed as a call to its tool with the id
//! `call_<turn index>`, and the observation after it as that call's result.

use serde_json::{Map, Value, json};

use crate::decision::{KINDS, field_schemas, parse_decision};

/// One tool: its name (a decision kind), description and JSON Schema of
/// its arguments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) parameters: Value,
}

/// One tool per decision kind, in the documented order.
pub(crate) fn decision_tools() -> Vec<ToolSpec> {
    KINDS
        .iter()
        .map(|spec| {
            let (properties, required) = field_schemas(spec);
            ToolSpec {
                name: spec.kind,
                description: spec.description,
                parameters: json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                }),
            }
        })
        .collect()
}

/// The tools in OpenAI's chat completions form.
pub(super) fn openai_tools() -> Value {
    decision_tools()
        .into_iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            })
        })
        .collect()
}

/// The tools in Anthropic's Messages form.
pub(super) fn anthropic_tools() -> Value {
    decision_tools()
        .into_iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.parameters,
            })
        })
        .collect()
}

/// An earlier reply as a tool call: the kind and the arguments object, if
/// the reply parses as a decision.
pub(super) fn as_tool_call(reply: &str) -> Option<(String, Map<String, Value>)> {
    let decision = parse_decision(reply).ok()?;
    let Ok(Value::Object(mut object)) = serde_json::to_value(&decision) else {
        return None;
    };
    object.remove("kind");
    Some((decision.kind().to_string(), object))
}

/// The id of the call replayed for the assistant turn at `index`.
pub(super) fn call_id(index: usize) -> String {
    format!("call_{index}")
}

/// The decision text of one tool call whose arguments are a JSON value.
pub(super) fn call_to_text(name: &str, arguments: &Value) -> String {
    match arguments {
        Value::Object(fields) => {
            let mut object = Map::new();
            object.insert("kind".to_string(), Value::String(name.to_string()));
            for (key, value) in fields {
                if key != "kind" {
                    object.insert(key.clone(), value.clone());
                }
            }
            Value::Object(object).to_string()
        }
        Value::Null => json!({ "kind": name }).to_string(),
        other => splice_kind(name, &other.to_string()),
    }
}

/// The decision text of one tool call whose arguments are JSON text (the
/// OpenAI form). Text that is not a JSON object keeps its bytes, with the
/// kind spliced in after an opening brace, so the parser reports where it
/// breaks.
pub(super) fn call_text_to_text(name: &str, arguments: &str) -> String {
    if arguments.trim().is_empty() {
        return json!({ "kind": name }).to_string();
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => call_to_text(name, &value),
        _ => splice_kind(name, arguments),
    }
}

/// The decision text of several calls in one reply: one text for one
/// call, else a JSON array of them (refused by the parser as several).
pub(super) fn calls_to_text(calls: Vec<String>) -> String {
    if calls.len() == 1 {
        return calls.into_iter().next().unwrap_or_default();
    }
    format!("[{}]", calls.join(","))
}

fn splice_kind(name: &str, raw: &str) -> String {
    let tag = Value::String(name.to_string()).to_string();
    let trimmed = raw.trim_start();
    match trimmed.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => format!("{{\"kind\":{tag}{rest}"),
        Some(rest) => format!("{{\"kind\":{tag},{rest}"),
        None => format!("{{\"kind\":{tag},\"arguments\":{raw}}}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{Decision, DecisionError};

    #[test]
    fn one_tool_per_kind_without_the_tag() {
        let tools = decision_tools();
        assert_eq!(tools.len(), KINDS.len());
        let write = tools.iter().find(|t| t.name == "write_file").unwrap();
        assert_eq!(write.parameters["required"], json!(["path", "content"]));
        assert!(write.parameters["properties"].get("kind").is_none());
        let verify = tools.iter().find(|t| t.name == "verify").unwrap();
        assert_eq!(verify.parameters["properties"], json!({}));
        assert_eq!(openai_tools()[0]["function"]["name"], "read_file");
        assert_eq!(
            anthropic_tools()[4]["input_schema"]["properties"]["args"]["type"],
            "array"
        );
    }

    #[test]
    fn replies_round_trip_through_tool_calls() {
        let (name, args) =
            as_tool_call(r#"{"kind":"replace_text","path":"a","expected":"x","replacement":"y"}"#)
                .unwrap();
        assert_eq!(name, "replace_text");
        assert!(args.get("kind").is_none());
        let text = call_to_text(&name, &Value::Object(args));
        assert!(matches!(
            parse_decision(&text).unwrap(),
            Decision::ReplaceText { .. }
        ));
        assert_eq!(as_tool_call("{\"kind\":\"verify\"}").unwrap().1, Map::new());
        assert!(as_tool_call("I think we should read the file").is_none());
        assert_eq!(call_text_to_text("verify", ""), r#"{"kind":"verify"}"#);
        assert_eq!(
            call_text_to_text("read_file", r#"{"path":"src/lib.rs"}"#),
            r#"{"kind":"read_file","path":"src/lib.rs"}"#
        );
    }

    #[test]
    fn broken_arguments_become_a_precise_invalid_decision() {
        let text = call_text_to_text("write_file", r#"{"path": "a.rs", "content": "fn main() {"#);
        assert!(
            text.starts_with(r#"{"kind":"write_file","path": "a.rs""#),
            "{text}"
        );
        let err = parse_decision(&text).unwrap_err();
        assert!(matches!(err, DecisionError::Json { .. }), "{err:?}");
        let text = call_text_to_text("read_file", "[1]");
        let err = parse_decision(&text).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `arguments`"),
            "{err}"
        );
        let two = calls_to_text(vec![
            r#"{"kind":"verify"}"#.to_string(),
            r#"{"kind":"verify"}"#.to_string(),
        ]);
        assert!(matches!(
            parse_decision(&two),
            Err(DecisionError::Multiple { count: 2 })
        ));
    }
}
