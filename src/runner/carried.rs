//! The runner's copy of an attempt's changes, what acceptance lays on the
//! clean copy: `DATA/runs/<job>/<n>/files/` (each created or changed file
//! at its path, mode 644 or 755) and `files.json` beside it (every change:
//! the file's mode, size and SHA-256, a link's target, or its deletion). The `patch` event
//! records the SHA-256 of `files.json`, so acceptance, also one resumed
//! after a crash, uses exactly the bytes the patch phase saw, and a copy
//! that is not what was recorded is the runtime's fault, never the model's.
//!
//! Both the copy and the clean copy are written through directory
//! descriptors ([`crate::beneath`]): no symlink is followed on either side.
//! Attempts recorded before the copy existed have `patch.diff` alone; it is
//! applied as a patch ([`crate::gitdiff::apply_to_tree`]), and what does not
//! apply is the model's output, a rejection.

use std::fs;
use std::path::{Path, PathBuf};

use globset::GlobSet;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::patch::{FILE_CAP, PatchError, reject};
use crate::beneath::{Dir, Error as Beneath};
use crate::gitdiff::{Applied, ApplyError, Mode, apply_to_tree, apply_with_links};

/// Format version of `files.json`: 2 carries links; 1 (files and
/// deletions only) still reads.
const INDEX_VERSION: u32 = 2;
/// Largest `files.json` read back.
const INDEX_CAP: u64 = 64 * 1024 * 1024;

/// `files.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Index {
    version: u32,
    files: Vec<Entry>,
}

/// One change of the copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub path: String,
    #[serde(flatten)]
    pub change: Carry,
}

/// What happens to a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub(crate) enum Carry {
    /// Created or changed: `files/<path>` holds it.
    Write {
        /// Git's mode: `100644` or `100755`.
        mode: String,
        bytes: u64,
        sha256: String,
    },
    /// A symlink (git's mode `120000`) to `target`, a relative path that
    /// names a regular file of the tree ([`super::links`]).
    Link {
        target: String,
    },
    Delete,
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes the copy: files into `files.tmp/`, which becomes `files/` (and
/// `files.json` next to it) when [`CopyWriter::finish`] is called.
pub(super) struct CopyWriter {
    runs: PathBuf,
    staging: PathBuf,
    dir: Dir,
    entries: Vec<Entry>,
}

impl CopyWriter {
    pub(super) fn create(runs: &Path) -> Result<CopyWriter, PatchError> {
        let staging = runs.join("files.tmp");
        let write = |source| PatchError::Write {
            path: staging.clone(),
            source,
        };
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(write)?;
        }
        let dir = Dir::create(&staging).map_err(write)?;
        Ok(CopyWriter {
            runs: runs.to_path_buf(),
            staging,
            dir,
            entries: Vec::new(),
        })
    }

    pub(super) fn write(&mut self, rel: &str, bytes: &[u8], mode: Mode) -> Result<(), PatchError> {
        self.dir
            .write_file(Path::new(rel), bytes, mode.permissions())
            .map_err(|e| PatchError::Write {
                path: self.staging.join(rel),
                source: match e {
                    Beneath::Io(source) => source,
                    e => std::io::Error::other(e.to_string()),
                },
            })?;
        self.entries.push(Entry {
            path: rel.to_string(),
            change: Carry::Write {
                mode: mode.as_git().to_string(),
                bytes: bytes.len() as u64,
                sha256: sha256_hex(bytes),
            },
        });
        Ok(())
    }

    pub(super) fn link(&mut self, rel: &str, target: &str) -> Result<(), PatchError> {
        self.entries.push(Entry {
            path: rel.to_string(),
            change: Carry::Link {
                target: target.to_string(),
            },
        });
        Ok(())
    }

    pub(super) fn delete(&mut self, rel: &str) -> Result<(), PatchError> {
        self.entries.push(Entry {
            path: rel.to_string(),
            change: Carry::Delete,
        });
        Ok(())
    }

    /// Puts `files/` and `files.json` in place; the SHA-256 of `files.json`.
    pub(super) fn finish(mut self) -> Result<String, PatchError> {
        let write = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PatchError::Write { path, source }
        };
        let files = self.runs.join("files");
        if files.exists() {
            fs::remove_dir_all(&files).map_err(write(&files))?;
        }
        fs::rename(&self.staging, &files).map_err(write(&files))?;
        let index = Index {
            version: INDEX_VERSION,
            files: std::mem::take(&mut self.entries),
        };
        let mut text = serde_json::to_vec_pretty(&index)
            .map_err(|e| write(&self.runs.join("files.json"))(std::io::Error::other(e)))?;
        text.push(b'\n');
        let (path, temp) = (
            self.runs.join("files.json"),
            self.runs.join("files.json.tmp"),
        );
        fs::write(&temp, &text).map_err(write(&temp))?;
        fs::rename(&temp, &path).map_err(write(&path))?;
        Ok(sha256_hex(&text))
    }
}

