//! The shape, the deserializer (`raw.rs`) and `docs/manifest.md` name the
//! same keys and values: each shape key is accepted with a value of its
//! kind, each table refuses exactly the keys the shape does not list, each
//! choice is the enum's set of values, and every key table of the docs
//! lists what the shape says.

use std::collections::BTreeSet;

use super::*;
use crate::manifest::ProviderKind;
use crate::manifest::raw::{RawManifest, RawProviderFile};

/// A value of `kind` the deserializer accepts.
fn sample(kind: Kind) -> toml::Value {
    match kind {
        Kind::Text(_) | Kind::Paths | Kind::Refused => "x".into(),
        Kind::Duration => "1s".into(),
        Kind::Bool => true.into(),
        Kind::Whole { .. } | Kind::Size => 1.into(),
        Kind::Number => 1.5.into(),
        Kind::Choice(values) => values[0].into(),
        Kind::List { .. } | Kind::Argv { .. } => toml::Value::Array(vec!["x".into()]),
        Kind::Commands => toml::Value::Array(vec![toml::Value::Array(vec!["x".into()])]),
        Kind::Strings => toml::Value::Table(toml::Table::from_iter([("A".into(), "x".into())])),
        Kind::Table(shape) => toml::Value::Table(full(shape)),
    }
}

/// A table setting every key of `shape`.
fn full(shape: &Shape) -> toml::Table {
    shape
        .keys
        .iter()
        .map(|k| (k.name.to_string(), sample(k.kind)))
        .collect()
}

/// The backquoted names after "expected" in a deserializer's message.
fn expected_names(message: &str) -> BTreeSet<String> {
    let Some((_, list)) = message.split_once("expected") else {
        panic!("no list in {message:?}");
    };
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Every table of `root` as (path, shape).
fn tables(root: &'static Shape) -> Vec<(Vec<&'static str>, &'static Shape)> {
    let mut out = vec![(Vec::new(), root)];
    for key in root.keys {
        if let Kind::Table(inner) = key.kind {
            out.push((vec![key.name], inner));
        }
    }
    out
}

fn at<'a>(table: &'a mut toml::Table, path: &[&str]) -> &'a mut toml::Table {
    let mut current = table;
    for part in path {
        current = current
            .get_mut(*part)
            .and_then(toml::Value::as_table_mut)
            .unwrap();
    }
    current
}

fn deserializer_agrees<T: serde::de::DeserializeOwned + std::fmt::Debug>(root: &'static Shape) {
    toml::Value::Table(full(root))
        .try_into::<T>()
        .unwrap_or_else(|e| panic!("{}: a value of every kind is refused: {e}", root.title));
    for (path, shape) in tables(root) {
        let mut doc = full(root);
        at(&mut doc, &path).insert("zz_unknown".into(), 1.into());
        let err = toml::Value::Table(doc).try_into::<T>().unwrap_err();
        let wanted: BTreeSet<String> = shape.keys.iter().map(|k| k.name.to_string()).collect();
        assert_eq!(
            expected_names(err.message()),
            wanted,
            "{}: the deserializer's keys",
            shape.title
        );
        for key in shape.keys {
            let Kind::Choice(values) = key.kind else {
                continue;
            };
            let mut doc = full(root);
            at(&mut doc, &path).insert(key.name.into(), "zz_unknown".into());
            let err = toml::Value::Table(doc).try_into::<T>().unwrap_err();
            let wanted: BTreeSet<String> = values.iter().map(|v| v.to_string()).collect();
            assert_eq!(
                expected_names(err.message()),
                wanted,
                "{} {}: the values",
                shape.title,
                key.name
            );
        }
    }
}

#[test]
fn the_shape_and_the_deserializer_take_the_same_keys_and_values() {
    deserializer_agrees::<RawManifest>(&MANIFEST);
    deserializer_agrees::<RawProviderFile>(&PROVIDER_FILE);
    for kind in [
        ProviderKind::Script,
        ProviderKind::Openai,
        ProviderKind::Anthropic,
        ProviderKind::Command,
    ] {
        for key in kind.keys() {
            assert!(PROVIDER.key(key).is_some(), "{key} of {}", kind.as_str());
        }
    }
}

/// Per `## ` section of docs/manifest.md, the keys its table lists (the
/// first backquoted cell of each row; for `[provider]`, `kind key` pairs).
fn documented() -> Vec<(String, BTreeSet<String>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/manifest.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Vec<(String, BTreeSet<String>)> = Vec::new();
    let mut kind = String::new();
    for line in text.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            out.push((title.to_string(), BTreeSet::new()));
            continue;
        }
        let Some((section, keys)) = out.last_mut() else {
            continue;
        };
        if !line.starts_with("| ") || line.starts_with("|---") {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let cell = |i: usize| cells.get(i).map(|c| c.trim_matches('`').to_string());
        if section.starts_with("`[provider]`") {
            if let Some(k) = cell(1).filter(|k| !k.is_empty()) {
                kind = k;
            }
            if let Some(key) = cell(2).filter(|k| !k.contains(' ') && k != "key") {
                keys.insert(format!("{kind} {key}"));
            }
        } else if let Some(key) = cell(1).filter(|_| cells[1].starts_with('`')) {
            keys.insert(key);
        }
    }
    out
}

fn section<'a>(docs: &'a [(String, BTreeSet<String>)], title: &str) -> &'a BTreeSet<String> {
    &docs
        .iter()
        .find(|(t, _)| t.starts_with(title))
        .unwrap_or_else(|| panic!("docs/manifest.md has no section {title}"))
        .1
}

#[test]
fn docs_manifest_md_lists_every_key_of_every_table() {
    let docs = documented();
    let top: BTreeSet<String> = MANIFEST
        .keys
        .iter()
        .filter(|k| !matches!(k.kind, Kind::Table(_) | Kind::Strings))
        .map(|k| k.name.to_string())
        .collect();
    assert_eq!(section(&docs, "Top-level keys"), &top);
    for key in MANIFEST.keys {
        let Kind::Table(shape) = key.kind else {
            continue;
        };
        if std::ptr::eq(shape, &PROVIDER) {
            continue;
        }
        let wanted: BTreeSet<String> = shape.names().map(str::to_string).collect();
        assert_eq!(
            section(&docs, &format!("`{}`", shape.title)),
            &wanted,
            "{}",
            shape.title
        );
    }
    let mut wanted = BTreeSet::new();
    for kind in [
        ProviderKind::Script,
        ProviderKind::Openai,
        ProviderKind::Anthropic,
        ProviderKind::Command,
    ] {
        for key in kind.keys() {
            wanted.insert(format!("{} {key}", kind.as_str()));
        }
    }
    assert_eq!(section(&docs, "`[provider]`"), &wanted);
}
