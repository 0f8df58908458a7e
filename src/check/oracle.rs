//! The oracle as scripted decisions: a script oracle is used as it is; a
//! patch oracle is applied to a copy of the source and turned into the
//! decisions a model would make to write the same files.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::manifest::{Manifest, Oracle, ProviderConfig, ScriptConfig};

/// Why an oracle cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OracleError {
    #[error("oracle {path}: {message}")]
    Patch { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The script file the check runs for `manifest`: the oracle's script, or
/// one written under `dir` (a patch oracle's decisions, or, without an
/// oracle, a single `finish`, so only the baseline is judged).
pub(crate) fn oracle_script(manifest: &Manifest, dir: &Path) -> Result<PathBuf, OracleError> {
    let (name, text) = match &manifest.oracle {
        Some(Oracle::Script(path)) => return Ok(path.clone()),
        Some(Oracle::Patch(path)) => (
            format!("{}.oracle.jsonl", manifest.id),
            patch_script(manifest, path)?,
        ),
        None => (
            format!("{}.no-oracle.jsonl", manifest.id),
            format!(
                "{}\n",
                json!({"kind": "finish", "summary": "no oracle: the source as it is"})
            ),
        ),
    };
    let path = dir.join(name);
    write_once(&path, &text)?;
    Ok(path)
}

/// `provider` as it runs `manifest`: kind `oracle` is the job's own oracle
/// (its script, or a patch oracle's decisions written under `dir`, with
/// the patch applied first; a job without one only finishes), kind `noop`
/// a single `finish` written under `dir`; any other as it is.
pub(crate) fn offline_provider(
    provider: &ProviderConfig,
    manifest: &Manifest,
    dir: &Path,
) -> Result<ProviderConfig, OracleError> {
    let script = match provider {
        ProviderConfig::Oracle => ScriptConfig {
            script: vec![oracle_script(manifest, dir)?],
            apply_first: oracle_applies_first(manifest),
            dialect: None,
        },
        ProviderConfig::Noop => {
            let path = dir.join("noop.jsonl");
            let text = format!(
                "{}\n",
                json!({"kind": "finish", "summary": "noop: finished at once"})
            );
            write_once(&path, &text)?;
            ScriptConfig {
                script: vec![path],
                apply_first: None,
                dialect: None,
            }
        }
        other => return Ok(other.clone()),
    };
    Ok(ProviderConfig::Script(script))
}

/// Writes `text` to `path` unless it holds it already (same text, same
/// file: a job's manifest and its hash stay the same across reruns).
fn write_once(path: &Path, text: &str) -> Result<(), OracleError> {
    let write = |e| OracleError::Write {
        path: path.to_path_buf(),
        source: e,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write)?;
    }
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).map_err(write)?;
    }
    Ok(())
}

/// The patch the runner applies to the check run's workspace before the
/// oracle's decisions: a patch oracle (so the files it deletes are
/// deleted, which decisions cannot do; the files it writes are written
/// again by the decisions, with the same bytes).
pub(crate) fn oracle_applies_first(manifest: &Manifest) -> Option<PathBuf> {
    match &manifest.oracle {
        Some(Oracle::Patch(path)) => Some(path.clone()),
        _ => None,
    }
}

/// Applies the patch at `path` to a copy of the source and returns the
/// decisions that write every file it changes, then verify and finish.
fn patch_script(manifest: &Manifest, path: &Path) -> Result<String, OracleError> {
    let written = patched_files(manifest, path)?;
    let mut script = String::from("# Generated from the job's [oracle] patch.\n");
    for (file, content) in &written {
        script
            .push_str(&json!({"kind": "write_file", "path": file, "content": content}).to_string());
        script.push('\n');
    }
    script.push_str(&json!({"kind": "verify"}).to_string());
    script.push('\n');
    script.push_str(&json!({"kind": "finish", "summary": "the oracle's patch"}).to_string());
    script.push('\n');
    Ok(script)
}

/// The files the patch oracle at `path` writes, each with its content
/// once the patch is applied to a copy of the source.
pub(super) fn patched_files(
    manifest: &Manifest,
    path: &Path,
) -> Result<Vec<(String, String)>, OracleError> {
    let fail = |message: String| OracleError::Patch {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let copy = tempfile::Builder::new()
        .prefix("agent-runtime-oracle-")
        .tempdir()
        .map_err(|e| fail(format!("cannot make a scratch copy: {e}")))?;
    let root = copy.path().join("src");
    crate::beneath::copy_tree(&manifest.source, &root, &["target"])
        .map_err(|e| fail(format!("cannot copy the source: {e}")))?;
    let editable = crate::agent::editable_set(&manifest.editable)
        .map_err(|e| fail(format!("bad editable globs: {e}")))?;
    let applied = crate::runner::apply_patch(&root, &text, &editable)
        .map_err(|e| fail(format!("does not apply to the source: {e}")))?;
    // Deletions are made by the runner's trusted step (see
    // [`oracle_applies_first`]); the decisions write the rest.
    let written = applied.written;
    if written.is_empty() && applied.deleted.is_empty() {
        return Err(fail("changes no file".into()));
    }
    if written.is_empty() {
        return Err(fail(format!(
            "only deletes files ({}): the oracle's decisions must write one",
            applied.deleted.join(", ")
        )));
    }
    // A link the patch makes is made by the runner's trusted step too: a
    // decision writing the file would replace the link with its target's
    // bytes.
    let is_link = |file: &String| {
        std::fs::symlink_metadata(root.join(file)).is_ok_and(|m| m.file_type().is_symlink())
    };
    written
        .into_iter()
        .filter(|file| !is_link(file))
        .map(|file| {
            let content = std::fs::read_to_string(root.join(&file))
                .map_err(|e| fail(format!("{file}: cannot read the patched file: {e}")))?;
            Ok((file, content))
        })
        .collect()
}
