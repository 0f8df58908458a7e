//! The module graph: the providers never depend on the agent loop (it
//! depends on them), the decision module depends on neither, and the
//! language table runs nothing and reads no file.

use std::path::Path;

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
    out
}

fn assert_no_use(module: &str, forbidden: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(module);
    let files = sources(&dir);
    assert!(!files.is_empty(), "no sources under {}", dir.display());
    for (path, text) in files {
        for needle in forbidden {
            assert!(
                !text.contains(needle),
                "{path} uses {needle}: {module} must not depend on it"
            );
        }
    }
}

#[test]
fn providers_do_not_depend_on_the_agent_loop() {
    assert_no_use("provider", &["crate::agent", "super::super::agent"]);
}

#[test]
fn the_decision_module_is_a_leaf() {
    assert_no_use(
        "decision",
        &[
            "crate::agent",
            "crate::provider",
            "crate::runner",
            "crate::batch",
        ],
    );
}

#[test]
fn the_language_table_is_pure() {
    assert_no_use(
        "lang",
        &[
            "crate::runner",
            "crate::exec",
            "crate::agent",
            "std::fs",
            "std::process",
        ],
    );
}
