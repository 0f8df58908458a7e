//! The patch phase: what the agent changed among the editable files,
//! taken from the workspace and kept exactly.
//!
//! Everything goes through directory descriptors ([`crate::beneath`]): the
//! workspace is walked by descriptors, each file is opened from its
//! parent's descriptor and checked with `fstat`, and nothing is reached
//! through a symlink, so a process still running in the workspace cannot
//! make the patch read outside it (or block it on a FIFO).
//!
//! What a patch carries: every regular file whose path matches `editable`
//! and whose content or executable bit differs from the pristine source
//! (created and changed files, content as bytes, whatever it holds), every
//! new or changed symlink at such a path that leads to a regular file of
//! the tree ([`super::links`]), and
//! every editable file or symlink of the source that the workspace no
//! longer has (deletions); each file up to [`FILE_CAP`] bytes, [`COPY_CAP`]
//! in all. Directories named `.git` or after a build dir of the language
//! table (`target`, `__pycache__`, `.pytest_cache`, `node_modules`) are not
//! entered, links so named (the runner's links into the job cache) not
//! carried, and entries named `.git` are not carried. The changes are saved twice:
//!
//! - the runner's copy ([`super::carried`]): `files/` (each created or
//!   changed file at its path) and `files.json` (every change with its
//!   mode and SHA-256, deletions too). Acceptance lays it on the clean copy.
//! - `patch.diff`: the same changes in git's format ([`crate::gitdiff`]), so
//!   `git apply` reproduces them. Its text hunks are looked for until a
//!   deadline and are coarser past it (never wrong); it is partial only
//!   when it would exceed [`DIFF_CAP`] or a deleted source file is over
//!   [`FILE_CAP`], and then says so on its first line.
//!
//! What it refuses to carry rejects the whole patch ([`PatchError::Rejected`],
//! the model's failure) rather than changing anything silently: a FIFO,
//! socket or device at an editable path; a new or changed symlink that
//! [`super::links`] does not let it carry (absolute, leaving the tree, to
//! a directory or through another link, at a harness file's name or where
//! the hidden files are laid); a file
//! over the cap, or changes over [`COPY_CAP`] in all; a name that is not
//! UTF-8 and matches an editable glob (patches name files in UTF-8; glob
//! matching works on bytes, so `**` or `src/*` match such names); an entry
//! that turned into a symlink or vanished while it was read; a path the
//! source has as something else than a regular file, or that passes
//! through a symlink or a file there; a directory where the source has an
//! editable file; a file inside a path the acceptance files have as a file
//! (laying them on the clean copy would fail); a file an interpreter runs
//! at startup (`sitecustomize.py`, a `.pth` file) unless `editable` names
//! it exactly. An I/O error of the runtime
//! is [`PatchError::Read`] or [`PatchError::Write`], never a rejection.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use globset::GlobSet;

use super::patch_save::save;
use crate::beneath::{
    self, AtPath, Dir, Error as Beneath, Found, Kind, Step, Visitor, escape_name, same_content,
};
use crate::gitdiff::{ApplyError, Mode};

/// Largest file (workspace or source side) a patch reads.
pub(crate) const FILE_CAP: u64 = 16 * 1024 * 1024;
/// Most bytes of created and changed files a patch carries in all.
pub(crate) const COPY_CAP: u64 = 64 * 1024 * 1024;
/// Largest `patch.diff`; what would go past it is left out (the copy
/// still carries it).
pub(crate) const DIFF_CAP: u64 = 128 * 1024 * 1024;
/// Longest the search for short text hunks runs, for all files together.
pub(crate) const DIFF_TIME: Duration = Duration::from_secs(5);

/// When the search for short text hunks stops: [`DIFF_TIME`] from now, or
/// at the attempt's `deadline` (its `wall_time`) if that comes first.
pub(super) fn diff_deadline(deadline: Instant) -> Instant {
    deadline.min(Instant::now() + DIFF_TIME)
}

