//! The git commands the importers run, on the user's own clones and on the
//! fresh repositories they make: exporting a commit's tree, and making a
//! repository that holds that tree as its only commit. Git runs with no
//! system or global configuration and an empty template, so no hook,
//! alias or template of the machine's reaches the new repository.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

/// Who the fresh repository's only commit is by, and when (fixed, so two
/// imports of one instance make the same commit).
const AUTHOR: &str = "agent-runtime import";
const EMAIL: &str = "import@agent-runtime.invalid";
const DATE: &str = "2000-01-01T00:00:00Z";

fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .stdin(Stdio::null());
    command
}

/// Why a git or tar command did not do its part.
#[derive(Debug, thiserror::Error)]
pub(super) enum GitError {
    #[error("failed to run {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} failed: {said}")]
    Failed { what: String, said: String },
    #[error("the clone has no commit {0}")]
    NoCommit(String),
    #[error("git archive gave no output")]
    NoOutput,
    #[error("cannot remove {path}: {source}")]
    Remove {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl GitError {
    fn spawn(program: impl Into<String>) -> impl FnOnce(std::io::Error) -> GitError {
        let program = program.into();
        move |source| GitError::Spawn { program, source }
    }

    /// `what` failed, saying the last line of `stderr`.
    fn failed(what: impl Into<String>, stderr: &[u8]) -> GitError {
        let stderr = String::from_utf8_lossy(stderr);
        GitError::Failed {
            what: what.into(),
            said: stderr.lines().last().unwrap_or("").trim().to_string(),
        }
    }
}

fn run(mut command: Command, what: &str) -> Result<Vec<u8>, GitError> {
    let output = command
        .output()
        .map_err(GitError::spawn(format!("git ({what})")))?;
    if !output.status.success() {
        return Err(GitError::failed(format!("git {what}"), &output.stderr));
    }
    Ok(output.stdout)
}

/// The full id of `commit` in the clone at `repo`, if it has it.
pub(super) fn resolve(repo: &Path, commit: &str) -> Result<String, GitError> {
    let mut command = git(repo);
    command.args(["rev-parse", "--verify", "--quiet"]);
    command.arg(format!("{commit}^{{commit}}"));
    let out = run(command, &format!("rev-parse {commit}"))
        .map_err(|_| GitError::NoCommit(commit.to_string()))?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// Writes the tree of `commit` in `repo` into `dest` (which must exist):
/// `git archive` piped into `tar`, so modes and symlinks come along.
pub(super) fn export_tree(repo: &Path, commit: &str, dest: &Path) -> Result<(), GitError> {
    let mut archive = git(repo);
    archive
        .args(["archive", "--format=tar", commit])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = archive.spawn().map_err(GitError::spawn("git archive"))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(GitError::NoOutput);
    };
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(stdout)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(GitError::spawn("tar"))?;
    let archived = child
        .wait_with_output()
        .map_err(GitError::spawn("git archive (waiting for it)"))?;
    if !archived.status.success() {
        return Err(GitError::failed(
            format!("git archive {commit}"),
            &archived.stderr,
        ));
    }
    if !tar.status.success() {
        return Err(GitError::failed(
            format!("unpacking the tree of {commit} with tar"),
            &tar.stderr,
        ));
    }
    Ok(())
}

/// Makes `dir` (holding a tree) a new git repository whose only commit
/// is that tree: no remote, tag, reflog, stash, hook or packed ref.
/// Returns the commit's id.
pub(super) fn fresh_repository(dir: &Path, message: &str) -> Result<String, GitError> {
    let mut init = git(dir);
    init.args(["init", "--quiet", "--template=", "--initial-branch=main"]);
    run(init, "init")?;
    let mut add = git(dir);
    add.args(["add", "--all", "--force"]);
    run(add, "add")?;
    let mut commit = git(dir);
    commit
        .args([
            "-c",
            "core.logAllRefUpdates=false",
            "-c",
            "commit.gpgSign=false",
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty",
            "-m",
            message,
        ])
        .env("GIT_AUTHOR_NAME", AUTHOR)
        .env("GIT_AUTHOR_EMAIL", EMAIL)
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_NAME", AUTHOR)
        .env("GIT_COMMITTER_EMAIL", EMAIL)
        .env("GIT_COMMITTER_DATE", DATE);
    run(commit, "commit")?;
    // Nothing of the making stays: no reflog, no hooks, no description.
    let git_dir = dir.join(".git");
    for leftover in [
        "logs",
        "hooks",
        "description",
        "COMMIT_EDITMSG",
        "ORIG_HEAD",
    ] {
        let path = git_dir.join(leftover);
        if path.is_dir() {
            fs::remove_dir_all(&path).map_err(|source| GitError::Remove {
                path: leftover.to_string(),
                source,
            })?;
        } else if path.exists() {
            fs::remove_file(&path).map_err(|source| GitError::Remove {
                path: leftover.to_string(),
                source,
            })?;
        }
    }
    let mut head = git(dir);
    head.args(["rev-parse", "HEAD"]);
    let out = run(head, "rev-parse HEAD")?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}
