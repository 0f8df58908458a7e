//! The attempt's workspace: a fresh copy of the job's source, and every file
//! action a model may ask for, contained in it.
//!
//! A path from a model is refused when it is empty, absolute, has a `..` or
//! `.git` component, or resolves (through any symlink) outside the
//! workspace or to a different place than it names; writes are also refused
//! through a symlink and outside the `editable` globs. Writes are atomic
//! (temporary file + rename); reads are capped.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::hash::short_hash;

/// Directories never listed (still readable by path if not `.git`).
const SKIP_IN_LISTINGS: &[&str] = &[".git", "target"];
/// Entries returned by one `list_files`.
pub const LIST_LIMIT: usize = 500;

/// Why a file action was refused; shown to the model as an observation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefusal {
    #[error("path is empty")]
    Empty,
    #[error("path {0:?} is absolute; use a path relative to the workspace root")]
    Absolute(String),
    #[error("path {0:?} contains '..'; paths must stay inside the workspace")]
    ParentDir(String),
    #[error("path {0:?} is inside .git, which is off limits")]
    Git(String),
    #[error("path {0:?} resolves outside the workspace (through a symlink)")]
    Escapes(String),
    #[error("path {0:?} is a symlink; writes through symlinks are refused")]
    Symlink(String),
    #[error("path {0:?} is not editable; editable globs: {1}")]
    NotEditable(String, String),
    #[error("path {0:?} does not exist")]
    NotFound(String),
    #[error("path {0:?} is a directory")]
    IsDirectory(String),
    #[error("path {0:?} is not a directory")]
    NotDirectory(String),
    #[error("path {0:?} is not a regular file")]
    NotRegular(String),
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
pub enum WorkspaceError {
    #[error("failed to copy {} to {}: {source}", .from.display(), .to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid editable glob {glob:?}: {message}")]
    Glob { glob: String, message: String },
}

/// What an edit changed, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRecord {
    /// Normalized relative path.
    pub path: String,
    pub before: Option<String>,
    pub after: String,
    pub bytes: u64,
}

/// A file's text as shown to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText {
    pub text: String,
    pub total_bytes: u64,
    pub truncated: bool,
}

/// A workspace rooted at a canonical directory.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    editable: GlobSet,
    editable_rules: Vec<String>,
}

