//! Finding the JSON objects in a reply's prose, in time linear in its size.
//!
//! Every `{` starts a candidate, with the string state fresh at it (a stray
//! quote in prose must not hide a later object). The candidate ends at the
//! brace that balances it, strings and escapes respected, and is taken if it
//! parses as JSON, leniently (see `parse.rs`); otherwise the scan resumes
//! just after its `{`, so an object nested in a failed candidate is still
//! found. Done naively that is quadratic (every `{` rescans to its balancing
//! brace and re-parses a copy of its span), so:
//! - [`Spans`] finds every candidate's end, and how deeply it nests, in one
//!   right-to-left pass over the reply's braces, brackets, quotes and
//!   backslashes (about 16 bytes of memory for each of those);
//! - a candidate is parsed through [`LenientReader`], which applies the
//!   lenient fix-ups as serde_json reads, so a failed parse costs what was
//!   read before the error, not the whole span;
//! - a candidate that a failed parse had entered when it failed, inside
//!   which the error lies, fails the same way and is not parsed again; one
//!   that nests deeper than serde_json's recursion limit is not parsed.
//!
//! The result is the same as the naive scan's on every reply; the first
//! failure is still diagnosed on the text as sent, for its message.

use std::io;
use std::ops::Range;

use serde::Deserialize;
use serde_json::Value;

use super::parse::{lenient_json, line_col, offset_of, strip_position};
use super::union::DecisionError;

/// The nesting at which serde_json stops with "recursion limit exceeded"
/// (its depth budget is 128 and the 128th open container exhausts it).
const SERDE_DEPTH_LIMIT: u32 = 128;

/// A failed candidate that mentions this names a decision.
const KIND: &str = "\"kind\"";

/// Every top-level JSON object found in prose, and the error of the first
/// `{...}` that looked like one but was not valid JSON.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Scan {
    pub objects: Vec<Value>,
    /// Byte spans of `objects` in the reply, in order and disjoint.
    pub spans: Vec<Range<usize>>,
    /// Spans of `{...}` that were not valid JSON but mention `"kind"`.
    pub broken_with_kind: Vec<Range<usize>>,
    pub first_error: Option<DecisionError>,
}

impl Scan {
    /// How many of `broken_with_kind` hold none of the good objects.
    pub(super) fn broken_alone(&self) -> usize {
        self.broken_with_kind
            .iter()
            .filter(|b| {
                // Good spans are sorted and disjoint: the first starting in
                // `b` ends soonest, so it alone decides.
                let first = self.spans.partition_point(|s| s.start < b.start);
                self.spans.get(first).is_none_or(|s| s.end > b.end)
            })
            .count()
    }
}

/// Scans `text`; `None` when it is too long to index (over 2 GiB).
pub(super) fn scan_objects(text: &str) -> Option<Scan> {
    let bytes = text.as_bytes();
    let spans = Spans::new(bytes)?;
    let kinds = occurrences(text, KIND);
    let mut next_kind = 0;
    let mut scan = Scan::default();
    // Failed parses whose error may lie inside a later candidate.
    let mut failures: Vec<Failure> = Vec::new();
    let mut from = 0;
    for candidate in spans.candidates() {
        let start = candidate.start;
        if start < from {
            continue;
        }
        let Some(end) = candidate.end else {
            if scan.first_error.is_none() {
                let (line, column) = line_col(text, start);
                scan.first_error = Some(DecisionError::Json {
                    line,
                    column,
                    message: "this object is never closed".to_string(),
                });
            }
            continue;
        };
        while kinds.get(next_kind).is_some_and(|&k| k < start) {
            next_kind += 1;
        }
        let span_text = text.get(start..=end).unwrap_or_default();
        let parsed = if scan.first_error.is_none() {
            // Until something fails, every candidate is parsed as a copy:
            // the candidates that parse are disjoint, and the first failure
            // needs its error on the text as sent.
            lenient_json(span_text).map_err(|err| {
                let offset = start + offset_of(span_text, err.line(), err.column());
                let (line, column) = line_col(text, offset);
                scan.first_error = Some(DecisionError::Json {
                    line,
                    column,
                    message: strip_position(&err.to_string()),
                });
            })
        } else if candidate.too_deep {
            Err(())
        } else {
            failures.retain(|f| f.last > start);
            if failures.iter().any(|f| f.fails(start, end)) {
                Err(())
            } else {
                parse_candidate(bytes, start, end).map_err(|failure| failures.push(failure))
            }
        };
        match parsed {
            Ok(value) => {
                scan.objects.push(value);
                scan.spans.push(start..end + 1);
                from = end + 1;
            }
            Err(()) => {
                if kinds
                    .get(next_kind)
                    .is_some_and(|&k| k + KIND.len() <= end + 1)
                {
                    scan.broken_with_kind.push(start..end + 1);
                }
            }
        }
    }
    Some(scan)
}

