//! JSON whose strings hold no hidden character raw: serde_json writes C0
//! controls as `\u00XX` already; this formatter writes DEL, C1 controls and
//! the bidi and separator characters of [`is_hidden`] as `\uXXXX` too. The
//! document parses back to exactly the same values.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

use super::visible::is_hidden;

/// A serde_json [`Formatter`] that escapes hidden characters in strings and
/// otherwise writes what `inner` writes.
#[derive(Debug, Clone)]
pub(crate) struct EscapingFormatter<F> {
    inner: F,
}

impl<F> EscapingFormatter<F> {
    pub(crate) fn new(inner: F) -> EscapingFormatter<F> {
        EscapingFormatter { inner }
    }
}

/// `value` as pretty JSON (two-space indent, as `serde_json::to_string_pretty`).
pub(crate) fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write_with(value, EscapingFormatter::new(PrettyFormatter::new()))
}

/// Writes `value` as pretty JSON into `writer`, as [`to_json_pretty`]
/// would render it, without holding the text (a sweep's results.json).
pub(crate) fn write_json_pretty<T: Serialize + ?Sized, W: io::Write>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(
        writer,
        EscapingFormatter::new(PrettyFormatter::new()),
    );
    value.serialize(&mut serializer)
}

/// Appends `value` to `out` as compact JSON that can lie inside an HTML
/// element: `<`, `>` and `&` (which JSON only has inside strings, where the
/// escapes mean the same) are written as `\u003c`, `\u003e` and `\u0026`,
/// so no text in it can end or open a tag. Serialized in place, without a
/// second copy of the text.
pub(crate) fn write_json_for_markup<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> serde_json::Result<()> {
    write_json_for_markup_to(out, value)
}

/// As [`write_json_for_markup`], into any writer (a page written to its
/// file as it is serialized).
pub(crate) fn write_json_for_markup_to<W: io::Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
) -> serde_json::Result<()> {
    serde_json::to_writer(NoMarkup(out), value)
}

/// Writes what it is given with `<`, `>` and `&` as `\u` escapes. They are
/// ASCII, so such a byte is never part of a longer character.
struct NoMarkup<W>(W);

impl<W: io::Write> io::Write for NoMarkup<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|b| matches!(b, b'<' | b'>' | b'&')) {
            self.0.write_all(&rest[..at])?;
            self.0.write_all(match rest[at] {
                b'<' => b"\\u003c",
                b'>' => b"\\u003e",
                _ => b"\\u0026",
            })?;
            rest = &rest[at + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// `value` as compact JSON.
#[cfg(test)]
pub(crate) fn to_json_compact<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write_with(
        value,
        EscapingFormatter::new(serde_json::ser::CompactFormatter),
    )
}

fn write_with<T: Serialize + ?Sized, F: Formatter>(
    value: &T,
    formatter: F,
) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(1024);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer)?;
    // The serializer writes UTF-8 (escapes are ASCII); a lossy conversion
    // is the identity here and needs no unwrap.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

impl<F: Formatter> Formatter for EscapingFormatter<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_hidden(c) {
                self.inner
                    .write_string_fragment(writer, &fragment[start..i])?;
                // Every hidden character is in the Basic Multilingual Plane.
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        self.inner.write_string_fragment(writer, &fragment[start..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.begin_array(writer)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.begin_object(writer)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_object_key(writer, first)
    }

    fn end_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_object_key(writer)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_written_as_escapes_and_read_back_exactly() {
        let value = serde_json::json!({
            "path": "a\x1b]0;x\x07\u{202e}b\u{7f}\u{9b}\u{2066}",
            "list": ["plain", "ok ✓"],
        });
        let text = to_json_pretty(&value).unwrap();
        assert!(
            text.contains("a\\u001b]0;x\\u0007\\u202eb\\u007f\\u009b\\u2066"),
            "{text}"
        );
        assert!(!text.chars().any(|c| is_hidden(c) && c != '\n'), "{text}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
        // The layout is serde_json's own.
        let plain = serde_json::json!({"a": [1, {"b": "c"}], "d": null});
        assert_eq!(
            to_json_pretty(&plain).unwrap(),
            serde_json::to_string_pretty(&plain).unwrap()
        );
        assert_eq!(
            to_json_compact(&plain).unwrap(),
            serde_json::to_string(&plain).unwrap()
        );
    }

    /// A writer that takes at most `n` bytes per call, as a pipe or a
    /// buffered file may.
    struct Trickle(Vec<u8>, usize);

    impl io::Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.1);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn markup_is_escaped_whatever_the_writer_accepts_per_call() {
        let value = serde_json::json!({
            "s": "</script><!-- a && b > c -->",
            "k<&>": ["<", ">", "&", "plain"],
        });
        let mut whole = Vec::new();
        write_json_for_markup(&mut whole, &value).unwrap();
        for n in [1, 2, 3, 7] {
            let mut out = Trickle(Vec::new(), n);
            write_json_for_markup_to(&mut out, &value).unwrap();
            assert_eq!(out.0, whole, "per-call limit {n}");
        }
        let text = String::from_utf8(whole).unwrap();
        assert!(!text.contains(['<', '>', '&']), "{text}");
        assert!(text.contains("\\u003c/script\\u003e"), "{text}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
    }
}
