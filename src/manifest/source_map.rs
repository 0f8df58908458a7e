//! Where each key of a TOML document is: byte spans turned into
//! `line:column`, dotted field paths (`limits.wall_time`, `editable[1]`)
//! turned into spans, and spans turned back into the field that holds them.
//! Lets checks that run after deserializing still point at the right line.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{Location, ManifestError};

/// One key or array element: its dotted path, the span of the key (or of
/// the element) and the span of its value.
#[derive(Debug, Clone)]
struct Entry {
    path: String,
    key: Range<usize>,
    value: Range<usize>,
}

/// The positions of every key in one document.
#[derive(Debug)]
pub(super) struct SourceMap<'a> {
    file: &'a Path,
    text: &'a str,
    entries: Vec<Entry>,
}

impl<'a> SourceMap<'a> {
    /// Parses `text` for its structure; a syntax error is reported at its
    /// place, with the field it is in when one is known.
    pub(super) fn parse(file: &'a Path, text: &'a str) -> Result<SourceMap<'a>, ManifestError> {
        let mut map = SourceMap {
            file,
            text,
            entries: Vec::new(),
        };
        match DeTable::parse(text) {
            Ok(table) => {
                collect_table(table.get_ref(), "", &mut map.entries);
                Ok(map)
            }
            Err(err) => Err(map.toml_error(&err)),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(super) fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        (line, column)
    }

    /// The location of an offset in this file.
    pub(super) fn at_offset(&self, offset: usize) -> Location {
        let (line, column) = self.line_col(offset);
        Location {
            file: self.file.to_path_buf(),
            line,
            column,
        }
    }

    /// Where the value of `path` starts; if the key is absent, where its
    /// closest present parent is; else the start of the file.
    pub(super) fn locate(&self, path: &str) -> Location {
        let mut probe = path;
        loop {
            if let Some(entry) = self.entries.iter().find(|e| e.path == probe) {
                return self.at_offset(entry.value.start);
            }
            match probe.rfind(['.', '[']) {
                Some(cut) => probe = &probe[..cut],
                None => return self.at_offset(0),
            }
        }
    }

    /// Where the key of `path` itself is written (for "unknown key" errors).
    pub(super) fn locate_key(&self, path: &str) -> Location {
        match self.entries.iter().find(|e| e.path == path) {
            Some(entry) => self.at_offset(entry.key.start),
            None => self.locate(path),
        }
    }

    /// The innermost field whose key or value contains `offset`.
    pub(super) fn field_at(&self, offset: usize) -> Option<&str> {
        let contains = |r: &Range<usize>| r.start <= offset && offset < r.end.max(r.start + 1);
        self.entries
            .iter()
            .filter(|e| contains(&e.key) || contains(&e.value))
            .min_by_key(|e| {
                let span = if contains(&e.key) { &e.key } else { &e.value };
                span.end - span.start
            })
            .map(|e| e.path.as_str())
    }

    /// A `toml` error placed at its span and attributed to the field there.
    pub(super) fn toml_error(&self, err: &toml::de::Error) -> ManifestError {
        let offset = err.span().map_or(0, |s| s.start);
        let at = self.at_offset(offset);
        // `api_key` is read only to refuse it; never list it as accepted.
        let message = in_words(
            &err.message()
                .trim()
                .replace('\n', " ")
                .replace(" `api_key`,", ""),
        );
        let field = err.span().and_then(|s| self.field_at(s.start));
        // "missing field `x`" in table `t` is about `t.x`, reported where
        // the table starts.
        if let Some(name) = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'))
        {
            let field = match field {
                Some(table) if !table.is_empty() => format!("{table}.{name}"),
                _ => name.to_string(),
            };
            return ManifestError::Field {
                at,
                field,
                message: "required key is missing".to_string(),
            };
        }
        match field {
            Some(field) => ManifestError::Field {
                at,
                field: field.to_string(),
                message,
            },
            None => ManifestError::Syntax { at, message },
        }
    }
}

/// A deserializer's message without the names of Rust types (`expected
/// u32`, `a sequence`). The shape check words every error a file can have
/// before the deserializer runs; this keeps any it did not foresee readable.
fn in_words(message: &str) -> String {
    const WORDS: [(&str, &str); 12] = [
        ("invalid type: ", ""),
        ("invalid value: ", ""),
        ("unknown variant", "unknown value"),
        ("unknown field", "unknown key"),
        ("a sequence", "a list"),
        ("a map", "a table"),
        ("a boolean", "true or false"),
        ("expected u32", "expected a whole number"),
        ("expected u64", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("integer `", "the whole number `"),
    ];
    let mut text = message.to_string();
    for (from, to) in WORDS {
        text = text.replace(from, to);
    }
    text
}

fn collect_table(table: &DeTable<'_>, prefix: &str, out: &mut Vec<Entry>) {
    for (key, value) in table.iter() {
        let path = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        collect_value(path, key.span(), value, out);
    }
}

fn collect_value(
    path: String,
    key: Range<usize>,
    value: &Spanned<DeValue<'_>>,
    out: &mut Vec<Entry>,
) {
    out.push(Entry {
        path: path.clone(),
        key,
        value: value.span(),
    });
    match value.get_ref() {
        DeValue::Table(table) => collect_table(table, &path, out),
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_value(format!("{path}[{index}]"), item.span(), item, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str =
        "id = \"x\"\nverify = [\"cargo\", \"test\"]\n\n[limits]\nwall_time = \"15 minutes\"\n";

    #[test]
    fn locates_keys_values_and_elements() {
        let file = Path::new("jobs/x.toml");
        let map = SourceMap::parse(file, DOC).unwrap();
        assert_eq!(map.locate("id").to_string(), "jobs/x.toml:1:6");
        assert_eq!(map.locate("verify[1]").to_string(), "jobs/x.toml:2:20");
        assert_eq!(
            map.locate("limits.wall_time").to_string(),
            "jobs/x.toml:5:13"
        );
        assert_eq!(
            map.locate_key("limits.wall_time").to_string(),
            "jobs/x.toml:5:1"
        );
        // Absent keys fall back to their table, then to the file start.
        assert_eq!(map.locate("limits.attempts").line, 4);
        assert_eq!(map.locate("sandbox.mode").to_string(), "jobs/x.toml:1:1");
    }

    #[test]
    fn finds_the_field_at_an_offset() {
        let map = SourceMap::parse(Path::new("x.toml"), DOC).unwrap();
        let offset = DOC.find("15 minutes").unwrap();
        assert_eq!(map.field_at(offset), Some("limits.wall_time"));
        let offset = DOC.find("\"test\"").unwrap();
        assert_eq!(map.field_at(offset), Some("verify[1]"));
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let err = SourceMap::parse(Path::new("x.toml"), "id = \"x\"\nverify = [\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("x.toml:"), "{text}");
    }

    #[test]
    fn deserializer_messages_lose_their_type_names() {
        assert_eq!(
            in_words("invalid type: string \"many\", expected u32"),
            "string \"many\", expected a whole number"
        );
        assert_eq!(
            in_words("invalid type: string \"x\", expected a sequence"),
            "string \"x\", expected a list"
        );
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let text = "prompt = \"é\"\nid = 3\n";
        let map = SourceMap::parse(Path::new("x.toml"), text).unwrap();
        assert_eq!(map.line_col(text.find('3').unwrap()), (2, 6));
        let text = "prompt = \"éé\" # é\nx = 1\n";
        let map = SourceMap::parse(Path::new("x.toml"), text).unwrap();
        assert_eq!(map.line_col(text.find("# ").unwrap()), (1, 15));
    }
}
