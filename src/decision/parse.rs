//! Reading a decision out of what a model actually sends.
//!
//! Lenient where the intent is unambiguous, precise where it is not:
//! - the object may be surrounded by prose or a Markdown code fence; the
//!   first balanced top-level `{...}` that is a JSON object with a `kind` is
//!   taken (string contents and escapes are respected while matching);
//! - the whole reply may be a JSON string whose content is such a reply;
//! - trailing commas before `}` or `]` are tolerated, and so are raw line
//!   breaks and tabs inside strings (common slips that change no meaning);
//! - a `null` optional field counts as absent.
//!
//! Refused: an empty reply, no object, malformed JSON (with line:column in
//! the reply), a reply holding two or more decisions, an unknown kind, a
//! missing or unknown field, a field of the wrong type, and a reply over
//! 2 GiB.
//!
//! Parsing takes time linear in the reply's size, whatever its shape (see
//! `scan.rs` for how objects are found in prose).

use serde_json::Value;

use super::scan::scan_objects;
use super::union::{Decision, DecisionError, decision_from_object, json_type};

/// How many times a reply that is a JSON string is unwrapped.
const MAX_STRING_NESTING: usize = 2;

/// Parses one model reply into a decision.
pub(crate) fn parse_decision(text: &str) -> Result<Decision, DecisionError> {
    parse_nested(text, 0)
}

fn parse_nested(text: &str, depth: usize) -> Result<Decision, DecisionError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(DecisionError::Empty);
    }
    // The whole reply is JSON: exactly one value, whatever it is.
    if let Ok(value) = lenient_json(trimmed) {
        return match value {
            Value::Object(object) => decision_from_object(&object),
            Value::String(inner) if depth < MAX_STRING_NESTING => parse_nested(&inner, depth + 1),
            Value::Array(items) if items.iter().filter(|i| has_kind(i)).count() > 1 => {
                Err(DecisionError::Multiple {
                    count: items.iter().filter(|i| has_kind(i)).count(),
                })
            }
            other => Err(DecisionError::NotAnObject {
                found: json_type(&other),
            }),
        };
    }
    let Some(scan) = scan_objects(text) else {
        return Err(DecisionError::TooLarge { bytes: text.len() });
    };
    let with_kind: Vec<&Value> = scan.objects.iter().filter(|v| has_kind(v)).collect();
    // A malformed object that names a kind, apart from the good ones, is
    // a second decision too: taking only the first would drop a step the
    // model believes it asked for.
    let broken = scan.broken_alone();
    let count = with_kind.len() + if with_kind.is_empty() { 0 } else { broken };
    match (with_kind.as_slice(), scan.objects.first(), scan.first_error) {
        ([Value::Object(object)], _, _) if count == 1 => decision_from_object(object),
        ([_, ..], _, _) => Err(DecisionError::Multiple { count }),
        (_, _, Some(error)) => Err(error),
        (_, Some(Value::Object(object)), None) => decision_from_object(object),
        _ => Err(DecisionError::NoObject),
    }
}

fn has_kind(value: &Value) -> bool {
    value.get("kind").is_some()
}

/// Parses JSON, forgiving trailing commas and raw control characters in
/// strings. The error, if any, is the one for the text as sent (commas
/// aside), so its position points into the reply.
pub(super) fn lenient_json(text: &str) -> Result<Value, serde_json::Error> {
    let text = remove_trailing_commas(text);
    serde_json::from_str(&text)
        .or_else(|err| serde_json::from_str(&escape_controls_in_strings(&text)).map_err(|_| err))
}

/// Escapes raw control characters (a line break typed inside `"content"`)
/// that JSON only allows escaped.
fn escape_controls_in_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                '\n' => {
                    out.push_str("\\n");
                    continue;
                }
                '\r' => {
                    out.push_str("\\r");
                    continue;
                }
                '\t' => {
                    out.push_str("\\t");
                    continue;
                }
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

/// Replaces a comma that only precedes `}` or `]` (outside strings) with a
/// space, so byte offsets stay the same for error positions.
fn remove_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut in_string = false;
    let mut escaped = false;
    for (i, &byte) in bytes.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if byte == b'"' {
            in_string = true;
        } else if byte == b',' {
            let next = bytes
                .get(i + 1..)
                .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()));
            if matches!(next, Some(b'}') | Some(b']'))
                && let Some(slot) = out.get_mut(i)
            {
                *slot = b' ';
            }
        }
    }
    // Only an ASCII comma was replaced by an ASCII space.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Byte offset of serde_json's 1-based (line, column) in `text`.
pub(super) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// 1-based line and column (in characters) of a byte offset.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// serde_json appends " at line L column C"; the position is reported
/// separately, relative to the whole reply.
pub(super) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) => message.get(..cut).unwrap_or(message).to_string(),
        None => message.to_string(),
    }
}
