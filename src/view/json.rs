//! JSON for the page. Every string in it went through the one escaping
//! function first (control and bidi characters as visible `\u{..}`
//! escapes, line breaks and tabs kept), so the page shows what a model
//! wrote, not what it hides; and `<`, `>` and `&` are written as `\u003c`,
//! `\u003e` and `\u0026`, so no document is ever read as markup, whatever
//! a browser guesses about it. The values parse back unchanged otherwise.

use serde::Serialize;
use serde_json::Value;

use crate::escape;

/// `value` as the page's JSON.
pub(super) fn page_json<T: Serialize + ?Sized>(value: &T) -> String {
    let value = match serde_json::to_value(value) {
        Ok(value) => visible(value),
        // A view is plain data: maps with string keys, numbers, strings.
        Err(e) => Value::String(format!("failed to render the view: {e}")),
    };
    let mut out = Vec::new();
    // A Value always serializes; the escapes are ASCII, so the text stays
    // UTF-8 (a failure would be a bug, shown, not a panic).
    let _ = escape::write_json_for_markup(&mut out, &value);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `value` with every string (keys too) passed through the escaping
/// function.
fn visible(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(shown(s)),
        Value::Array(items) => Value::Array(items.into_iter().map(visible).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (shown(k), visible(v)))
                .collect(),
        ),
        other => other,
    }
}

fn shown(s: String) -> String {
    match escape::block(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_written_as_escapes_and_parses_back() {
        let json = page_json(&serde_json::json!({
            "path": "<script>alert(1)</script> & more",
            "list": ["a<b"],
        }));
        assert!(
            !json.contains('<') && !json.contains('>') && !json.contains('&'),
            "{json}"
        );
        assert!(json.contains("\\u003cscript\\u003e"), "{json}");
        let back: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["path"], "<script>alert(1)</script> & more");
        assert_eq!(back["list"][0], "a<b");
    }

    #[test]
    fn hidden_characters_become_visible_escapes_line_breaks_stay() {
        let json = page_json(&serde_json::json!({
            "text": "a\u{1b}[2J\u{202e}b\nc\td",
            "\u{202e}key": 1,
        }));
        let back: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["text"], "a\\u{1b}[2J\\u{202e}b\nc\td");
        assert_eq!(back["\\u{202e}key"], 1);
    }
}
