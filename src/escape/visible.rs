//! The one escaping function: hidden characters as visible escapes.

use std::borrow::Cow;
use std::fmt::Write;

/// What a piece of text may keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One line (a table cell, a cause, a progress line): line breaks and
    /// tabs are escaped too.
    Line,
    /// Several lines (a patch, command output): `\n` and `\t` stay.
    Block,
}

/// Whether `c` is never shown raw: C0 controls, DEL, C1 controls, the
/// Arabic letter mark, the left-to-right and right-to-left marks, the line
/// and paragraph separators, the bidi embeddings and overrides
/// (U+202A–U+202E) and isolates (U+2066–U+2069).
pub(crate) fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// `text` with every hidden character (see [`is_hidden`]; with
/// [`Layout::Block`], except `\n` and `\t`) written as `\u{XX}`, its code
/// point in lowercase hex, as Rust writes it: ESC is `\u{1b}`, U+202E is
/// `\u{202e}`. Other text, backslashes included, is unchanged, so escaping
/// escaped text changes nothing. Borrows when nothing needs escaping.
pub(crate) fn escape(text: &str, layout: Layout) -> Cow<'_, str> {
    // Most text is printable ASCII (and, in a block, its line breaks and
    // tabs), which hides nothing: checked a byte at a time before any
    // character is decoded.
    let block = layout == Layout::Block;
    if plain(text.as_bytes(), block) {
        return Cow::Borrowed(text);
    }
    let hidden = |c: char| is_hidden(c) && !(block && matches!(c, '\n' | '\t'));
    let Some(first) = text.find(hidden) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if hidden(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `bytes` are all printable ASCII (and, with `block`, line
/// breaks and tabs). Checked a block of bytes at a time with no early
/// exit inside a block, which the compiler turns into vector instructions:
/// a table of many rows is checked at memory speed.
fn plain(bytes: &[u8], block: bool) -> bool {
    let ok = |b: u8| (0x20..0x7f).contains(&b) || (block && (b == b'\n' || b == b'\t'));
    let mut blocks = bytes.chunks_exact(64);
    blocks.all(|chunk| chunk.iter().fold(true, |all, &b| all & ok(b)))
        && blocks.remainder().iter().all(|&b| ok(b))
}

/// [`escape`] for one line.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escape(text, Layout::Line)
}

/// [`escape`] for several lines.
pub(crate) fn block(text: &str) -> Cow<'_, str> {
    escape(text, Layout::Block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_byte_is_found_wherever_it_falls_in_a_block_of_bytes() {
        let text = "a".repeat(150);
        assert!(matches!(line(&text), Cow::Borrowed(_)));
        for at in [0, 1, 63, 64, 65, 127, 128, 149] {
            let mut bytes = text.clone().into_bytes();
            bytes[at] = 0x1b;
            let hidden = String::from_utf8(bytes).unwrap();
            assert_eq!(line(&hidden).matches("\\u{1b}").count(), 1, "at {at}");
            let mut bytes = text.clone().into_bytes();
            bytes[at] = b'\n';
            let lines = String::from_utf8(bytes).unwrap();
            assert!(matches!(block(&lines), Cow::Borrowed(_)), "at {at}");
            assert!(line(&lines).contains("\\u{a}"), "at {at}");
        }
    }

    #[test]
    fn controls_and_bidi_become_visible_escapes() {
        assert_eq!(
            line("a\x1b]0;PWNED\x07\x1b[2Jb"),
            "a\\u{1b}]0;PWNED\\u{7}\\u{1b}[2Jb"
        );
        assert_eq!(line("evil\u{202e}txt.rs"), "evil\\u{202e}txt.rs");
        assert_eq!(line("\u{7f}\u{85}\u{9b}"), "\\u{7f}\\u{85}\\u{9b}");
        assert_eq!(
            line("\u{200e}\u{200f}\u{2066}\u{2069}\u{202a}\u{61c}\u{2028}"),
            "\\u{200e}\\u{200f}\\u{2066}\\u{2069}\\u{202a}\\u{61c}\\u{2028}"
        );
        assert_eq!(line("a\tb\nc\r"), "a\\u{9}b\\u{a}c\\u{d}");
        assert_eq!(block("a\tb\nc\r\x1b"), "a\tb\nc\\u{d}\\u{1b}");
    }

    #[test]
    fn plain_text_is_borrowed_and_escaping_twice_changes_nothing() {
        for text in ["plain", "ünïcödé ✓ 日本", "C:\\path\\u{1b}", ""] {
            assert!(matches!(line(text), Cow::Borrowed(_)), "{text}");
        }
        let once = line("x\x1b\u{202e}y").into_owned();
        assert_eq!(line(&once), once);
        assert!(once.chars().all(|c| !is_hidden(c)));
    }

    #[test]
    fn every_hidden_character_is_escaped_in_both_layouts() {
        for code in (0..0x2100_u32).filter_map(char::from_u32) {
            let text = format!("<{code}>");
            let shown = escape(&text, Layout::Line);
            assert!(!shown.chars().any(is_hidden), "{:x}", u32::from(code));
            let shown = escape(&text, Layout::Block);
            assert!(
                !shown
                    .chars()
                    .any(|c| is_hidden(c) && c != '\n' && c != '\t'),
                "{:x}",
                u32::from(code)
            );
        }
    }
}
