//! Embeds the bundled jobs (`jobs/*.toml` and the fixtures, hidden tests and
//! scripts under `evaluation/` they point to, and the demo's own job that
//! fails on purpose in `evaluation/demo/`) in the binary, so `demo` works
//! from an installed binary with no checkout beside it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The trees `demo` needs, relative to the crate root.
const TREES: [&str; 5] = [
    "jobs",
    "evaluation/fixtures",
    "evaluation/acceptance",
    "evaluation/scripts",
    "evaluation/demo",
];

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let mut files = Vec::new();
    for tree in TREES {
        println!("cargo:rerun-if-changed={tree}");
        collect(&root, &root.join(tree), &mut files);
    }
    files.sort();
    let mut out = String::from(
        "/// `(path relative to the crate root, contents)` of every bundled file.\n\
         pub(crate) static BUNDLED: &[(&str, &[u8])] = &[\n",
    );
    for (rel, abs) in &files {
        let _ = writeln!(out, "    ({rel:?}, include_bytes!({abs:?})),");
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("bundled.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        // Fails the build with this message.
        println!("cargo::error=cannot write {}: {e}", dest.display());
    }
}

/// Every file under `dir` (build outputs and hidden entries left out), as
/// `(relative path, absolute path)`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "__pycache__" {
            continue;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(root, &path, out);
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            out.push((
                rel.to_string_lossy().into_owned(),
                path.to_string_lossy().into_owned(),
            ));
        }
    }
}
