//! The attempt's workspace: a fresh copy of the job's source, and every file
//! action a model may ask for, contained in it.
//!
//! A path from a model is refused when it is empty, absolute, has a `..` or
//! `.git` component, or is or passes through a symlink; writes are also
//! refused outside the `editable` globs. Every action goes through the
//! workspace's root descriptor, opened once ([`crate::beneath`]): a path is
//! resolved once, beneath the root, through no symlink, and what is checked
//! is the descriptor then used, so a process swapping a directory for a
//! symlink cannot redirect a read or a write outside. Only regular files are
//! read or replaced (a FIFO, socket or device is refused without blocking);
//! reads are capped on the descriptor's size; writes are atomic (a temporary
//! file renamed within the parent directory's descriptor, which replaces a
//! symlink at the name rather than following it).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::beneath::{self, AtPath, Dir, Error as Beneath, Found, Kind, Step, Visitor};
use crate::hash::short_hash;

/// Directories never listed (still readable by path if not `.git`).
const SKIP_IN_LISTINGS: &[&str] = &[".git", "target"];
/// Entries returned by one `list_files`.
pub(crate) const LIST_LIMIT: usize = 500;
/// Largest file `replace_text` reads, and largest existing file `write_file`
/// replaces (its hash goes into the log).
pub(super) const EDIT_CAP: u64 = 16 * 1024 * 1024;
/// Permission bits of a file `write_file` creates.
const NEW_FILE_MODE: u32 = 0o644;

/// Why a file action was refused; shown to the model as an observation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PathRefusal {
    #[error("path is empty")]
    Empty,
    #[error("path {0:?} is absolute; use a path relative to the workspace root")]
    Absolute(String),
    #[error("path {0:?} contains '..'; paths must stay inside the workspace")]
    ParentDir(String),
    #[error("path {0:?} is inside .git, which is off limits")]
    Git(String),
    #[error(
        "path {0:?} is or passes through a symlink; symlinks in the workspace are never followed"
    )]
    Symlink(String),
    #[error("path {0:?} is not editable; editable globs: {1}")]
    NotEditable(String, String),
    #[error("path {0:?} does not exist")]
    NotFound(String),
    #[error("path {0:?} is a directory")]
    IsDirectory(String),
    #[error("path {0:?} is not a directory")]
    NotDirectory(String),
    #[error(
        "path {0:?} changed while it was being opened (something in the workspace is replacing it)"
    )]
    Changed(String),
    #[error("path {path:?} is {kind}, not a regular file")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path:?} is {size} bytes, over the {cap}-byte cap of this action")]
    TooLarge { path: String, size: u64, cap: u64 },
    #[error(
        "expected text occurs {count} times in {path:?}; replace_text needs exactly one occurrence"
    )]
    Occurrences { path: String, count: usize },
    #[error("{path:?} is not UTF-8 text")]
    NotText { path: String },
    #[error("failed to {action} {path:?}: {message}")]
    Io {
        action: &'static str,
        path: String,
        message: String,
    },
}

/// Failures setting a workspace up (not the model's doing).
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkspaceError {
    #[error("failed to copy {} to {}: {source}", .from.display(), .to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: AtPath,
    },
    #[error("failed to open the workspace {}: {source}", .path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid editable glob {glob:?}: {message}")]
    Glob { glob: String, message: String },
}

/// What an edit changed, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditRecord {
    /// Normalized relative path.
    pub(crate) path: String,
    pub(crate) before: Option<String>,
    pub(crate) after: String,
    pub(crate) bytes: u64,
}

/// A file's text as shown to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileText {
    pub(crate) text: String,
    pub(crate) total_bytes: u64,
    pub(crate) truncated: bool,
}

/// A workspace: its canonical path (where commands run) and a descriptor on
/// it, opened once, through which every file action goes.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    root: PathBuf,
    dir: Arc<Dir>,
    editable: GlobSet,
    editable_rules: Vec<String>,
}

