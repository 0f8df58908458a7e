//! What a data dir keeps of finished attempts: their workspaces and check
//! copies (with their build dirs) are the bulk of it, and are removed by
//! policy; artifacts under `DATA/runs/` (`patch.diff`, the runner's copy of
//! the changed files in `files/` and `files.json`, logs, transcript) always
//! stay. Nothing of an attempt that is queued or running is touched, so an
//! attempt resumed after a crash still finds its workspace (for the patch)
//! and its copy (for acceptance).

use std::path::PathBuf;
use std::str::FromStr;

use super::data_dir::DataDir;
use crate::protocol::Outcome;
use crate::state::{JobState, State};

/// `--keep`: whose workspaces and build dirs stay after an attempt ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// Those of failed attempts (to look into); succeeded ones are removed.
    #[default]
    Failed,
    /// Everything.
    All,
    /// Nothing: only the artifacts under `DATA/runs/`.
    None,
}

impl FromStr for Keep {
    type Err = String;

    fn from_str(text: &str) -> Result<Keep, String> {
        match text {
            "failed" => Ok(Keep::Failed),
            "all" => Ok(Keep::All),
            "none" => Ok(Keep::None),
            other => Err(format!("unknown keep policy `{other}` (failed, all, none)")),
        }
    }
}

impl Keep {
    /// Whether an attempt that ended with `outcome` loses its directories.
    pub fn removes(self, outcome: Outcome) -> bool {
        match self {
            Keep::All => false,
            Keep::None => true,
            Keep::Failed => outcome == Outcome::Succeeded,
        }
    }
}

/// The workspace and check copies of one attempt that exist.
pub fn attempt_dirs(dir: &DataDir, job: &str, attempt: u32) -> Vec<PathBuf> {
    let mut dirs = vec![dir.work(job, attempt)];
    for check in ["baseline", "acceptance"] {
        dirs.push(dir.check_dir(job, attempt, check));
    }
    dirs.retain(|d| d.exists());
    dirs
}

/// Bytes under `path` (not following symlinks).
pub fn disk_usage(path: &std::path::Path) -> u64 {
    let Ok(meta) = path.symlink_metadata() else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| disk_usage(&e.path())).sum())
        .unwrap_or(0)
}

/// Removes the directories of one finished attempt if `keep` says so.
pub fn apply(
    dir: &DataDir,
    job: &str,
    attempt: u32,
    outcome: Outcome,
    keep: Keep,
) -> std::io::Result<()> {
    remove(dir, job, attempt, outcome, keep, false).map(|_| ())
}

/// [`apply`], saying whether anything was removed and, when `measure`,
/// the bytes freed (walking the trees first: only `gc` reports them).
fn remove(
    dir: &DataDir,
    job: &str,
    attempt: u32,
    outcome: Outcome,
    keep: Keep,
    measure: bool,
) -> std::io::Result<(bool, u64)> {
    if !keep.removes(outcome) {
        return Ok((false, 0));
    }
    let dirs = attempt_dirs(dir, job, attempt);
    let mut freed = 0;
    for path in &dirs {
        if measure {
            freed += disk_usage(path);
        }
        std::fs::remove_dir_all(path)?;
    }
    Ok((!dirs.is_empty(), freed))
}

/// `gc`: applies `keep` to every attempt of every finished job in `state`
/// (running and queued jobs are left alone). Returns (attempts cleaned,
/// bytes freed).
pub fn collect(dir: &DataDir, state: &State, keep: Keep) -> std::io::Result<(usize, u64)> {
    sweep(dir, state, keep, |_| true, true)
}

/// [`collect`] for the jobs `wanted` picks (a batch's own, so a run
/// killed between finishing an attempt and cleaning it up is cleaned by
/// the next run).
pub fn collect_some(
    dir: &DataDir,
    state: &State,
    keep: Keep,
    wanted: impl Fn(&str) -> bool,
) -> std::io::Result<usize> {
    sweep(dir, state, keep, wanted, false).map(|(cleaned, _)| cleaned)
}

/// `gc`: removes the caches under `DATA/cache/` that no job in `state`
/// refers to: none of its `setup` events names the cache, and the key of
/// its manifest (as it is now) is another. A cache a runner is filling is
/// left alone.
pub fn collect_caches(dir: &DataDir, state: &State) -> std::io::Result<crate::cache::Removed> {
    let mut used = std::collections::BTreeSet::new();
    for job in state.jobs() {
        used.extend(job.caches.iter().cloned());
        let manifest = job
            .manifest
            .as_deref()
            .and_then(|snapshot| crate::manifest::Manifest::from_snapshot(snapshot).ok());
        if let Some(manifest) = manifest {
            used.insert(crate::cache::cache_key(&manifest));
        }
    }
    crate::cache::remove_unused(&dir.cache(), &used)
}

fn sweep(
    dir: &DataDir,
    state: &State,
    keep: Keep,
    wanted: impl Fn(&str) -> bool,
    measure: bool,
) -> std::io::Result<(usize, u64)> {
    let (mut cleaned, mut freed) = (0, 0);
    for job in state.jobs().iter().filter(|j| wanted(&j.id)) {
        let outcome = match job.lifecycle.state {
            JobState::Succeeded => Outcome::Succeeded,
            JobState::Failed | JobState::Cancelled => Outcome::Failed,
            JobState::Queued | JobState::Running => continue,
        };
        for attempt in 1..=job.lifecycle.attempts_started.max(1) {
            // Only the last attempt of a succeeded job succeeded.
            let this = if attempt == job.lifecycle.attempts_started {
                outcome
            } else {
                Outcome::Failed
            };
            let (removed, bytes) = remove(dir, &job.id, attempt, this, keep, measure)?;
            if removed {
                cleaned += 1;
                freed += bytes;
            }
        }
    }
    Ok((cleaned, freed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_says_which_outcomes_lose_their_directories() {
        assert!(Keep::Failed.removes(Outcome::Succeeded));
        assert!(!Keep::Failed.removes(Outcome::Failed));
        assert!(!Keep::All.removes(Outcome::Succeeded));
        assert!(Keep::None.removes(Outcome::Failed));
        assert_eq!("none".parse::<Keep>(), Ok(Keep::None));
        assert!("some".parse::<Keep>().is_err());
    }

    #[test]
    fn apply_removes_work_and_check_dirs_but_not_artifacts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        for path in [
            dir.work("j", 1),
            dir.check_dir("j", 1, "acceptance"),
            dir.runs("j", 1),
            dir.runs("j", 1).join("files/src"),
        ] {
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(path.join("f"), "12345").unwrap();
        }
        assert_eq!(
            remove(&dir, "j", 1, Outcome::Failed, Keep::Failed, true).unwrap(),
            (false, 0)
        );
        assert!(dir.work("j", 1).exists());
        assert_eq!(
            remove(&dir, "j", 1, Outcome::Succeeded, Keep::Failed, true).unwrap(),
            (true, 10)
        );
        assert!(!dir.work("j", 1).exists());
        assert!(dir.runs("j", 1).join("f").exists());
        // The runner's copy of the patch is an artifact: it stays whatever
        // the policy.
        remove(&dir, "j", 1, Outcome::Failed, Keep::None, false).unwrap();
        assert!(dir.runs("j", 1).join("files/src/f").exists());
    }
}
