//! One job folder: `job.toml`, `prompt.md`, `source/`, the hidden tests
//! (`tests/`) and the oracle (`oracle.jsonl` or `oracle.patch`). The
//! manifest is built as data and serialized by `toml`, so every string is
//! quoted as TOML quotes it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{ImportError, write_err};
use crate::manifest::Trace;

/// The manifest of an imported job, as written.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ManifestDraft {
    pub id: String,
    pub family: String,
    pub prompt_file: String,
    pub source: String,
    pub editable: Vec<String>,
    pub allow: Vec<String>,
    pub verify: Vec<String>,
    /// `full`: a benchmark run keeps what the model said (its transcript),
    /// for the viewer, the exports and `replay`.
    pub trace: Trace,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    pub acceptance: AcceptanceDraft,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<SetupDraft>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxDraft>,
    pub oracle: OracleDraft,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct AcceptanceDraft {
    pub dir: String,
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fail_to_pass: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass_to_pass: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct SetupDraft {
    pub commands: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct SandboxDraft {
    pub toolchains: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct OracleDraft {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

/// A job folder being written under `root` (`OUT/<id>/`).
#[derive(Debug)]
pub(crate) struct JobFiles {
    pub root: PathBuf,
}

impl JobFiles {
    /// Creates `out/<id>/` (which must not exist).
    pub(crate) fn create(out: &Path, id: &str) -> Result<JobFiles, ImportError> {
        let root = out.join(id);
        if root.exists() {
            return Err(ImportError::Exists(root));
        }
        fs::create_dir_all(&root).map_err(write_err(&root))?;
        Ok(JobFiles { root })
    }

    pub(crate) fn source(&self) -> PathBuf {
        self.root.join("source")
    }

    /// Writes `bytes` at `rel` under the job folder, making directories.
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), ImportError> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(write_err(parent))?;
        }
        fs::write(&path, bytes).map_err(write_err(&path))
    }

    /// Writes `job.toml`, with a header comment, and returns its path.
    pub(crate) fn manifest(
        &self,
        header: &str,
        draft: &ManifestDraft,
    ) -> Result<PathBuf, ImportError> {
        let body = toml::to_string(draft).map_err(|e| ImportError::Write {
            path: self.root.join("job.toml"),
            source: std::io::Error::other(e.to_string()),
        })?;
        let mut text = String::new();
        for line in header.lines() {
            text.push_str("# ");
            text.push_str(line);
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&body);
        let path = self.root.join("job.toml");
        fs::write(&path, text).map_err(write_err(&path))?;
        Ok(path)
    }
}

/// What `copy_filtered` leaves out: given an entry's relative path
/// (`/`-separated) and whether it is a directory.
pub(super) type Skip<'a> = &'a dyn Fn(&str, bool) -> bool;

/// Copies the regular files and directories of `from` into `to` (which
/// may exist), leaving out the entries `skip` names; symlinks are copied
/// as symlinks, modes kept.
pub(super) fn copy_filtered(from: &Path, to: &Path, skip: Skip<'_>) -> Result<(), ImportError> {
    fn walk(from: &Path, to: &Path, rel: &str, skip: Skip<'_>) -> Result<(), ImportError> {
        let dir = from.join(rel);
        let mut entries: Vec<_> = fs::read_dir(&dir)
            .map_err(|e| super::input(&dir, format!("cannot read: {e}")))?
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(String::from) else {
                continue;
            };
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let (src, dest) = (from.join(&child), to.join(&child));
            let kind = entry
                .file_type()
                .map_err(|e| super::input(&src, format!("cannot stat: {e}")))?;
            if skip(&child, kind.is_dir()) {
                continue;
            }
            if kind.is_dir() {
                fs::create_dir_all(&dest).map_err(write_err(&dest))?;
                walk(from, to, &child, skip)?;
            } else if kind.is_symlink() {
                let target = fs::read_link(&src)
                    .map_err(|e| super::input(&src, format!("cannot read link: {e}")))?;
                std::os::unix::fs::symlink(target, &dest).map_err(write_err(&dest))?;
            } else if kind.is_file() {
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent).map_err(write_err(parent))?;
                }
                fs::copy(&src, &dest).map_err(write_err(&dest))?;
            }
        }
        Ok(())
    }
    fs::create_dir_all(to).map_err(write_err(to))?;
    walk(from, to, "", skip)
}

/// An allow rule matching exactly `argv` (glob characters escaped).
pub(super) fn exact_rule(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| {
            arg.chars()
                .map(|c| match c {
                    '*' | '?' | '[' | ']' | '{' | '}' => format!("[{c}]"),
                    c => c.to_string(),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A scripted oracle: write each file, verify, finish.
pub(super) fn oracle_script(files: &[(String, String)]) -> String {
    let mut script = String::from("# The exercise's reference solution, as decisions.\n");
    for (path, content) in files {
        let line = serde_json::json!({"kind": "write_file", "path": path, "content": content});
        script.push_str(&line.to_string());
        script.push('\n');
    }
    script.push_str("{\"kind\":\"verify\"}\n");
    script.push_str("{\"kind\":\"finish\",\"summary\":\"the reference solution\"}\n");
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_rule_escapes_glob_characters() {
        let argv: Vec<String> = ["python3", "-m", "py_compile", "a[1].py"]
            .map(String::from)
            .to_vec();
        assert_eq!(exact_rule(&argv), "python3 -m py_compile a[[]1[]].py");
    }
}
