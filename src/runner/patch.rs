//! The agent's patch: a unified diff of the editable files of the workspace
//! against the pristine source, and applying it (editable paths only) onto a
//! clean copy for acceptance.

use std::fs;
use std::path::{Path, PathBuf};

use diffy::patch_set::{FileOperation, ParseOptions, PatchSet};
use globset::GlobSet;

/// A computed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub text: String,
    pub files: Vec<String>,
}

/// Failures computing or applying a patch.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("failed to read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("patch does not parse: {0}")]
    Parse(String),
    #[error("patch touches {0:?}, which is not editable")]
    NotEditable(String),
    #[error("patch path {0:?} is not a plain relative path")]
    BadPath(String),
    #[error("patch does not apply to {path}: {message}")]
    Apply { path: String, message: String },
}

/// Relative paths of regular files under `root` that match `editable`.
fn editable_files(root: &Path, editable: &GlobSet) -> Result<Vec<String>, PatchError> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let entries = fs::read_dir(&dir).map_err(|source| PatchError::Read {
            path: dir.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| PatchError::Read {
                path: dir.clone(),
                source,
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = format!("{prefix}{name}");
            let file_type = entry.file_type().map_err(|source| PatchError::Read {
                path: entry.path(),
                source,
            })?;
            if file_type.is_dir() {
                if name != ".git" && name != "target" {
                    stack.push((entry.path(), format!("{rel}/")));
                }
            } else if file_type.is_file() && editable.is_match(&rel) {
                out.push(rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read_text(path: &Path) -> Result<Option<String>, PatchError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PatchError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Diffs every editable file of `workspace` against `pristine`. Files only
/// in the pristine source are left alone (the agent cannot delete files).
pub fn diff_editable(
    pristine: &Path,
    workspace: &Path,
    editable: &GlobSet,
) -> Result<Patch, PatchError> {
    let mut text = String::new();
    let mut files = Vec::new();
    for rel in editable_files(workspace, editable)? {
        let before = read_text(&pristine.join(&rel))?;
        let after = read_text(&workspace.join(&rel))?.unwrap_or_default();
        if before.as_deref() == Some(after.as_str()) {
            continue;
        }
        let mut options = diffy::DiffOptions::new();
        match &before {
            Some(_) => options.set_original_filename(format!("a/{rel}")),
            None => options.set_original_filename("/dev/null"),
        };
        options.set_modified_filename(format!("b/{rel}"));
        let patch = options.create_patch(before.as_deref().unwrap_or(""), &after);
        text.push_str(&patch.to_string());
        files.push(rel);
    }
    Ok(Patch { text, files })
}

/// Applies `text` onto `root`, refusing any path that is not editable.
/// Returns the files written.
pub fn apply_patch(root: &Path, text: &str, editable: &GlobSet) -> Result<Vec<String>, PatchError> {
    let mut written = Vec::new();
    if text.trim().is_empty() {
        return Ok(written);
    }
    for file in PatchSet::parse(text, ParseOptions::unidiff()) {
        let file = file.map_err(|e| PatchError::Parse(e.to_string()))?;
        let (rel, create) = match file.operation() {
            FileOperation::Create(path) => (strip_b(path)?, true),
            FileOperation::Modify { modified, .. } => (strip_b(modified)?, false),
            _ => {
                return Err(PatchError::Parse(
                    "only file creations and modifications are expected".into(),
                ));
            }
        };
        if !editable.is_match(&rel) {
            return Err(PatchError::NotEditable(rel));
        }
        let patch = file
            .patch()
            .as_text()
            .ok_or_else(|| PatchError::Parse(format!("{rel}: binary patch")))?;
        let target = root.join(&rel);
        let base = if create {
            String::new()
        } else {
            read_text(&target)?.unwrap_or_default()
        };
        let updated = diffy::apply(&base, patch).map_err(|e| PatchError::Apply {
            path: rel.clone(),
            message: e.to_string(),
        })?;
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).map_err(|source| PatchError::Write {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        fs::write(&target, updated).map_err(|source| PatchError::Write {
            path: target.clone(),
            source,
        })?;
        written.push(rel);
    }
    Ok(written)
}

/// `b/src/lib.rs` → `src/lib.rs`, refusing anything that could leave the root.
fn strip_b(path: &str) -> Result<String, PatchError> {
    let rel = path.strip_prefix("b/").unwrap_or(path);
    let ok = !rel.is_empty()
        && !rel.starts_with('/')
        && rel
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && c != ".git");
    if ok {
        Ok(rel.to_string())
    } else {
        Err(PatchError::BadPath(path.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::editable_set;

    #[test]
    fn diff_then_apply_reproduces_the_editable_changes_only() {
        let tmp = tempfile::tempdir().unwrap();
        let (pristine, ws, clean) = (
            tmp.path().join("p"),
            tmp.path().join("w"),
            tmp.path().join("c"),
        );
        for root in [&pristine, &ws, &clean] {
            fs::create_dir_all(root.join("src")).unwrap();
            fs::create_dir_all(root.join("tests")).unwrap();
            fs::write(root.join("src/lib.rs"), "a\nb\n1..n\nc\n").unwrap();
            fs::write(root.join("tests/t.rs"), "assert!(true)\n").unwrap();
        }
        fs::write(ws.join("src/lib.rs"), "a\nb\n1..=n\nc\n").unwrap();
        fs::write(ws.join("src/new.rs"), "pub fn x() {}\n").unwrap();
        fs::write(ws.join("tests/t.rs"), "tampered\n").unwrap();
        let editable = editable_set(&["src/**/*.rs".to_string()]).unwrap();

        let patch = diff_editable(&pristine, &ws, &editable).unwrap();
        assert_eq!(patch.files, ["src/lib.rs", "src/new.rs"]);
        assert!(patch.text.contains("-1..n\n+1..=n"));
        assert!(!patch.text.contains("tampered"));

        let written = apply_patch(&clean, &patch.text, &editable).unwrap();
        assert_eq!(written, ["src/lib.rs", "src/new.rs"]);
        assert_eq!(
            fs::read_to_string(clean.join("src/lib.rs")).unwrap(),
            "a\nb\n1..=n\nc\n"
        );
        assert_eq!(
            fs::read_to_string(clean.join("src/new.rs")).unwrap(),
            "pub fn x() {}\n"
        );
        assert_eq!(
            fs::read_to_string(clean.join("tests/t.rs")).unwrap(),
            "assert!(true)\n"
        );
    }

    #[test]
    fn a_patch_touching_non_editable_paths_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let text = "--- a/tests/t.rs\n+++ b/tests/t.rs\n@@ -1 +1 @@\n-x\n+y\n";
        let editable = editable_set(&["src/**".to_string()]).unwrap();
        assert!(matches!(
            apply_patch(tmp.path(), text, &editable),
            Err(PatchError::NotEditable(_))
        ));
        let escape = "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-x\n+y\n";
        let all = editable_set(&["**".to_string()]).unwrap();
        assert!(matches!(
            apply_patch(tmp.path(), escape, &all),
            Err(PatchError::BadPath(_))
        ));
    }

    #[test]
    fn no_changes_no_patch() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("p/src")).unwrap();
        fs::write(tmp.path().join("p/src/a.rs"), "x").unwrap();
        crate::agent::copy_tree(&tmp.path().join("p"), &tmp.path().join("w")).unwrap();
        let editable = editable_set(&["**".to_string()]).unwrap();
        let patch = diff_editable(&tmp.path().join("p"), &tmp.path().join("w"), &editable).unwrap();
        assert!(patch.text.is_empty() && patch.files.is_empty());
    }
}
