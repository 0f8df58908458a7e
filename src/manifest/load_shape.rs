//! The first check of a file that parses as TOML: is it the kind of file
//! asked for at all, and does every key and value have the shape of
//! `shape.rs`? Finds every such error of the file at once, each placed at
//! its key or value and worded for a person (no deserializer types), with
//! the closest known name when one is near, and says which keys it
//! reported so the rest of the file can still be checked.

use std::path::Path;

use super::error::{Location, ManifestError};
use super::shape::{JOB_KEYS, Key, Kind, MANIFEST, PROVIDER, PROVIDER_FILE, Shape};
use super::source_map::SourceMap;
use super::suggest::did_you_mean;
use crate::protocol::ProviderKind;

/// What the walk found: the errors, the dotted fields they are about
/// (taken out of the document before it is read further), and the fields
/// a misspelt key was taken for (their absence is the same mistake).
#[derive(Debug, Default)]
pub(super) struct ShapeErrors {
    pub errors: Vec<ManifestError>,
    pub fields: Vec<String>,
    pub suggested: Vec<String>,
}

/// Every unknown key and wrongly typed value of `root` against `shape`.
pub(super) fn check_shape(
    map: &SourceMap<'_>,
    root: &toml::Table,
    shape: &'static Shape,
) -> ShapeErrors {
    let mut walk = Walk {
        map,
        root: shape,
        found: ShapeErrors::default(),
    };
    walk.table("", root, shape);
    walk.found
}

/// Removes every field of `fields` (`limits.max_step`, `editable`,
/// `setup.commands[0]`: the array element's whole array) from `table`.
pub(super) fn prune(table: &mut toml::Table, fields: &[String]) {
    for field in fields {
        // An element's error takes out its whole list.
        let field = field.split('[').next().unwrap_or(field);
        let parts: Vec<&str> = field.split('.').collect();
        remove(table, &parts);
    }
}

fn remove(table: &mut toml::Table, path: &[&str]) {
    match path {
        [] => {}
        [last] => {
            table.remove(*last);
        }
        [first, rest @ ..] => {
            if let Some(toml::Value::Table(inner)) = table.get_mut(*first) {
                remove(inner, rest);
            }
        }
    }
}

/// A file given as a job that is no job manifest at all: one error for the
/// file instead of one per key it has.
pub(super) fn not_a_manifest(file: &Path, root: &toml::Table) -> Option<ManifestError> {
    if JOB_KEYS.iter().any(|k| root.contains_key(*k)) {
        return None;
    }
    let provider_file =
        root.contains_key("provider") && root.keys().all(|k| PROVIDER_FILE.key(k).is_some());
    if provider_file {
        return Some(whole(
            file,
            "a provider file, not a job manifest: give it with --provider FILE".to_string(),
        ));
    }
    if root.keys().any(|k| MANIFEST.key(k).is_some()) {
        // A manifest that lacks its main keys: the missing ones are named.
        return None;
    }
    let what = if root.is_empty() {
        "it is empty".to_string()
    } else if root.contains_key("package") || root.contains_key("workspace") {
        "it looks like a crate's Cargo.toml".to_string()
    } else if root.contains_key("build-system") || root.contains_key("project") {
        "it looks like a Python project's pyproject.toml".to_string()
    } else {
        format!("its keys are {}", and_list(&names_of(root)))
    };
    Some(whole(
        file,
        format!(
            "not a job manifest ({what}); a job manifest sets prompt, source, editable, allow and verify (see docs/manifest.md)"
        ),
    ))
}

/// A file given as a provider file that is none.
pub(super) fn not_a_provider_file(file: &Path, root: &toml::Table) -> Option<ManifestError> {
    let job: Vec<String> = JOB_KEYS
        .iter()
        .filter(|k| root.contains_key(**k))
        .map(|k| k.to_string())
        .collect();
    if !job.is_empty() && !root.contains_key("provider") {
        return Some(whole(
            file,
            format!(
                "not a provider file: it sets {}, as a job manifest does; give jobs as JOBS... and a provider file (name and [provider]) with --provider",
                and_list(&job)
            ),
        ));
    }
    if !root.is_empty() && root.keys().all(|k| PROVIDER_FILE.key(k).is_none()) {
        return Some(whole(
            file,
            format!(
                "not a provider file (its keys are {}); a provider file has name = \"...\" and a [provider] table (see docs/manifest.md)",
                and_list(&names_of(root))
            ),
        ));
    }
    None
}

fn whole(file: &Path, message: String) -> ManifestError {
    ManifestError::Syntax {
        at: Location::whole(file),
        message,
    }
}

/// A table's keys as a message shows them: sub-tables in brackets.
fn names_of(table: &toml::Table) -> Vec<String> {
    table
        .iter()
        .map(|(k, v)| {
            if v.is_table() {
                format!("[{k}]")
            } else {
                k.clone()
            }
        })
        .collect()
}

struct Walk<'a> {
    map: &'a SourceMap<'a>,
    /// The file's top-level shape, to say where a key misplaced belongs.
    root: &'static Shape,
    found: ShapeErrors,
}