impl Drop for CopyWriter {
    /// A copy left unfinished (the patch was rejected, or failed) goes.
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.staging);
    }
}

/// An attempt's changes as acceptance lays them on the clean copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Carried {
    /// The runner's copy: `files/` and the entries of `files.json`.
    Copy { files: PathBuf, entries: Vec<Entry> },
    /// `patch.diff` alone (attempts recorded before the copy existed).
    Diff(Vec<u8>),
}

impl Carried {
    /// The changes saved in `runs` (the attempt's artifacts dir), checked
    /// against `files_hash`, the hash the `patch` event recorded (`None`
    /// in logs written before the copy existed: `patch.diff` then).
    pub(crate) fn load(runs: &Path, files_hash: Option<&str>) -> Result<Carried, PatchError> {
        let Some(expected) = files_hash else {
            let path = runs.join("patch.diff");
            return fs::read(&path)
                .map(Carried::Diff)
                .map_err(|source| PatchError::Read { path, source });
        };
        let path = runs.join("files.json");
        let corrupt = |problem: String| PatchError::Corrupt {
            path: path.clone(),
            problem,
        };
        let text = match Dir::open(runs) {
            Ok(dir) => dir
                .read_capped(Path::new("files.json"), INDEX_CAP)
                .map(|(t, _)| t),
            Err(source) => Err(Beneath::Io(source)),
        }
        .map_err(|e| corrupt(format!("cannot be read: {e}")))?;
        let found = sha256_hex(&text);
        if found != expected {
            return Err(corrupt(format!(
                "its SHA-256 is {found}, the patch event recorded {expected}"
            )));
        }
        let index: Index =
            serde_json::from_slice(&text).map_err(|e| corrupt(format!("does not parse: {e}")))?;
        if !(1..=INDEX_VERSION).contains(&index.version) {
            return Err(corrupt(format!("unknown version {}", index.version)));
        }
        Ok(Carried::Copy {
            files: runs.join("files"),
            entries: index.files,
        })
    }

    /// Lays the changes on the tree at `root` (a clean copy of the source):
    /// each file written, each deletion made, beneath `root`. Only paths
    /// matching `editable` are touched.
    pub(crate) fn apply(&self, root: &Path, editable: &GlobSet) -> Result<Applied, PatchError> {
        self.apply_kept(root, editable, &|_| true)
    }