/// Directories a patch never enters: git's, and build outputs (cargo's
/// `target`, Python's bytecode caches), which tools write, not the model.
const SKIPPED_DIRS: [&str; 3] = [".git", "target", "__pycache__"];

/// Whether a directory so named is never entered by the patch (git's, a
/// build dir of the language table): nothing under it is carried.
fn never_entered(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name) || crate::lang::build_dirs().contains(&name)
}

/// Where the patch phase reads and writes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PatchInputs<'a> {
    /// The pristine source.
    pub source: &'a Path,
    pub workspace: &'a Path,
    pub editable: &'a GlobSet,
    /// The `editable` entries as written (one naming a path exactly lets
    /// a patch carry a file an interpreter runs at startup).
    pub named: &'a [String],
    /// The acceptance files, laid on the clean copy after the patch.
    pub acceptance: Option<&'a Path>,
    /// The attempt's artifacts dir (`DATA/runs/<job>/<n>/`).
    pub runs: &'a Path,
    /// When the search for short text hunks stops.
    pub deadline: Instant,
}

/// What the patch phase saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedPatch {
    /// Paths changed, created, deleted or with a new mode, in path order.
    pub files: Vec<String>,
    /// Bytes of `patch.diff`, and its short hash.
    pub diff_bytes: u64,
    pub diff_hash: String,
    /// The SHA-256 of `files.json`, which names every carried file's.
    pub files_hash: String,
    /// Whether `patch.diff` leaves something out (the copy never does).
    pub partial: bool,
}

/// Something in the workspace that a patch cannot carry faithfully.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {problem}")]
pub(crate) struct Rejection {
    /// Relative path, escaped when it is not UTF-8.
    pub path: String,
    pub problem: String,
}

/// Failures taking, saving or laying down a patch.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PatchError {
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
    /// The workspace's content, not the runtime, is why there is no patch.
    #[error("the workspace cannot be turned into a patch: {0}")]
    Rejected(Rejection),
    /// The runner's copy is missing or not what the `patch` event says.
    #[error("the runner's copy of the patch is unusable ({}): {problem}", .path.display())]
    Corrupt { path: PathBuf, problem: String },
    /// The clean copy refused a carried file (its source changed since the
    /// patch was taken).
    #[error("failed to lay {path} on the clean copy: {problem}")]
    Lay { path: String, problem: String },
    /// A patch given as text (an oracle's, the seed form's) did not apply.
    #[error(transparent)]
    Apply(#[from] ApplyError),
}

impl PatchError {
    /// The rejection, when the model's output is why (and not the runtime).
    #[cfg(test)]
    pub(crate) fn rejection(&self) -> Option<&Rejection> {
        match self {
            PatchError::Rejected(r) => Some(r),
            _ => None,
        }
    }
}

pub(super) fn reject(path: &str, problem: impl Into<String>) -> PatchError {
    PatchError::Rejected(Rejection {
        path: path.to_string(),
        problem: problem.into(),
    })
}

/// One change found in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Change {
    pub(super) rel: String,
    /// The source's mode, `None` for a created file.
    pub(super) old: Option<Mode>,
    /// Whether the workspace still has the path (a regular file, or a
    /// link when `link` says where to).
    pub(super) kept: bool,
    /// The target of the link the workspace has at the path (a carried
    /// link: see [`super::links`]).
    pub(super) link: Option<String>,
}