impl Walk<'_> {
    fn error(&mut self, field: &str, at: Location, message: String) {
        self.found.errors.push(ManifestError::Field {
            at,
            field: field.to_string(),
            message,
        });
        self.found.fields.push(field.to_string());
    }

    fn value_error(&mut self, field: &str, message: String) {
        let at = self.map.locate(field);
        self.error(field, at, message);
    }

    fn table(&mut self, prefix: &str, table: &toml::Table, shape: &'static Shape) {
        // `[provider]` takes the keys of its kind only.
        let kind = if std::ptr::eq(shape, &PROVIDER) {
            table
                .get("kind")
                .and_then(toml::Value::as_str)
                .and_then(provider_kind)
        } else {
            None
        };
        for (name, value) in table {
            let field = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            match (shape.key(name), kind) {
                (None, _) => self.unknown(&field, name, value, shape, kind),
                (Some(key), Some(kind))
                    if key.name != "kind"
                        && !matches!(key.kind, Kind::Refused)
                        && !kind.keys().contains(&key.name) =>
                {
                    let at = self.map.locate_key(&field);
                    self.error(
                        &field,
                        at,
                        format!(
                            "not a key for kind \"{}\" (its keys: {})",
                            kind.as_str(),
                            kind.keys().join(", ")
                        ),
                    );
                }
                (Some(key), _) => self.value(&field, value, key),
            }
        }
    }

    fn unknown(
        &mut self,
        field: &str,
        name: &str,
        value: &toml::Value,
        shape: &'static Shape,
        kind: Option<ProviderKind>,
    ) {
        let what = if value.is_table() {
            "unknown table"
        } else {
            "unknown key"
        };
        let at = self.map.locate_key(field);
        let near = match kind {
            Some(kind) => did_you_mean(name, kind.keys().iter().copied()),
            None => did_you_mean(name, shape.names()),
        };
        if let Some(near) = near {
            let parent = field.rsplit_once('.').map(|(parent, _)| parent);
            self.found.suggested.push(match parent {
                Some(parent) => format!("{parent}.{near}"),
                None => near.to_string(),
            });
        }
        let message = match kind {
            Some(kind) => {
                let keys = kind.keys();
                match near {
                    Some(near) => format!(
                        "not a key for kind \"{}\", did you mean {near}? (its keys: {})",
                        kind.as_str(),
                        keys.join(", ")
                    ),
                    None => format!(
                        "not a key for kind \"{}\" (its keys: {})",
                        kind.as_str(),
                        keys.join(", ")
                    ),
                }
            }
            None => match near {
                Some(near) => format!("{what}, did you mean {}?", shown(shape, near)),
                None => match self.home_of(name, shape) {
                    Some(home) => format!("{what} here: {name} is a key of {home}"),
                    None => format!(
                        "{what}; {} takes {}",
                        shape.title,
                        shape
                            .names()
                            .map(|n| shown(shape, n))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
            },
        };
        self.error(field, at, message);
    }

    /// The other tables of the file that take a key `name`
    /// (`max_steps` at the top level belongs in `[limits]`).
    fn home_of(&self, name: &str, shape: &Shape) -> Option<String> {
        let mut homes = Vec::new();
        if !std::ptr::eq(shape, self.root) && self.root.key(name).is_some() {
            homes.push("the top level".to_string());
        }
        for key in self.root.keys {
            if let Kind::Table(inner) = key.kind
                && !std::ptr::eq(inner, shape)
                && inner.key(name).is_some()
            {
                homes.push(inner.title.to_string());
            }
        }
        (!homes.is_empty()).then(|| and_list(&homes))
    }

    fn value(&mut self, field: &str, value: &toml::Value, key: &Key) {
        use toml::Value as V;
        match (key.kind, value) {
            (Kind::Refused, _)
            | (Kind::Text(_), V::String(_))
            | (Kind::Bool, V::Boolean(_))
            | (Kind::Number, V::Integer(_) | V::Float(_))
            | (Kind::Duration, V::String(_))
            | (Kind::Size, V::Integer(_) | V::String(_))
            | (Kind::Paths, V::String(_)) => {}
            (Kind::Whole { min, max }, V::Integer(n)) => {
                if *n < min {
                    let least = if min == 0 {
                        "must not be negative".to_string()
                    } else {
                        format!("must be at least {min}")
                    };
                    self.value_error(field, format!("{least} (found {n})"));
                } else if *n > max {
                    self.value_error(field, format!("must be at most {max} (found {n})"));
                }
            }
            (Kind::Choice(values), V::String(text)) => {
                if !values.contains(&text.as_str()) {
                    let message = match did_you_mean(text, values.iter().copied()) {
                        Some(near) => format!(
                            "unknown value {text:?}, did you mean \"{near}\"? (one of {})",
                            quoted(values)
                        ),
                        None => format!("unknown value {text:?} (one of {})", quoted(values)),
                    };
                    self.value_error(field, message);
                }
            }
            (Kind::List { .. } | Kind::Argv { .. } | Kind::Paths, V::Array(items)) => {
                self.strings(field, items);
            }
            (Kind::Commands, V::Array(items)) => {
                let flat: Option<Vec<&str>> = items.iter().map(V::as_str).collect();
                match flat {
                    Some(words) if !words.is_empty() => self.value_error(
                        field,
                        format!(
                            "must be a list of commands, each a list of the program and its arguments, e.g. [{}] (found one list of strings)",
                            argv_example(&words.join(" "), "cargo fetch")
                        ),
                    ),
                    _ => {
                        for (index, item) in items.iter().enumerate() {
                            let element = format!("{field}[{index}]");
                            match item {
                                V::Array(words) => self.strings(&element, words),
                                other => self.value_error(
                                    &element,
                                    format!(
                                        "must be a list: the program and its arguments, e.g. {} (found {})",
                                        argv_example(other.as_str().unwrap_or(""), "cargo fetch"),
                                        found(other)
                                    ),
                                ),
                            }
                        }
                    }
                }
            }
            (Kind::Strings, V::Table(table)) => {
                for (name, item) in table {
                    if !item.is_str() {
                        self.value_error(
                            &format!("{field}.{name}"),
                            format!("must be a string (found {})", found(item)),
                        );
                    }
                }
            }
            (Kind::Table(shape), V::Table(table)) => self.table(field, table, shape),
            (kind, other) => {
                let message = format!("must be {} (found {})", expected(kind, other), found(other));
                self.value_error(field, message);
            }
        }
    }

    /// Each element of a list of strings.
    fn strings(&mut self, field: &str, items: &[toml::Value]) {
        for (index, item) in items.iter().enumerate() {
            if !item.is_str() {
                self.value_error(
                    &format!("{field}[{index}]"),
                    format!("must be a string (found {})", found(item)),
                );
            }
        }
    }
}

fn provider_kind(text: &str) -> Option<ProviderKind> {
    [
        ProviderKind::Script,
        ProviderKind::Openai,
        ProviderKind::Anthropic,
        ProviderKind::Command,
        ProviderKind::Oracle,
        ProviderKind::Noop,
    ]
    .into_iter()
    .find(|k| k.as_str() == text)
}

/// A key's name as a message shows it: `[limits]` for a table.
fn shown(shape: &Shape, name: &str) -> String {
    match shape.key(name).map(|k| k.kind) {
        Some(Kind::Table(_) | Kind::Strings) => format!("[{name}]"),
        _ => name.to_string(),
    }
}

/// What a key of `kind` must be, in words, with an example made from the
/// value given where that helps (`editable = "src/**/*.rs"`).
fn expected(kind: Kind, given: &toml::Value) -> String {
    let text = given.as_str().unwrap_or("");
    match kind {
        Kind::Text(what) => what.to_string(),
        Kind::Bool => "true or false".to_string(),
        Kind::Whole { .. } => "a whole number".to_string(),
        Kind::Number => "a number".to_string(),
        Kind::Duration => match given.as_integer() {
            Some(n) => format!("a duration with its unit, e.g. \"{n}s\" or \"{n}ms\""),
            None => "a duration such as \"90s\", \"15m\" or \"1h\"".to_string(),
        },
        Kind::Size => "a size such as 512, \"16KiB\" or \"1MiB\"".to_string(),
        Kind::Choice(values) => format!("one of {}", quoted(values)),
        Kind::List {
            noun,
            example,
            split,
        } => {
            let example = if split {
                argv_example(text, example)
            } else if text.trim().is_empty() {
                format!("[{example:?}]")
            } else {
                format!("[{text:?}]")
            };
            format!("a list of {noun}, e.g. {example}")
        }
        Kind::Argv { example } => format!(
            "a list: the program and its arguments, e.g. {}",
            argv_example(text, example)
        ),
        Kind::Commands => format!(
            "a list of commands, each a list of the program and its arguments, e.g. [{}]",
            argv_example(text, "cargo fetch")
        ),
        Kind::Paths => "a path or a list of paths".to_string(),
        Kind::Strings => "a table of strings (NAME = \"value\")".to_string(),
        Kind::Table(shape) => format!("a table ({})", shape.title),
        Kind::Refused => "absent".to_string(),
    }
}

/// `["cargo", "test"]` from `"cargo test"` (or from `fallback`).
fn argv_example(text: &str, fallback: &str) -> String {
    let text = if text.trim().is_empty() {
        fallback
    } else {
        text
    };
    let words: Vec<String> = text.split_whitespace().map(|w| format!("{w:?}")).collect();
    format!("[{}]", words.join(", "))
}

/// What was given instead, in words.
fn found(value: &toml::Value) -> String {
    match value {
        toml::Value::String(text) => {
            let short: String = text.chars().take(40).collect();
            let cut = if short.len() < text.len() { "…" } else { "" };
            format!("the string {short:?}{cut}")
        }
        toml::Value::Integer(n) => format!("the whole number {n}"),
        toml::Value::Float(f) => format!("the number {f}"),
        toml::Value::Boolean(b) => format!("{b}"),
        toml::Value::Datetime(d) => format!("the date {d}"),
        toml::Value::Array(_) => "a list".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