/// Builds the matcher for `editable` globs (`/`-separated, relative).
pub(crate) fn editable_set(globs: &[String]) -> Result<GlobSet, WorkspaceError> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let compiled = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .or_else(|_| Glob::new(glob))
            .map_err(|e| WorkspaceError::Glob {
                glob: glob.clone(),
                message: e.to_string(),
            })?;
        builder.add(compiled);
    }
    builder.build().map_err(|e| WorkspaceError::Glob {
        glob: globs.join(", "),
        message: e.to_string(),
    })
}

impl Workspace {
    /// Copies `source` into a new directory `dest` (which must not exist)
    /// and opens it. A `.git` the source has comes along (an imported
    /// repository's, holding its base commit and nothing past it: the
    /// agent's `git diff` works); file actions never reach into it.
    pub(crate) fn create(
        source: &Path,
        dest: &Path,
        editable: &[String],
    ) -> Result<Workspace, WorkspaceError> {
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|source| WorkspaceError::Open {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let dir =
            beneath::copy_tree(source, dest, &[]).map_err(|source_err| WorkspaceError::Copy {
                from: source.to_path_buf(),
                to: dest.to_path_buf(),
                source: source_err,
            })?;
        Workspace::with_dir(dest, dir, editable)
    }

    /// Opens an existing directory as a workspace.
    pub(crate) fn open(root: &Path, editable: &[String]) -> Result<Workspace, WorkspaceError> {
        let dir = Dir::open(root).map_err(|source| WorkspaceError::Open {
            path: root.to_path_buf(),
            source,
        })?;
        Workspace::with_dir(root, dir, editable)
    }

    fn with_dir(root: &Path, dir: Dir, editable: &[String]) -> Result<Workspace, WorkspaceError> {
        let root = root.canonicalize().map_err(|source| WorkspaceError::Open {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Workspace {
            root,
            dir: Arc::new(dir),
            editable: editable_set(editable)?,
            editable_rules: editable.to_vec(),
        })
    }

    /// The workspace's canonical path, for running commands in it. File
    /// actions never use it: they go through the root descriptor.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the normalized relative path matches an editable glob.
    pub(crate) fn is_editable(&self, rel: &str) -> bool {
        self.editable.is_match(rel)
    }

    /// Lexical checks, then the normalized relative path (`/`-separated).
    fn normalize(&self, raw: &str) -> Result<String, PathRefusal> {
        if raw.trim().is_empty() {
            return Err(PathRefusal::Empty);
        }
        let path = Path::new(raw);
        let mut parts = Vec::new();
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(PathRefusal::Absolute(raw.to_string()));
                }
                Component::ParentDir => return Err(PathRefusal::ParentDir(raw.to_string())),
                Component::CurDir => {}
                Component::Normal(part) => {
                    // `raw` is a str, so every component is UTF-8.
                    let part = part.to_string_lossy();
                    if part == ".git" {
                        return Err(PathRefusal::Git(raw.to_string()));
                    }
                    parts.push(part.into_owned());
                }
            }
        }
        Ok(parts.join("/"))
    }

    /// The lexical checks of a write: a file path, editable.
    fn normalize_for_write(&self, raw: &str) -> Result<String, PathRefusal> {
        let rel = self.normalize(raw)?;
        if rel.is_empty() {
            return Err(PathRefusal::IsDirectory(raw.to_string()));
        }
        if !self.is_editable(&rel) {
            return Err(PathRefusal::NotEditable(
                rel,
                self.editable_rules.join(", "),
            ));
        }
        Ok(rel)
    }

    /// The containment checks of a read or a listing, without reading: a
    /// path that does not exist passes (acting on it reports that).
    pub(crate) fn check_read(&self, raw: &str) -> Result<(), PathRefusal> {
        let raw = if raw.trim().is_empty() { "." } else { raw };
        let rel = self.normalize(raw)?;
        match self.dir.kind(Path::new(&rel)) {
            Ok(Kind::Symlink) => Err(PathRefusal::Symlink(raw.to_string())),
            Err(Beneath::Symlink | Beneath::Escapes) => Err(PathRefusal::Symlink(raw.to_string())),
            _ => Ok(()),
        }
    }

    /// The checks of a write, without writing: the path is editable, and
    /// what exists of it is no symlink and no directory. The write checks
    /// again on the descriptors it uses.
    pub(crate) fn check_write(&self, raw: &str) -> Result<(), PathRefusal> {
        let rel = self.normalize_for_write(raw)?;
        match self.dir.kind(Path::new(&rel)) {
            Ok(Kind::Symlink) => Err(PathRefusal::Symlink(raw.to_string())),
            Ok(Kind::Dir) => Err(PathRefusal::IsDirectory(raw.to_string())),
            Ok(_) | Err(Beneath::NotFound) => Ok(()),
            Err(e) => Err(refusal(raw, &rel, "check", e)),
        }
    }

    /// Reads a file, keeping at most `cap` bytes.
    pub(crate) fn read(&self, raw: &str, cap: usize) -> Result<FileText, PathRefusal> {
        let rel = self.normalize(raw)?;
        let (mut bytes, meta) = self
            .dir
            .read_head(Path::new(&rel), cap as u64)
            .map_err(|e| refusal(raw, &rel, "read", e))?;
        let truncated = meta.size > cap as u64;
        bytes.truncate(cap);
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            // A cut in the middle of a multi-byte character is not binary.
            Err(e) if truncated && e.utf8_error().error_len().is_none() => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).unwrap_or_default()
            }
            Err(_) => return Err(PathRefusal::NotText { path: rel }),
        };
        Ok(FileText {
            text,
            total_bytes: meta.size,
            truncated,
        })
    }

    /// Lists files under a directory (recursively, sorted), at most
    /// [`LIST_LIMIT`] entries; directories end with `/`. Symlinks are listed
    /// by name and never entered; a name that is not UTF-8 is shown escaped
    /// and marked, and not entered.
    pub(crate) fn list(&self, raw: &str) -> Result<(Vec<String>, bool), PathRefusal> {
        let raw = if raw.trim().is_empty() { "." } else { raw };
        let rel = self.normalize(raw)?;
        let dir = self
            .dir
            .open_dir(Path::new(&rel))
            .map_err(|e| refusal(raw, &rel, "list", e))?;
        let mut listing = Listing {
            base: if rel.is_empty() {
                String::new()
            } else {
                format!("{rel}/")
            },
            out: Vec::new(),
        };
        let complete =
            beneath::walk(&dir, &mut listing).map_err(|e| refusal(raw, &rel, "list", e.error))?;
        let mut out = listing.out;
        out.sort();
        Ok((out, complete))
    }

    /// Creates or replaces a file atomically.
    pub(crate) fn write(&self, raw: &str, content: &str) -> Result<EditRecord, PathRefusal> {
        let rel = self.normalize_for_write(raw)?;
        let fail = |action, e| refusal(raw, &rel, action, e);
        let (parent, leaf) = self
            .dir
            .create_parents(Path::new(&rel))
            .map_err(|e| fail("write", e))?;
        let (before, mode) = match parent.read_capped(Path::new(leaf), EDIT_CAP) {
            Ok((bytes, meta)) => (Some(short_hash(&bytes)), meta.mode),
            Err(Beneath::NotFound) => (None, NEW_FILE_MODE),
            Err(e) => return Err(fail("read", e)),
        };
        parent
            .replace_file(leaf, content.as_bytes(), mode)
            .map_err(|e| fail("write", e))?;
        Ok(EditRecord {
            path: rel.clone(),
            before,
            after: short_hash(content.as_bytes()),
            bytes: content.len() as u64,
        })
    }

    /// Replaces the single occurrence of `expected` with `replacement`.
    pub(crate) fn replace(
        &self,
        raw: &str,
        expected: &str,
        replacement: &str,
    ) -> Result<EditRecord, PathRefusal> {
        let rel = self.normalize_for_write(raw)?;
        let fail = |action, e| refusal(raw, &rel, action, e);
        let (parent, leaf) = self
            .dir
            .open_parent(Path::new(&rel))
            .map_err(|e| fail("read", e))?;
        let (bytes, meta) = parent
            .read_capped(Path::new(leaf), EDIT_CAP)
            .map_err(|e| fail("read", e))?;
        let text =
            String::from_utf8(bytes).map_err(|_| PathRefusal::NotText { path: rel.clone() })?;
        let count = if expected.is_empty() {
            0
        } else {
            text.matches(expected).count()
        };
        if count != 1 {
            return Err(PathRefusal::Occurrences { path: rel, count });
        }
        let updated = text.replacen(expected, replacement, 1);
        parent
            .replace_file(leaf, updated.as_bytes(), meta.mode)
            .map_err(|e| fail("write", e))?;
        Ok(EditRecord {
            path: rel.clone(),
            before: Some(short_hash(text.as_bytes())),
            after: short_hash(updated.as_bytes()),
            bytes: updated.len() as u64,
        })
    }
}