/// Takes the changes of `inputs.workspace` against the source, saves the
/// runner's copy of them and `patch.diff` under `inputs.runs`.
pub(crate) fn take_patch(inputs: &PatchInputs<'_>) -> Result<SavedPatch, PatchError> {
    let open = |path: &Path| {
        Dir::open(path).map_err(|source| PatchError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let (source, workspace) = (open(inputs.source)?, open(inputs.workspace)?);
    let mut changes = changes(inputs, &source, &workspace)?;
    changes.sort_by(|a, b| a.rel.cmp(&b.rel));
    if let Some(dir) = inputs.acceptance {
        let hidden = open(dir)?;
        for change in changes.iter().filter(|c| c.kept) {
            check_hidden_files(&hidden, &change.rel)?;
            if let Some(target) = &change.link
                && hidden.kind(Path::new(&change.rel)).is_ok()
            {
                return Err(reject(
                    &change.rel,
                    format!(
                        "is a symlink (to {target}) at or above where the hidden test files are laid; a patch never carries one there"
                    ),
                ));
            }
        }
    }
    save(inputs, &source, &workspace, &changes)
}

/// The changes, in walk order: the workspace's files first, then the
/// deletions found walking the source.
fn changes(
    inputs: &PatchInputs<'_>,
    source: &Dir,
    workspace: &Dir,
) -> Result<Vec<Change>, PatchError> {
    let mut finder = Finder {
        source,
        workspace,
        inputs,
        changes: Vec::new(),
        carried: 0,
        in_source: false,
    };
    beneath::walk(workspace, &mut finder).map_err(|e| match e {
        // Permissions the agent's commands set are the workspace's
        // content, not a fault of the runtime.
        PatchError::Read { path, source } if path.is_relative() => workspace_problem(
            inputs.workspace,
            &path.to_string_lossy(),
            Beneath::Io(source),
        ),
        e => e,
    })?;
    finder.in_source = true;
    beneath::walk(source, &mut finder).map_err(|e| match e {
        PatchError::Read { path, source } if path.is_relative() => PatchError::Read {
            path: inputs.source.join(path),
            source,
        },
        e => e,
    })?;
    Ok(finder.changes)
}

/// The walks of [`changes`]: the workspace's (created and changed files),
/// then the source's (deleted ones).
struct Finder<'a> {
    source: &'a Dir,
    workspace: &'a Dir,
    inputs: &'a PatchInputs<'a>,
    changes: Vec<Change>,
    /// Bytes of the changed files so far.
    carried: u64,
    /// Walking the source (else the workspace).
    in_source: bool,
}

impl Visitor for Finder<'_> {
    type Error = PatchError;

    fn visit(&mut self, found: &Found<'_>) -> Result<Step, PatchError> {
        // Build outputs and the links into the job cache the runner makes
        // (`node_modules`) are the tools', never the model's.
        let built = || crate::lang::build_dirs().iter().any(|d| found.name == *d);
        if found.kind == Kind::Dir {
            let skip = found.name.to_str().is_some_and(never_entered);
            return Ok(if skip { Step::Next } else { Step::Descend });
        }
        if found.kind == Kind::Symlink && built() {
            return Ok(Step::Next);
        }
        if found.name == ".git" || !self.inputs.editable.is_match(found.rel) {
            return Ok(Step::Next);
        }
        let rel = found.rel.to_str();
        if self.in_source {
            return self.source_entry(found, rel).map(|()| Step::Next);
        }
        let Some(rel) = rel else {
            return Err(reject(
                &escape_name(found.rel.as_os_str()),
                "the name is not UTF-8 and matches an editable glob; a patch names files in UTF-8",
            ));
        };
        match found.kind {
            Kind::File => self.workspace_file(found, rel)?,
            Kind::Symlink => self.workspace_symlink(found, rel)?,
            other => {
                return Err(reject(
                    rel,
                    format!("is {}, not a regular file", other.describe()),
                ));
            }
        }
        Ok(Step::Next)
    }
}

