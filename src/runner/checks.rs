//! Baseline and acceptance runs: the acceptance command on a clean copy of
//! the pristine source (plus, for acceptance, the agent's patch), with the
//! acceptance dir overlaid. The agent never sees these copies.
//!
//! The copies go through directory descriptors ([`crate::beneath`]): names
//! are carried exactly, symlinks are copied as symlinks and never followed,
//! and the source and the acceptance dir are only ever read.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::commands::{AttemptCommands, policy_for};
use super::patch::{PatchError, apply_patch};
use crate::agent::copy_tree;
use crate::beneath::{AtPath, overlay};
use crate::cancel::CancelToken;
use crate::exec::{AllowList, ExecError, ExecOutcome};
use crate::manifest::{Acceptance, Manifest};

/// Failures preparing a check (not a verdict).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("failed to prepare {}: {source}", .path.display())]
    Prepare {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to copy {} to {}: {source}", .from.display(), .to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: AtPath,
    },
    #[error("failed to apply the agent's patch: {0}")]
    Patch(#[from] PatchError),
    #[error("bad acceptance command: {0}")]
    Rule(String),
    #[error(transparent)]
    Exec(#[from] ExecError),
}

/// A check's run: what the executor reported.
#[derive(Debug)]
pub struct CheckRun {
    pub outcome: ExecOutcome,
}

impl CheckRun {
    pub fn passed(&self) -> bool {
        self.outcome.success()
    }
}

/// Builds `dir` afresh: pristine source, then `patch` (editable paths
/// only), then the acceptance dir on top; runs the acceptance command there
/// and writes its output to `log`.
pub fn run_check(
    manifest: &Manifest,
    acceptance: &Acceptance,
    dir: &Path,
    patch: Option<&str>,
    log: &Path,
    data_root: &Path,
    cancel: &CancelToken,
) -> Result<CheckRun, CheckError> {
    let prepare = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckError::Prepare { path, source }
    };
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(prepare(dir))?;
    }
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent).map_err(prepare(parent))?;
    }
    let copy = |from: &Path| {
        let (from, to) = (from.to_path_buf(), dir.to_path_buf());
        move |source| CheckError::Copy { from, to, source }
    };
    copy_tree(&manifest.source, dir).map_err(copy(&manifest.source))?;
    if let Some(patch) = patch {
        let editable = crate::agent::editable_set(&manifest.editable)
            .map_err(|e| CheckError::Rule(e.to_string()))?;
        apply_patch(dir, patch, &editable)?;
    }
    overlay(&acceptance.dir, dir).map_err(copy(&acceptance.dir))?;

    let allow =
        AllowList::exact(&acceptance.command).map_err(|e| CheckError::Rule(e.to_string()))?;
    let policy = policy_for(manifest, vec![data_root.to_path_buf()]);
    let deadline = Instant::now() + manifest.limits.command_timeout;
    let commands = AttemptCommands::new(manifest, dir, allow, policy, deadline);
    let outcome = commands.run_argv(&acceptance.command, cancel)?;
    let mut text = format!(
        "$ {}\nexit={} signal={} timed_out={} duration_ms={}\n",
        acceptance.command.join(" "),
        outcome.exit_code.map_or("-".into(), |c| c.to_string()),
        outcome.signal.map_or("-".into(), |s| s.to_string()),
        outcome.timed_out,
        outcome.duration.as_millis()
    );
    text.push_str("--- stdout ---\n");
    text.push_str(&outcome.stdout.to_text());
    text.push_str("\n--- stderr ---\n");
    text.push_str(&outcome.stderr.to_text());
    text.push('\n');
    if let Some(parent) = log.parent() {
        fs::create_dir_all(parent).map_err(prepare(parent))?;
    }
    fs::write(log, text).map_err(prepare(log))?;
    Ok(CheckRun { outcome })
}
