//! Text measured as a terminal shows it: display width, shortening with
//! `…`, and wrapping at spaces.

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The mark a shortened cell ends with (one column wide).
pub const ELLIPSIS: char = '…';

/// How many terminal columns `text` takes: a CJK character or an emoji is
/// two, a combining mark none.
pub fn width(text: &str) -> usize {
    // Most cells are printable ASCII: one column per byte.
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return text.len();
    }
    text.width()
}

/// The longest prefix of `text` at most `max` columns wide, cut between
/// characters (a character is never split, nor a wide one half shown).
fn prefix(text: &str, max: usize) -> &str {
    let mut used = 0;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > max {
            break;
        }
        used += w;
        end = at + c.len_utf8();
    }
    // Sequences (emoji with joiners, modifiers) can measure otherwise than
    // their characters summed: the whole prefix is what counts.
    let mut prefix = &text[..end];
    while width(prefix) > max {
        let mut chars = prefix.chars();
        chars.next_back();
        prefix = chars.as_str();
    }
    // A joiner with nothing after it to join would only confuse a terminal.
    prefix.trim_end_matches('\u{200d}')
}

/// `text` cut anywhere to fit `max` columns, ending in `…` when cut: for a
/// token such as a job id, which has no words to cut between.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    if width(text) <= max {
        return Cow::Borrowed(text);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = prefix(text, max - 1).to_string();
    out.push(ELLIPSIS);
    Cow::Owned(out)
}

/// `text` cut in the middle to fit `max` columns, its head and its tail
/// kept with `…` between: for a job id, whose tail (`@provider#k`) is what
/// tells instances apart. The tail gets two columns in three, and all of
/// an `@...` part when it fits beside a head of at least three.
pub fn cut_middle(text: &str, max: usize) -> Cow<'_, str> {
    if width(text) <= max {
        return Cow::Borrowed(text);
    }
    if max < 3 {
        return cut(text, max);
    }
    let room = max - 1;
    let at_part = text.rfind('@').map(|at| width(&text[at..])).unwrap_or(0);
    let mut tail = (room * 2).div_ceil(3);
    if at_part > tail && at_part + 3 <= room {
        tail = at_part;
    }
    let head = prefix(text, room - tail);
    let end = suffix(text, room - width(head));
    Cow::Owned(format!("{head}{ELLIPSIS}{end}"))
}

/// The longest suffix of `text` at most `max` columns wide, cut between
/// characters.
fn suffix(text: &str, max: usize) -> &str {
    let mut used = 0;
    let mut start = text.len();
    for (at, c) in text.char_indices().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > max {
            break;
        }
        used += w;
        start = at;
    }
    let mut suffix = &text[start..];
    while width(suffix) > max {
        let mut chars = suffix.chars();
        chars.next();
        suffix = chars.as_str();
    }
    // A combining mark or joiner with nothing before it is not shown alone.
    suffix.trim_start_matches(|c: char| c.width() == Some(0))
}

/// `text` cut after its last whole word that fits `max` columns together
/// with the `…` that ends it (punctuation left hanging before the mark is
/// dropped): a word is never split. When not even the first word fits, the
/// cell is `…` alone.
pub fn cut_words(text: &str, max: usize) -> Cow<'_, str> {
    if width(text) <= max {
        return Cow::Borrowed(text);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let room = max - 1;
    let mut kept = "";
    for (at, c) in text.char_indices() {
        if !c.is_whitespace() {
            continue;
        }
        let candidate = text[..at].trim_end();
        if width(candidate) > room {
            break;
        }
        kept = candidate;
    }
    let kept = kept.trim_end_matches(|c: char| c.is_whitespace() || ",;:([{-".contains(c));
    let mut out = String::with_capacity(kept.len() + ELLIPSIS.len_utf8());
    out.push_str(kept);
    out.push(ELLIPSIS);
    Cow::Owned(out)
}

/// `text` broken at spaces into lines of at most `max` columns; a word
/// wider than `max` gets a line of its own, whole (a word is never split).
pub fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let w = width(word);
        if !line.is_empty() && used + 1 + w > max {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if !line.is_empty() {
            line.push(' ');
            used += 1;
        }
        line.push_str(word);
        used += w;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// How many terminal lines `line` takes on a terminal `columns` wide (a
/// longer line wraps).
pub fn rows(line: &str, columns: usize) -> usize {
    width(line).div_ceil(columns.max(1)).max(1)
}