impl Finder<'_> {
    /// A regular file of the workspace: created, changed, or as it was.
    fn workspace_file(&mut self, found: &Found<'_>, rel: &str) -> Result<(), PatchError> {
        let (mut after, after_meta) = found
            .dir
            .open_file(Path::new(found.name))
            .map_err(|e| self.workspace_problem(rel, e))?;
        let before = match self.source.open_file(Path::new(rel)) {
            Ok(opened) => Some(opened),
            Err(Beneath::NotFound) => None,
            Err(Beneath::Io(source)) => {
                return Err(PatchError::Read {
                    path: self.inputs.source.join(rel),
                    source,
                });
            }
            Err(e) => return Err(reject(rel, format!("in the source: {e}"))),
        };
        let old = before.as_ref().map(|(_, meta)| Mode::of_file(meta.mode));
        // Unchanged files are recognized without loading them, however large.
        if let Some((mut before_file, before_meta)) = before
            && old == Some(Mode::of_file(after_meta.mode))
            && before_meta.size == after_meta.size
            && same_content(&mut after, &mut before_file).map_err(|source| PatchError::Read {
                path: self.inputs.workspace.join(rel),
                source,
            })?
        {
            return Ok(());
        }
        if crate::lang::is_startup_file(rel)
            && !crate::integrity::named_exactly(rel, self.inputs.named)
        {
            return Err(reject(
                rel,
                "is a file the interpreter runs at startup wherever it lies on its path (a .pth file, sitecustomize.py, usercustomize.py); a patch carries one only where editable names it exactly",
            ));
        }
        if after_meta.size > FILE_CAP {
            return Err(self.workspace_problem(
                rel,
                Beneath::TooLarge {
                    size: after_meta.size,
                    cap: FILE_CAP,
                },
            ));
        }
        // Refused before anything is copied (the copy checks again).
        self.carried += after_meta.size;
        if self.carried > COPY_CAP {
            return Err(too_much(rel));
        }
        self.changes.push(Change {
            rel: rel.to_string(),
            old,
            kept: true,
            link: None,
        });
        Ok(())
    }

    /// A symlink of the workspace: nothing where the source has the same
    /// one; else a change when [`super::links`] lets the patch carry it,
    /// a rejection naming it when not.
    fn workspace_symlink(&mut self, found: &Found<'_>, rel: &str) -> Result<(), PatchError> {
        let target = found
            .dir
            .read_link(found.name)
            .map_err(|e| self.workspace_problem(rel, e))?;
        let in_source = self
            .source
            .open_parent(Path::new(rel))
            .and_then(|(parent, leaf)| parent.read_link(leaf));
        if in_source.is_ok_and(|t| t == target) {
            return Ok(());
        }
        let resolved = super::links::lexical(rel, &target).map_err(|why| reject(rel, why.0))?;
        // UTF-8, or the lexical rule refused it: carried as it is written.
        let raw = target.to_string_lossy().into_owned();
        let shown = escape_name(&target);
        let carried =
            self.inputs.editable.is_match(&resolved) && !resolved.split('/').any(never_entered);
        super::links::check_target(self.workspace, self.source, &shown, &resolved, carried)
            .map_err(|why| reject(rel, why.0))?;
        let old = match self.source.kind(Path::new(rel)) {
            Ok(Kind::Symlink) => Some(Mode::Symlink),
            Ok(Kind::File) => match self.source.open_file(Path::new(rel)) {
                Ok((_, meta)) => Some(Mode::of_file(meta.mode)),
                Err(e) => return Err(reject(rel, format!("in the source: {e}"))),
            },
            Err(Beneath::NotFound) => None,
            Ok(other) => {
                return Err(reject(
                    rel,
                    format!(
                        "is a symlink in the workspace where the source has {}",
                        other.describe()
                    ),
                ));
            }
            Err(e) => return Err(reject(rel, format!("in the source: {e}"))),
        };
        self.changes.push(Change {
            rel: rel.to_string(),
            old,
            kept: true,
            link: Some(raw),
        });
        Ok(())
    }

    /// An editable file or symlink of the source: deleted when the
    /// workspace no longer has it.
    fn source_entry(&mut self, found: &Found<'_>, rel: Option<&str>) -> Result<(), PatchError> {
        let old = match found.kind {
            Kind::File => match found.dir.open_file(Path::new(found.name)) {
                Ok((_, meta)) => Mode::of_file(meta.mode),
                Err(Beneath::Io(source)) => {
                    return Err(PatchError::Read {
                        path: found.rel.to_path_buf(),
                        source,
                    });
                }
                Err(_) => return Ok(()),
            },
            Kind::Symlink => Mode::Symlink,
            _ => return Ok(()),
        };
        let shown = rel.map_or_else(|| escape_name(found.rel.as_os_str()), str::to_string);
        let problem = match self.workspace.kind(found.rel) {
            Err(Beneath::NotFound) => None,
            Ok(Kind::Dir) => Some("is a directory in the workspace, where the source has a file"),
            Ok(_) => return Ok(()),
            Err(Beneath::Symlink) => {
                Some("was deleted through a directory the workspace turned into a symlink")
            }
            Err(Beneath::NotDirectory) => {
                Some("was deleted with a directory on its path turned into a file")
            }
            Err(e) => return Err(workspace_problem(self.inputs.workspace, &shown, e)),
        };
        match (problem, rel) {
            (Some(problem), _) => Err(reject(&shown, problem)),
            (None, None) => Err(reject(
                &shown,
                "was deleted, and its name is not UTF-8; a patch names files in UTF-8",
            )),
            (None, Some(rel)) => {
                self.changes.push(Change {
                    rel: rel.to_string(),
                    old: Some(old),
                    kept: false,
                    link: None,
                });
                Ok(())
            }
        }
    }

    /// Why the workspace file `rel` could not be read: its content (a
    /// rejection) or the runtime's I/O (an error).
    fn workspace_problem(&self, rel: &str, e: Beneath) -> PatchError {
        workspace_problem(self.inputs.workspace, rel, e)
    }
}

