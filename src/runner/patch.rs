//! The agent's patch: a unified diff of the editable files of the workspace
//! against the pristine source, and applying it (editable paths only) onto a
//! clean copy for acceptance.
//!
//! Both go through directory descriptors ([`crate::beneath`]): the workspace
//! is walked by descriptors, each file is opened from its parent's
//! descriptor and checked with `fstat`, and nothing is reached through a
//! symlink, so a process still running in the workspace cannot make the
//! patch read outside it (or block it on a FIFO).
//!
//! What a patch carries: the regular files whose path matches `editable`,
//! as UTF-8 text of at most [`FILE_CAP`] bytes each (and [`PATCH_CAP`] in
//! all). Symlinks are neither followed nor carried, and directories named
//! `.git` or `target` are not entered. An editable entry the patch cannot
//! carry faithfully rejects the whole patch ([`PatchError::Rejected`])
//! rather than changing content silently: a FIFO, socket or device; a file
//! over the cap; content that is not UTF-8; a name that is not UTF-8; an
//! entry that turned into a symlink or vanished while it was read; a path
//! the source has as something else than a regular file.
//!
//! Names that are not UTF-8 are matched against `editable` as bytes (glob
//! matching works on bytes, so `**` or `src/*` match them). A match rejects
//! the patch, since a patch names files in UTF-8 and the file would be lost
//! or renamed; a name no glob matches is not editable and is ignored like
//! any other file outside `editable`.

use std::io::Seek;
use std::path::{Path, PathBuf};

use diffy::patch_set::{FileOperation, ParseOptions, PatchSet};
use globset::GlobSet;

use crate::beneath::{
    self, AtPath, Dir, Error as Beneath, Found, Kind, Step, Visitor, escape_name, read_open,
    same_content,
};

/// Largest file (workspace or source side) a patch reads.
pub const FILE_CAP: u64 = 16 * 1024 * 1024;
/// Largest patch text.
pub const PATCH_CAP: usize = 64 * 1024 * 1024;
/// Permission bits of a file a patch creates.
const NEW_FILE_MODE: u32 = 0o644;

/// A computed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub text: String,
    pub files: Vec<String>,
}

/// Something in the workspace that a patch cannot carry faithfully.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct Rejection {
    /// Relative path, escaped when it is not UTF-8.
    pub path: String,
    pub problem: String,
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
    /// The workspace's content, not the runtime, is why there is no patch.
    #[error("the workspace cannot be turned into a patch: {0}")]
    Rejected(Rejection),
}

