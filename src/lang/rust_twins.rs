//! Rust's twins: a `#[test]` function copied with its attributes under a
//! fresh name, its body run as a closure (an early `return` returns from
//! the closure) and followed by a `panic!` carrying the twin's token. A
//! test returning a `Result` has its closure's error returned with `?`,
//! so the twin fails without its token where the test fails. A twin goes
//! in the module of its test, at a random place among that module's
//! tests. No twin is made of a test that must panic (`should_panic`), of
//! an `async` test, or of one whose return type is neither `()` nor a
//! `Result`.

use super::canary::style_of;
use super::rust_scan::{Scan, TestFn, scan};
use super::twins::{
    Edit, Names, Twin, Twinned, Wanted, apply, draw_token, twin_message, word_count,
};

/// The twins of the tests of `text` (the integration target `target`),
/// as [`Wanted`] says; every test whose name appears nowhere else (in
/// `text` or `also`) is renamed.
pub(super) fn plant(
    target: &str,
    text: &str,
    wanted: Wanted<'_>,
    also: &str,
    rng: &mut fastrand::Rng,
) -> Option<Twinned> {
    let found: Scan = scan(text);
    if found.fns.is_empty() {
        return None;
    }
    let inventory = |path: &str| format!("test/{target}::{path}");
    let own: Vec<&str> = found.fns.iter().map(|f| f.name.as_str()).collect();
    let mut names = Names::new(style_of(&own, ""), &own);
    let mut twinned = Twinned::default();
    let mut edits = Vec::new();
    for f in &found.fns {
        if word_count(text, &f.name) == 1 && word_count(also, &f.name) == 0 {
            let name = names.draw(text, rng);
            edits.push(Edit::replace(f.name_at, f.name.len(), name.clone()));
            twinned
                .renamed
                .push((inventory(&path_with(f, &name)), inventory(&f.path)));
        }
    }
    for f in &found.fns {
        let real = inventory(&f.path);
        let count = wanted(&real);
        if count == 0 {
            continue;
        }
        let Some(ret) = twin_shape(text, f) else {
            twinned.refused.push((
                real,
                "a test that must panic, is async, or returns neither () nor a Result".into(),
            ));
            continue;
        };
        let slots: Vec<&super::rust_scan::Slot> = found
            .slots
            .iter()
            .filter(|s| s.modules == f.modules)
            .collect();
        if slots.is_empty() {
            continue;
        }
        for _ in 0..count {
            let name = names.draw(text, rng);
            let token = draw_token(rng);
            let message = twin_message(&token, rng);
            let Some(block) = twin_text(text, f, &name, ret, &message) else {
                continue;
            };
            let slot = slots[rng.usize(..slots.len())];
            let indent = "    ".repeat(slot.modules.len());
            let insert = if slot.before {
                format!("{block}\n\n{indent}")
            } else {
                format!("\n\n{indent}{block}")
            };
            edits.push(Edit::insert(slot.at.min(text.len()), insert));
            twinned.twins.push(Twin {
                name: inventory(&path_with(f, &name)),
                of: real.clone(),
                token,
            });
        }
    }
    twinned.text = apply(text, edits)?;
    Some(twinned)
}

/// The path of `f` under another name.
fn path_with(f: &TestFn, name: &str) -> String {
    let mut parts = f.modules.clone();
    parts.push(name.to_string());
    parts.join("::")
}

/// The return type of a test a twin can be made of: `Some(None)` for
/// `()`, `Some(Some(ty))` for a `Result`.
fn twin_shape<'t>(text: &'t str, f: &TestFn) -> Option<Option<&'t str>> {
    if f.is_async
        || f.attrs
            .iter()
            .any(|a| a == "should_panic" || a.starts_with("should_panic("))
    {
        return None;
    }
    let signature = text.get(f.name_at + f.name.len()..f.body_open)?.trim();
    let rest = signature.strip_prefix("()")?.trim();
    if rest.is_empty() {
        return Some(None);
    }
    let ty = rest.strip_prefix("->")?.trim();
    match ty {
        "()" => Some(None),
        _ if ty.contains("Result") && !ty.contains("where") => Some(Some(ty)),
        _ => None,
    }
}

/// The twin of `f`: its attributes and qualifiers as written, a fresh
/// name, its body as a closure, then the failure.
fn twin_text(
    text: &str,
    f: &TestFn,
    name: &str,
    ret: Option<&str>,
    message: &str,
) -> Option<String> {
    let head = text.get(f.start..f.name_at)?;
    let body = text.get(f.body_open..f.end)?;
    let indent: String = {
        let line_start = text[..f.start].rfind('\n').map_or(0, |i| i + 1);
        text[line_start..f.start]
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect()
    };
    let allow = "#![allow(unreachable_code, clippy::redundant_closure_call, clippy::diverging_sub_expression)]";
    Some(match ret {
        None => format!(
            "{head}{name}() {{\n{indent}    {allow}\n{indent}    let () = (|| {body})();\n{indent}    panic!({message:?});\n{indent}}}"
        ),
        Some(ty) => format!(
            "{head}{name}() -> {ty} {{\n{indent}    {allow}\n{indent}    (|| -> {ty} {body})()?;\n{indent}    panic!({message:?})\n{indent}}}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "use x::sum;\n\n#[test]\nfn sums_to_n() {\n    if sum(0) == 0 {\n        return;\n    }\n    assert_eq!(sum(4), 10);\n}\n\n#[test]\n#[should_panic]\nfn panics() {\n    sum(u64::MAX);\n}\n\n#[test]\nfn fallible() -> Result<(), String> {\n    sum(1);\n    Ok(())\n}\n\nmod inner {\n    #[test]\n    #[ignore]\n    fn deep() {}\n}\n";

    #[test]
    fn twins_run_the_body_then_panic_and_every_test_is_renamed() {
        for seed in 0..30 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let t = plant("acceptance", TEXT, &|_| 1, "", &mut rng).unwrap();
            assert_eq!(t.renamed.len(), 4, "{}", t.text);
            for old in ["fn sums_to_n(", "fn panics(", "fn fallible(", "fn deep("] {
                assert!(!t.text.contains(old), "{}", t.text);
            }
            assert_eq!(t.twins.len(), 3, "{}", t.text);
            assert_eq!(t.refused.len(), 1);
            assert_eq!(t.refused[0].0, "test/acceptance::panics");
            let deep = t
                .twins
                .iter()
                .find(|w| w.of == "test/acceptance::inner::deep")
                .unwrap();
            assert!(deep.name.starts_with("test/acceptance::inner::"));
            // Every test and twin is one the scan finds, in its module.
            let found = scan(&t.text);
            assert_eq!(found.tests.len(), 4 + 3, "{}", t.text);
            assert_eq!(
                found
                    .tests
                    .iter()
                    .filter(|p| p.starts_with("inner::"))
                    .count(),
                2
            );
            assert!(t.text.contains("(|| -> Result<(), String> {"), "{}", t.text);
            for twin in &t.twins {
                assert!(t.text.contains(&twin.token));
            }
        }
    }
}