    /// [`Carried::apply`], leaving out the changes of the paths `keep`
    /// refuses (their clean version stays). A `patch.diff` alone (an
    /// attempt recorded before the copy existed) is applied whole.
    pub(crate) fn apply_kept(
        &self,
        root: &Path,
        editable: &GlobSet,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Applied, PatchError> {
        match self {
            Carried::Diff(text) => apply_diff(root, text, editable),
            Carried::Copy { files, entries } => {
                let kept: Vec<Entry> = entries.iter().filter(|e| keep(&e.path)).cloned().collect();
                lay_copy(root, files, &kept, editable)
            }
        }
    }

    /// The paths the changes touch, in order.
    pub(crate) fn paths(&self) -> Vec<String> {
        match self {
            Carried::Copy { entries, .. } => entries.iter().map(|e| e.path.clone()).collect(),
            Carried::Diff(_) => Vec::new(),
        }
    }
}

/// An old attempt's `patch.diff`: what does not apply is the model's
/// output, so it is a rejection.
fn apply_diff(root: &Path, text: &[u8], editable: &GlobSet) -> Result<Applied, PatchError> {
    apply_to_tree(root, text, &|p| editable.is_match(p), FILE_CAP).map_err(|e| match e {
        ApplyError::Io { path, source } => PatchError::Write {
            path: root.join(path),
            source,
        },
        ApplyError::Apply { path, message } => reject(&path, message),
        other => reject("patch.diff", other.to_string()),
    })
}

fn lay_copy(
    root: &Path,
    files: &Path,
    entries: &[Entry],
    editable: &GlobSet,
) -> Result<Applied, PatchError> {
    let corrupt = |problem: String| PatchError::Corrupt {
        path: files.to_path_buf(),
        problem,
    };
    let tree = Dir::open(root).map_err(|source| PatchError::Write {
        path: root.to_path_buf(),
        source,
    })?;
    let copy = Dir::open(files).map_err(|e| corrupt(format!("cannot be opened: {e}")))?;
    let mut applied = Applied::default();
    for entry in entries {
        let rel = entry.path.as_str();
        if !editable.is_match(rel) {
            return Err(corrupt(format!("{rel}: is not an editable path")));
        }
        let laid = |e: Beneath| match e {
            Beneath::Io(source) => PatchError::Write {
                path: root.join(rel),
                source,
            },
            e => PatchError::Lay {
                path: rel.to_string(),
                problem: e.to_string(),
            },
        };
        match &entry.change {
            Carry::Write {
                mode,
                bytes,
                sha256,
            } => {
                let permissions = match mode.as_str() {
                    "100644" => Mode::Regular.permissions(),
                    "100755" => Mode::Executable.permissions(),
                    other => return Err(corrupt(format!("{rel}: unknown mode {other}"))),
                };
                let (content, _) = copy
                    .read_capped(Path::new(rel), FILE_CAP)
                    .map_err(|e| corrupt(format!("{rel}: {e}")))?;
                if content.len() as u64 != *bytes || sha256_hex(&content) != *sha256 {
                    return Err(corrupt(format!(
                        "{rel}: its content is not what was recorded"
                    )));
                }
                tree.write_file(Path::new(rel), &content, permissions)
                    .map_err(laid)?;
                applied.written.push(entry.path.clone());
            }
            Carry::Link { target } => {
                let target = std::ffi::OsStr::new(target);
                super::links::lexical(rel, target)
                    .map_err(|why| corrupt(format!("{rel}: {why}")))?;
                tree.create_parents(Path::new(rel))
                    .and_then(|(parent, leaf)| parent.replace_symlink(leaf, target))
                    .map_err(laid)?;
                applied.written.push(entry.path.clone());
            }
            Carry::Delete => {
                match tree
                    .open_parent(Path::new(rel))
                    .and_then(|(parent, leaf)| parent.remove_entry(leaf))
                {
                    Ok(()) | Err(Beneath::NotFound) => {}
                    Err(e) => return Err(laid(e)),
                }
                applied.deleted.push(entry.path.clone());
            }
        }
    }
    Ok(applied)
}

/// Applies `text`, a patch in git's format or a unified diff (an oracle's,
/// say), onto `root`, refusing any path that is not editable; a link it
/// creates is made when [`super::links`]'s lexical rule lets a patch carry
/// it (the patch phase then checks what it leads to).
pub(crate) fn apply_patch(
    root: &Path,
    text: &str,
    editable: &GlobSet,
) -> Result<Applied, PatchError> {
    let links = |rel: &str, target: &std::ffi::OsStr| super::links::lexical(rel, target).map(drop);
    Ok(apply_with_links(
        root,
        text.as_bytes(),
        &|p| editable.is_match(p),
        &links,
        FILE_CAP,
    )?)
}