/// Builds the matcher for `editable` globs (`/`-separated, relative).
pub fn editable_set(globs: &[String]) -> Result<GlobSet, WorkspaceError> {
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
    /// and opens it. `.git` is not copied.
    pub fn create(
        source: &Path,
        dest: &Path,
        editable: &[String],
    ) -> Result<Workspace, WorkspaceError> {
        let copy_err = |source_err| WorkspaceError::Copy {
            from: source.to_path_buf(),
            to: dest.to_path_buf(),
            source: source_err,
        };
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent).map_err(copy_err)?;
        }
        copy_tree(source, dest).map_err(copy_err)?;
        Workspace::open(dest, editable)
    }

    /// Opens an existing directory as a workspace.
    pub fn open(root: &Path, editable: &[String]) -> Result<Workspace, WorkspaceError> {
        let root = root.canonicalize().map_err(|source| WorkspaceError::Copy {
            from: root.to_path_buf(),
            to: root.to_path_buf(),
            source,
        })?;
        Ok(Workspace {
            root,
            editable: editable_set(editable)?,
            editable_rules: editable.to_vec(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the normalized relative path matches an editable glob.
    pub fn is_editable(&self, rel: &str) -> bool {
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

    /// Resolves an existing path for reading; it must resolve inside the
    /// workspace, through whatever symlinks.
    fn resolve_existing(&self, raw: &str) -> Result<(String, PathBuf), PathRefusal> {
        let rel = self.normalize(raw)?;
        let joined = self.root.join(&rel);
        let real = match joined.canonicalize() {
            Ok(real) => real,
            Err(_) if joined.symlink_metadata().is_ok() => {
                return Err(PathRefusal::Escapes(raw.to_string()));
            }
            Err(_) => return Err(PathRefusal::NotFound(raw.to_string())),
        };
        if !real.starts_with(&self.root) {
            return Err(PathRefusal::Escapes(raw.to_string()));
        }
        if real
            .strip_prefix(&self.root)
            .is_ok_and(|r| r.components().any(|c| c.as_os_str() == ".git"))
        {
            return Err(PathRefusal::Git(raw.to_string()));
        }
        Ok((rel, real))
    }

    /// Resolves a path for writing: not a symlink, parent directories (the
    /// existing ones) resolve to exactly the place the path names, and the
    /// path is editable.
    fn resolve_for_write(&self, raw: &str) -> Result<(String, PathBuf), PathRefusal> {
        let rel = self.normalize(raw)?;
        if rel.is_empty() {
            return Err(PathRefusal::IsDirectory(raw.to_string()));
        }
        let target = self.root.join(&rel);
        // Every existing prefix must be a real directory (no symlinked
        // directories), so the editable check applies to the real location.
        let mut prefix = self.root.clone();
        let components: Vec<&str> = rel.split('/').collect();
        for (i, part) in components.iter().enumerate() {
            prefix.push(part);
            let Ok(meta) = prefix.symlink_metadata() else {
                break;
            };
            if meta.file_type().is_symlink() {
                return Err(if i + 1 == components.len() {
                    PathRefusal::Symlink(raw.to_string())
                } else {
                    PathRefusal::Escapes(raw.to_string())
                });
            }
            if i + 1 < components.len() && !meta.is_dir() {
                return Err(PathRefusal::NotDirectory(raw.to_string()));
            }
            if i + 1 == components.len() && meta.is_dir() {
                return Err(PathRefusal::IsDirectory(raw.to_string()));
            }
        }
        if !self.is_editable(&rel) {
            return Err(PathRefusal::NotEditable(
                rel,
                self.editable_rules.join(", "),
            ));
        }
        Ok((rel, target))
    }

    /// The containment checks of a read or a listing, without reading: a
    /// path that does not exist passes (acting on it reports that).
    pub fn check_read(&self, raw: &str) -> Result<(), PathRefusal> {
        let raw = if raw.trim().is_empty() { "." } else { raw };
        match self.resolve_existing(raw) {
            Ok(_) | Err(PathRefusal::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The checks of a write, without writing.
    pub fn check_write(&self, raw: &str) -> Result<(), PathRefusal> {
        self.resolve_for_write(raw).map(|_| ())
    }

    /// Reads a file, keeping at most `cap` bytes.
    pub fn read(&self, raw: &str, cap: usize) -> Result<FileText, PathRefusal> {
        let (rel, real) = self.resolve_existing(raw)?;
        let meta = fs::metadata(&real).map_err(|e| io_refusal("read", &rel, e))?;
        if meta.is_dir() {
            return Err(PathRefusal::IsDirectory(raw.to_string()));
        }
        if !meta.is_file() {
            return Err(PathRefusal::NotRegular(raw.to_string()));
        }
        let mut bytes = Vec::new();
        fs::File::open(&real)
            .and_then(|f| f.take(cap as u64 + 4).read_to_end(&mut bytes))
            .map_err(|e| io_refusal("read", &rel, e))?;
        let truncated = meta.len() > cap as u64;
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
            total_bytes: meta.len(),
            truncated,
        })
    }

    /// Lists files under a directory (recursively, sorted), at most
    /// [`LIST_LIMIT`] entries; directories end with `/`.
    pub fn list(&self, raw: &str) -> Result<(Vec<String>, bool), PathRefusal> {
        let raw = if raw.trim().is_empty() { "." } else { raw };
        let (rel, real) = self.resolve_existing(raw)?;
        if !real.is_dir() {
            return Err(PathRefusal::NotDirectory(raw.to_string()));
        }
        let mut out = Vec::new();
        let base = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let complete = walk(&real, &base, &mut out).map_err(|e| io_refusal("list", &rel, e))?;
        out.sort();
        Ok((out, complete))
    }

    /// Creates or replaces a file atomically.
    pub fn write(&self, raw: &str, content: &str) -> Result<EditRecord, PathRefusal> {
        let (rel, target) = self.resolve_for_write(raw)?;
        let before = match fs::read(&target) {
            Ok(bytes) => Some(short_hash(&bytes)),
            Err(_) => None,
        };
        atomic_write(&target, content.as_bytes()).map_err(|e| io_refusal("write", &rel, e))?;
        Ok(EditRecord {
            path: rel,
            before,
            after: short_hash(content.as_bytes()),
            bytes: content.len() as u64,
        })
    }

    /// Replaces the single occurrence of `expected` with `replacement`.
    pub fn replace(
        &self,
        raw: &str,
        expected: &str,
        replacement: &str,
    ) -> Result<EditRecord, PathRefusal> {
        let (rel, target) = self.resolve_for_write(raw)?;
        let bytes = fs::read(&target).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => PathRefusal::NotFound(raw.to_string()),
            _ => io_refusal("read", &rel, e),
        })?;
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
        atomic_write(&target, updated.as_bytes()).map_err(|e| io_refusal("write", &rel, e))?;
        Ok(EditRecord {
            path: rel,
            before: Some(short_hash(text.as_bytes())),
            after: short_hash(updated.as_bytes()),
            bytes: updated.len() as u64,
        })
    }
}

fn io_refusal(action: &'static str, rel: &str, e: std::io::Error) -> PathRefusal {
    PathRefusal::Io {
        action,
        path: rel.to_string(),
        message: e.to_string(),
    }
}

/// Writes through a temporary file in the same directory, then renames.
fn atomic_write(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = target
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent directory"))?;
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    if let Ok(meta) = fs::metadata(target) {
        fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// Recursive listing; returns false when [`LIST_LIMIT`] cut it short.
fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> std::io::Result<bool> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= LIST_LIMIT {
            return Ok(false);
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if SKIP_IN_LISTINGS.contains(&name.as_str()) {
            continue;
        }
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            out.push(format!("{prefix}{name}/"));
            if !walk(&entry.path(), &format!("{prefix}{name}/"), out)? {
                return Ok(false);
            }
        } else {
            out.push(format!("{prefix}{name}"));
        }
    }
    Ok(true)
}

/// Copies a directory tree; symlinks are copied as symlinks, `.git` skipped.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            copy_tree(&src, &dst)?;
        } else if file_type.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else if file_type.is_file() {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