impl From<AtPath> for PatchError {
    /// A walk's error: content rejects, I/O fails (the path is relative; see
    /// [`diff_editable`]).
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

fn reject(path: &str, problem: impl Into<String>) -> PatchError {
    PatchError::Rejected(Rejection {
        path: path.to_string(),
        problem: problem.into(),
    })
}

/// Diffs every editable file of `workspace` against `pristine`. Files only
/// in the pristine source are left alone (the agent cannot delete files).
pub fn diff_editable(
    pristine: &Path,
    workspace: &Path,
    editable: &GlobSet,
) -> Result<Patch, PatchError> {
    let open = |path: &Path| {
        Dir::open(path).map_err(|source| PatchError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut differ = Differ {
        source: open(pristine)?,
        pristine,
        workspace,
        editable,
        diffs: Vec::new(),
        bytes: 0,
    };
    beneath::walk(&open(workspace)?, &mut differ).map_err(|e| match e {
        PatchError::Read { path, source } if path.is_relative() => PatchError::Read {
            path: workspace.join(path),
            source,
        },
        e => e,
    })?;
    let mut diffs = differ.diffs;
    diffs.sort();
    let mut text = String::with_capacity(differ.bytes);
    let mut files = Vec::with_capacity(diffs.len());
    for (rel, diff) in diffs {
        text.push_str(&diff);
        files.push(rel);
    }
    Ok(Patch { text, files })
}

/// The walk of [`diff_editable`]: one diff per changed editable file.
struct Differ<'a> {
    source: Dir,
    pristine: &'a Path,
    workspace: &'a Path,
    editable: &'a GlobSet,
    /// `(relative path, diff)`, in walk order.
    diffs: Vec<(String, String)>,
    bytes: usize,
}

impl Visitor for Differ<'_> {
    type Error = PatchError;

    fn visit(&mut self, found: &Found<'_>) -> Result<Step, PatchError> {
        match found.kind {
            Kind::Dir => {
                let skip = found.name == ".git" || found.name == "target";
                return Ok(if skip { Step::Next } else { Step::Descend });
            }
            Kind::Symlink => return Ok(Step::Next),
            _ => {}
        }
        if !self.editable.is_match(found.rel) {
            return Ok(Step::Next);
        }
        let Some(rel) = found.rel.to_str() else {
            return Err(reject(
                &escape_name(found.rel.as_os_str()),
                "the name is not UTF-8 and matches an editable glob; a patch names files in UTF-8",
            ));
        };
        if found.kind != Kind::File {
            return Err(reject(
                rel,
                format!("is {}, not a regular file", found.kind.describe()),
            ));
        }
        self.diff_file(found, rel)?;
        Ok(Step::Next)
    }
}

impl Differ<'_> {
    /// Diffs the workspace file `rel` (the entry `found`, opened by name
    /// from its directory's descriptor) against the source.
    fn diff_file(&mut self, found: &Found<'_>, rel: &str) -> Result<(), PatchError> {
        let (mut after_file, after_meta) = found
            .dir
            .open_file(Path::new(found.name))
            .map_err(|e| self.workspace_problem(rel, e))?;
        let mut before = match self.source.open_file(Path::new(rel)) {
            Ok(opened) => Some(opened),
            Err(Beneath::NotFound) => None,
            Err(Beneath::Io(source)) => {
                return Err(PatchError::Read {
                    path: self.pristine.join(rel),
                    source,
                });
            }
            Err(e) => return Err(reject(rel, format!("in the source: {e}"))),
        };
        let read_error = |path: PathBuf| move |source| PatchError::Read { path, source };
        // Unchanged files are recognized without loading them, however large.
        if let Some((before_file, before_meta)) = &mut before
            && before_meta.size == after_meta.size
        {
            if same_content(&mut after_file, before_file)
                .map_err(read_error(self.workspace.join(rel)))?
            {
                return Ok(());
            }
            after_file
                .rewind()
                .map_err(read_error(self.workspace.join(rel)))?;
            before_file
                .rewind()
                .map_err(read_error(self.pristine.join(rel)))?;
        }
        let after = read_open(&after_file, after_meta, FILE_CAP)
            .map_err(|e| self.workspace_problem(rel, e))?;
        let after = String::from_utf8(after)
            .map_err(|_| reject(rel, "is not UTF-8 text; a patch carries text only"))?;
        let before = match before {
            None => None,
            Some((file, meta)) => {
                let bytes = read_open(&file, meta, FILE_CAP).map_err(|e| match e {
                    Beneath::Io(source) => PatchError::Read {
                        path: self.pristine.join(rel),
                        source,
                    },
                    e => reject(rel, format!("in the source: {e}")),
                })?;
                Some(String::from_utf8(bytes).map_err(|_| {
                    reject(
                        rel,
                        "in the source: is not UTF-8 text; a patch carries text only",
                    )
                })?)
            }
        };
        if before.as_deref() == Some(after.as_str()) {
            return Ok(());
        }
        let mut options = diffy::DiffOptions::new();
        match &before {
            Some(_) => options.set_original_filename(format!("a/{rel}")),
            None => options.set_original_filename("/dev/null"),
        };
        options.set_modified_filename(format!("b/{rel}"));
        let diff = options
            .create_patch(before.as_deref().unwrap_or(""), &after)
            .to_string();
        self.bytes += diff.len();
        if self.bytes > PATCH_CAP {
            return Err(reject(
                rel,
                format!("the patch would exceed its cap of {PATCH_CAP} bytes"),
            ));
        }
        self.diffs.push((rel.to_string(), diff));
        Ok(())
    }

    /// Why the workspace file `rel` could not be read: its content (a
    /// rejection) or the runtime's I/O (an error).
    fn workspace_problem(&self, rel: &str, e: Beneath) -> PatchError {
        match e {
            Beneath::Io(source) => PatchError::Read {
                path: self.workspace.join(rel),
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
}

/// Applies `text` onto `root`, refusing any path that is not editable.
/// Returns the files written. Every file is read and replaced through
/// descriptors beneath `root`, never through a symlink (a symlink at a
/// created file's name is replaced, not followed).
pub fn apply_patch(root: &Path, text: &str, editable: &GlobSet) -> Result<Vec<String>, PatchError> {
    let mut written = Vec::new();
    if text.trim().is_empty() {
        return Ok(written);
    }
    let dir = Dir::open(root).map_err(|source| PatchError::Write {
        path: root.to_path_buf(),
        source,
    })?;
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
        let failed = |e: Beneath| match e {
            Beneath::Io(source) => PatchError::Write {
                path: root.join(&rel),
                source,
            },
            e => PatchError::Apply {
                path: rel.clone(),
                message: e.to_string(),
            },
        };
        let (parent, leaf) = dir.create_parents(Path::new(&rel)).map_err(failed)?;
        let (base, mode) = if create {
            (String::new(), NEW_FILE_MODE)
        } else {
            match parent.read_capped(Path::new(leaf), FILE_CAP) {
                Ok((bytes, meta)) => (
                    String::from_utf8(bytes).map_err(|_| PatchError::Apply {
                        path: rel.clone(),
                        message: "the file is not UTF-8 text".into(),
                    })?,
                    meta.mode,
                ),
                Err(Beneath::NotFound) => (String::new(), NEW_FILE_MODE),
                Err(e) => return Err(failed(e)),
            }
        };
        let updated = diffy::apply(&base, patch).map_err(|e| PatchError::Apply {
            path: rel.clone(),
            message: e.to_string(),
        })?;
        parent
            .replace_file(leaf, updated.as_bytes(), mode)
            .map_err(failed)?;
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
#[path = "patch_tests.rs"]
mod tests;