/// Byte offsets of every occurrence of `needle`, overlapping ones included.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = text.get(at..).and_then(|rest| rest.find(needle)) {
        found.push(at + i);
        // One byte on: the needle starts with an ASCII quote, so that is
        // a character boundary, and overlapping matches are kept.
        at += i + 1;
    }
    found
}

/// One `{` of the reply as a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Candidate {
    /// Byte offset of the `{`.
    start: usize,
    /// Byte offset of the `}` balancing it (string state fresh at `start`).
    end: Option<usize>,
    /// Brackets nest so deep inside it that serde_json must refuse it.
    too_deep: bool,
}

/// "Never" in [`Spans`]' node links.
const NONE: u32 = u32::MAX;

/// Where each candidate ends, from one right-to-left pass.
///
/// A candidate's scan is a walk through states out-of-string / in-string /
/// just-after-a-backslash, with a brace depth that rises at `{` and falls
/// at `}` out of strings; it ends when the depth falls back. Walks from
/// different `{` that are in the same state at the same byte go on alike,
/// so every (event, state) pair is a node with one successor, and "the
/// first later node with a lower depth" obeys a recurrence computed from
/// the right: `lower(v)` is `next(v)` after a `}`, `lower(next(v))` after a
/// byte that leaves the depth alone, and `lower(lower(next(v)))` after a
/// `{`. In-string nodes only lead to the node after the closing quote, so
/// only out-of-string nodes are stored. Bracket depth (both kinds, for
/// serde_json's recursion limit) and the highest it gets before `lower`
/// follow the same way.
#[derive(Debug)]
struct Spans {
    /// Byte offset of each event: `{`, `}`, `[`, `]`, `"` or `\`.
    pos: Vec<u32>,
    /// Per out-of-string node (one per event, then the end): the first
    /// later node with a lower brace depth, or [`NONE`].
    lower: Vec<u32>,
    /// Per out-of-string node: how far the bracket depth rises above the
    /// node's own before `lower`.
    height: Vec<u32>,
    /// The event of each `{`.
    braces: Vec<u32>,
}

impl Spans {
    /// `None` when the reply is too long for 32-bit indexes (over 2 GiB).
    fn new(bytes: &[u8]) -> Option<Spans> {
        if bytes.len() > i32::MAX as usize {
            return None;
        }
        // Offsets and event counts fit in u32 (and depths in i32) from here.
        let mut pos = Vec::new();
        let mut braces = Vec::new();
        for (at, &byte) in bytes.iter().enumerate() {
            if matches!(byte, b'{' | b'}' | b'[' | b']' | b'"' | b'\\') {
                if byte == b'{' {
                    braces.push(pos.len() as u32);
                }
                pos.push(at as u32);
            }
        }
        let events = pos.len();
        let mut lower = vec![NONE; events + 1];
        // Bracket depth at each node, relative to the end of the reply.
        let mut level = vec![0i32; events + 1];
        let mut height = vec![0u32; events + 1];
        // The out-of-string node reached when a string that is open at
        // event i + 1 (and at i + 2) closes; the end if it never does.
        let (mut close1, mut close2) = (events as u32, events as u32);
        // Every index below is a node after `i`, at most `events`.
        for i in (0..events).rev() {
            let at = pos[i];
            let byte = bytes[at as usize];
            let after = i as u32 + 1;
            let close_here = match byte {
                b'"' => after,
                // The byte after a backslash is skipped, event or not.
                b'\\' if pos.get(i + 1) == Some(&(at + 1)) => close2,
                _ => close1,
            };
            let (next, brace, bracket) = match byte {
                b'{' => (after, 1, 1),
                b'}' => (after, -1, -1),
                b'[' => (after, 0, 1),
                b']' => (after, 0, -1),
                b'"' => (close1, 0, 0),
                _ => (after, 0, 0),
            };
            let next = next as usize;
            level[i] = level[next] - bracket;
            let next_height = i64::from(height[next]);
            let (here_lower, here_height) = match brace {
                // The depth falls right after a `}`.
                -1 => (next as u32, 0),
                0 => (lower[next], (i64::from(bracket) + next_height).max(0)),
                // After a `{`: past its balancing `}`, then on from there.
                _ => match lower[next] {
                    NONE => (NONE, 1 + next_height),
                    inner => {
                        let inner = inner as usize;
                        let rest = i64::from(level[inner]) - i64::from(level[i])
                            + i64::from(height[inner]);
                        (lower[inner], (1 + next_height).max(rest))
                    }
                },
            };
            lower[i] = here_lower;
            height[i] = u32::try_from(here_height).unwrap_or(u32::MAX);
            close2 = close1;
            close1 = close_here;
        }
        Some(Spans {
            pos,
            lower,
            height,
            braces,
        })
    }