/// The rejection of changes over [`COPY_CAP`] in all, at `rel`.
pub(super) fn too_much(rel: &str) -> PatchError {
    reject(
        rel,
        format!("the changed files exceed the patch's cap of {COPY_CAP} bytes in all"),
    )
}

pub(super) fn workspace_problem(workspace: &Path, rel: &str, e: Beneath) -> PatchError {
    match e {
        Beneath::Io(source) if source.kind() == std::io::ErrorKind::PermissionDenied => reject(
            rel,
            "cannot be read: permission denied (its permissions were changed in the workspace)",
        ),
        Beneath::Io(source) => PatchError::Read {
            path: workspace.join(rel),
            source,
        },
        Beneath::NotFound => reject(rel, "vanished while the patch was taken"),
        Beneath::Symlink => reject(
            rel,
            "turned into a symlink while the patch was taken (symlinks are never followed)",
        ),
        Beneath::Changed => reject(rel, "changed while the patch was taken"),
        e => reject(rel, e.to_string()),
    }
}

impl From<AtPath> for PatchError {
    /// A walk's error: content rejects, I/O fails (the path is relative).
    fn from(e: AtPath) -> Self {
        match e.error {
            Beneath::Io(source) => PatchError::Read {
                path: e.path,
                source,
            },
            other => PatchError::Rejected(Rejection {
                path: escape_name(e.path.as_os_str()),
                problem: other.to_string(),
            }),
        }
    }
}

/// Refuses a file the acceptance files would not fit around: one inside a
/// path they have as a file or a symlink.
fn check_hidden_files(hidden: &Dir, rel: &str) -> Result<(), PatchError> {
    let mut prefix = PathBuf::new();
    let names: Vec<&str> = rel.split('/').collect();
    for name in names.iter().take(names.len().saturating_sub(1)) {
        prefix.push(name);
        match hidden.kind(&prefix) {
            Ok(Kind::Dir) => {}
            Ok(_) => {
                return Err(reject(
                    rel,
                    format!(
                        "lies inside {}, which the acceptance files have as a file",
                        prefix.display()
                    ),
                ));
            }
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