/// The refusal the model sees for a failed action on `raw` (normalized
/// `rel`).
fn refusal(raw: &str, rel: &str, action: &'static str, e: Beneath) -> PathRefusal {
    let raw = raw.to_string();
    match e {
        Beneath::NotFound => PathRefusal::NotFound(raw),
        Beneath::Symlink | Beneath::Escapes => PathRefusal::Symlink(raw),
        Beneath::NotDirectory => PathRefusal::NotDirectory(raw),
        Beneath::Changed => PathRefusal::Changed(raw),
        Beneath::IsDirectory => PathRefusal::IsDirectory(raw),
        Beneath::NotRegular(kind) => PathRefusal::NotRegular {
            path: raw,
            kind: kind.describe(),
        },
        Beneath::TooLarge { size, cap } => PathRefusal::TooLarge {
            path: rel.to_string(),
            size,
            cap,
        },
        e @ (Beneath::TooDeep(_) | Beneath::BadPath | Beneath::NameTooLong | Beneath::Io(_)) => {
            PathRefusal::Io {
                action,
                path: rel.to_string(),
                message: e.to_string(),
            }
        }
    }
}

/// The `list_files` walk: at most [`LIST_LIMIT`] entries.
struct Listing {
    base: String,
    out: Vec<String>,
}