    /// Every `{` of the reply, in order.
    fn candidates(&self) -> impl Iterator<Item = Candidate> + '_ {
        self.braces.iter().map(|&event| {
            let after = event as usize + 1;
            let close = self.lower.get(after).copied().unwrap_or(NONE);
            // The node after the balancing `}` follows it directly.
            let end = (close != NONE)
                .then(|| (close as usize).checked_sub(1))
                .flatten()
                .and_then(|event| self.pos.get(event))
                .map(|&at| at as usize);
            let height = self.height.get(after).copied().unwrap_or_default();
            Candidate {
                start: self.pos.get(event as usize).copied().unwrap_or_default() as usize,
                end,
                too_deep: height.saturating_add(1) >= SERDE_DEPTH_LIMIT,
            }
        })
    }
}

/// What a failed parse of a candidate read.
#[derive(Debug)]
struct Failure {
    /// The last byte serde_json read (it fails on the byte it reads).
    last: usize,
    /// Every `{` it read out of strings, each the start of an object it
    /// entered (or the byte it failed on, which is then `last`).
    opened: Vec<usize>,
}

impl Failure {
    /// Whether the candidate `start..=end` certainly fails too: the failed
    /// parse entered it as an object and failed before leaving it, so
    /// parsing it alone reads the same bytes to the same error.
    fn fails(&self, start: usize, end: usize) -> bool {
        start < self.last && end >= self.last && self.opened.binary_search(&start).is_ok()
    }
}

/// Parses `text[start..=end]` leniently without copying it.
fn parse_candidate(bytes: &[u8], start: usize, end: usize) -> Result<Value, Failure> {
    let mut reader = LenientReader::new(bytes, start, end + 1);
    let result = {
        let mut de = serde_json::Deserializer::from_reader(&mut reader);
        Value::deserialize(&mut de).and_then(|value| de.end().map(|()| value))
    };
    result.map_err(|err| {
        // Parsed alone, a nested object has a larger depth budget: a
        // recursion failure says nothing about it.
        let depth = err.to_string().starts_with("recursion limit exceeded");
        Failure {
            last: reader.last,
            opened: if depth { Vec::new() } else { reader.opened },
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Str {
    Out,
    In,
    Escaped,
}

/// A candidate's bytes with both of `lenient_json`'s fix-ups applied as
/// they are read: a comma before `}` or `]` becomes a space, and a raw
/// line break, carriage return or tab in a string becomes its escape.
/// `lenient_json` tries the escapes only when the text without them fails,
/// but text that parses without them has no raw control character in a
/// string, so escaping changes nothing there: one parse of these bytes
/// accepts exactly what `lenient_json` accepts, with the same value.
struct LenientReader<'a> {
    bytes: &'a [u8],
    next: usize,
    end: usize,
    state: Str,
    /// The second byte of an escape being written.
    pending: Option<u8>,
    /// The last byte handed out, as an offset in `bytes`.
    last: usize,
    opened: Vec<usize>,
}

impl<'a> LenientReader<'a> {
    fn new(bytes: &'a [u8], start: usize, end: usize) -> LenientReader<'a> {
        LenientReader {
            bytes,
            next: start,
            end: end.min(bytes.len()),
            state: Str::Out,
            pending: None,
            last: start,
            opened: Vec::new(),
        }
    }

    fn next_byte(&mut self) -> Option<u8> {
        if let Some(byte) = self.pending.take() {
            return Some(byte);
        }
        if self.next >= self.end {
            return None;
        }
        let at = self.next;
        let byte = *self.bytes.get(at)?;
        self.next += 1;
        self.last = at;
        let (out, pending, state) = match (self.state, byte) {
            (Str::Escaped, _) => (byte, None, Str::In),
            (Str::In, b'\\') => (byte, None, Str::Escaped),
            (Str::In, b'"') => (byte, None, Str::Out),
            (Str::In, b'\n') => (b'\\', Some(b'n'), Str::In),
            (Str::In, b'\r') => (b'\\', Some(b'r'), Str::In),
            (Str::In, b'\t') => (b'\\', Some(b't'), Str::In),
            (Str::In, _) => (byte, None, Str::In),
            (Str::Out, b'"') => (byte, None, Str::In),
            (Str::Out, b'{') => {
                self.opened.push(at);
                (byte, None, Str::Out)
            }
            (Str::Out, b',') if self.closes_after(at) => (b' ', None, Str::Out),
            (Str::Out, _) => (byte, None, Str::Out),
        };
        self.pending = pending;
        self.state = state;
        Some(out)
    }

    /// Whether the next non-blank byte after `at` (within the candidate)
    /// closes an object or array.
    fn closes_after(&self, at: usize) -> bool {
        let next = self
            .bytes
            .get(at + 1..self.end)
            .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()));
        matches!(next, Some(b'}') | Some(b']'))
    }
}

impl io::Read for LenientReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        for slot in buf.iter_mut() {
            let Some(byte) = self.next_byte() else {
                break;
            };
            *slot = byte;
            filled += 1;
        }
        Ok(filled)
    }
}
