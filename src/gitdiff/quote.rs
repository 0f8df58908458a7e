//! How git writes a path in a patch (`quote_c_style` with `core.quotePath`
//! at its default): as it is, or in double quotes with C escapes when it
//! holds a quote, a backslash, a control character or any byte above 0x7f.

use std::fmt::Write as _;

/// `prefix` and `path` as one name of a patch line: `a/src/lib.rs`, or
/// `"b/caf\303\251 \"x\".rs"`.
pub(crate) fn quote_path(prefix: &str, path: &str) -> String {
    let name = format!("{prefix}{path}");
    if !name.bytes().any(needs_quote) {
        return name;
    }
    let mut out = String::with_capacity(name.len() + 8);
    out.push('"');
    for byte in name.bytes() {
        match byte {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if needs_quote(b) => {
                let _ = write!(out, "\\{b:03o}");
            }
            b => out.push(char::from(b)),
        }
    }
    out.push('"');
    out
}

fn needs_quote(byte: u8) -> bool {
    byte < 0x20 || byte == 0x7f || byte == b'"' || byte == b'\\' || byte >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_stay_plain_and_others_are_quoted_as_git_does() {
        assert_eq!(quote_path("a/", "src/lib.rs"), "a/src/lib.rs");
        assert_eq!(quote_path("b/", "with space.rs"), "b/with space.rs");
        assert_eq!(
            quote_path("a/", "caf\u{e9} \"x\"\t\\.rs"),
            "\"a/caf\\303\\251 \\\"x\\\"\\t\\\\.rs\""
        );
        assert_eq!(quote_path("", "\u{1}"), "\"\\001\"");
    }
}
