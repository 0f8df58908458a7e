//! A setup's declared inputs: the files of the source the language table
//! names (lock and manifest files), which are all a shared setup may read
//! and all its cache key is taken from. Jobs whose inputs say the same
//! (after the language's normalization: a crate's name is not a
//! dependency) share one cache.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSetBuilder};

use crate::lang::Tooling;

/// Directories never searched for inputs: build outputs and tool caches.
const SKIP_DIRS: &[&str] = &[
    ".git",
    "target",
    "node_modules",
    "__pycache__",
    ".venv",
    ".tox",
];
/// How deep and how many entries the search goes.
const MAX_DEPTH: usize = 16;
const MAX_ENTRIES: usize = 100_000;
/// Largest input file read for the key.
const MAX_INPUT: u64 = 16 << 20;

/// The inputs of a job's shared setup.
#[derive(Debug, Clone)]
pub(crate) struct SetupInputs {
    pub tooling: &'static dyn Tooling,
    /// Relative to the source root, `/`-separated, sorted.
    pub files: Vec<String>,
}

impl SetupInputs {
    /// The files of `source` that `tooling` names as setup inputs, and
    /// those the job's `[setup] inputs` globs add (symlinks and unreadable
    /// entries left out).
    pub(crate) fn find(
        source: &Path,
        tooling: &'static dyn Tooling,
        extra: &[String],
    ) -> SetupInputs {
        let mut builder = GlobSetBuilder::new();
        let named = tooling.setup_inputs().iter().copied();
        for glob in named.chain(extra.iter().map(String::as_str)) {
            if let Ok(g) = GlobBuilder::new(glob).literal_separator(true).build() {
                builder.add(g);
            }
        }
        let globs = builder.build().unwrap_or_default();
        let mut files = Vec::new();
        let mut seen = 0usize;
        let mut stack = vec![(PathBuf::new(), 0usize)];
        while let Some((rel, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(source.join(&rel)) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MAX_ENTRIES {
                    break;
                }
                let name = entry.file_name();
                let child = rel.join(&name);
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    let skip = name.to_str().is_none_or(|n| SKIP_DIRS.contains(&n));
                    if !skip && depth + 1 < MAX_DEPTH {
                        stack.push((child, depth + 1));
                    }
                } else if kind.is_file()
                    && let Some(text) = child.to_str()
                    && globs.is_match(text)
                {
                    files.push(text.to_string());
                }
            }
        }
        files.sort();
        SetupInputs { tooling, files }
    }

    /// What the key hashes: each input's name and the part of its text
    /// that decides the setup, in name order.
    pub(crate) fn key_material(&self, source: &Path) -> Vec<(String, String)> {
        self.files
            .iter()
            .map(|rel| {
                let text = read_capped(&source.join(rel));
                let kept = match &text {
                    Ok(text) => self.tooling.setup_key_text(rel, text),
                    Err(e) => format!("<unreadable: {e}>"),
                };
                (rel.clone(), kept)
            })
            .collect()
    }

    /// Makes `dest` (which must not exist) a copy of the inputs, plus the
    /// empty files the language needs beside them.
    pub(crate) fn copy_to(&self, source: &Path, dest: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dest)?;
        for rel in &self.files {
            let to = dest.join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::copy(source.join(rel), &to)?;
        }
        for rel in self.tooling.setup_scaffold(&self.files) {
            let to = dest.join(&rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            if !to.exists() {
                std::fs::write(&to, "")?;
            }
        }
        Ok(())
    }
}

fn read_capped(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_INPUT)
        .read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_the_named_files_only_and_the_copy_gets_a_scaffold() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        for (rel, text) in [
            (
                "Cargo.toml",
                "[package]\nname = \"a\"\n[dependencies]\nrand = \"0.8\"\n",
            ),
            ("src/lib.rs", "pub fn secret() {}"),
            ("member/Cargo.toml", "[package]\nname = \"m\"\n"),
            ("target/x/Cargo.toml", "ignored"),
        ] {
            let path = src.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let rust = crate::lang::tooling("rust").unwrap();
        let inputs = SetupInputs::find(&src, rust, &[]);
        assert_eq!(inputs.files, ["Cargo.toml", "member/Cargo.toml"]);
        let copy = dir.path().join("copy");
        inputs.copy_to(&src, &copy).unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.join("src/lib.rs")).unwrap(),
            ""
        );
        assert!(copy.join("member/src/lib.rs").is_file());
        assert!(!copy.join("target").exists());
    }
}