impl Visitor for Listing {
    type Error = AtPath;

    fn visit(&mut self, found: &Found<'_>) -> Result<Step, AtPath> {
        if self.out.len() >= LIST_LIMIT {
            return Ok(Step::Stop);
        }
        let Some(rel) = found.rel.to_str() else {
            let shown = beneath::escape_name(found.rel.as_os_str());
            let what = if found.kind == Kind::Dir { "/" } else { "" };
            self.out.push(format!(
                "{}{shown}{what} [name is not UTF-8; not accessible]",
                self.base
            ));
            return Ok(Step::Next);
        };
        let name = found.name.to_str().unwrap_or_default();
        if SKIP_IN_LISTINGS.contains(&name) {
            return Ok(Step::Next);
        }
        if found.kind == Kind::Dir {
            self.out.push(format!("{}{rel}/", self.base));
            Ok(Step::Descend)
        } else {
            self.out.push(format!("{}{rel}", self.base));
            Ok(Step::Next)
        }
    }

    /// A directory swapped for something else since it was read: listed,
    /// not entered.
    fn descend_failed(&mut self, _found: &Found<'_>, _error: Beneath) -> Result<(), AtPath> {
        Ok(())
    }
}

/// Copies a directory tree into the new directory `to`, by descriptors:
/// names exactly as they are, symlinks as symlinks, `.git` skipped. Returns
/// a handle on `to`.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<Dir, AtPath> {
    beneath::copy_tree(from, to, &[".git"])
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
