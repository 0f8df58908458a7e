//! Saving what the patch phase found: both sides of each change read
//! (through descriptors), the runner's copy written ([`super::carried`]),
//! and `patch.diff` in git's format, up to [`DIFF_CAP`], written through a
//! temporary file.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::Digest as _;

use super::carried::CopyWriter;
use super::patch::{
    COPY_CAP, Change, DIFF_CAP, FILE_CAP, PatchError, PatchInputs, SavedPatch, reject, too_much,
    workspace_problem,
};
use crate::beneath::{Dir, Error as Beneath, read_open};
use crate::gitdiff::{FileDiff, Mode, Side, write_file_diff};
use crate::hash::short_hash;

/// Reads each change's two sides and saves the copy and `patch.diff`.
pub(super) fn save(
    inputs: &PatchInputs<'_>,
    source: &Dir,
    workspace: &Dir,
    changes: &[Change],
) -> Result<SavedPatch, PatchError> {
    let mut copy = CopyWriter::create(inputs.runs)?;
    let mut diff = DiffFile::create(&inputs.runs.join("patch.diff"))?;
    let mut files = Vec::with_capacity(changes.len());
    let mut carried = 0u64;
    for change in changes {
        let rel = change.rel.as_str();
        let new = if let Some(target) = &change.link {
            Some((target.as_bytes().to_vec(), Mode::Symlink))
        } else if change.kept {
            let (file, meta) = workspace
                .open_file(Path::new(rel))
                .map_err(|e| workspace_problem(inputs.workspace, rel, e))?;
            let bytes = read_open(&file, meta, FILE_CAP)
                .map_err(|e| workspace_problem(inputs.workspace, rel, e))?;
            Some((bytes, Mode::of_file(meta.mode)))
        } else {
            None
        };
        let old = match read_source(inputs.source, source, change)? {
            SourceSide::Absent => None,
            SourceSide::Present(bytes, mode) => Some((bytes, mode)),
            SourceSide::OverCap => {
                // The copy carries the deletion; the diff cannot show it.
                copy.delete(rel)?;
                diff.leave_out(rel);
                files.push(change.rel.clone());
                continue;
            }
        };
        let (before, after) = (side(&old), side(&new));
        if let (Some(b), Some(a)) = (before, after)
            && b.content == a.content
            && b.mode == a.mode
        {
            // Changed back since the walk.
            continue;
        }
        match (&new, &change.link) {
            (Some(_), Some(target)) => copy.link(rel, target)?,
            (Some((bytes, mode)), None) => {
                carried += bytes.len() as u64;
                if carried > COPY_CAP {
                    return Err(too_much(rel));
                }
                copy.write(rel, bytes, *mode)?;
            }
            (None, _) => copy.delete(rel)?,
        }
        let mut section = String::new();
        // A file turned into a link (or back) is a deletion and a
        // creation, as git writes a change of type.
        let link = |side: Option<Side<'_>>| side.map(|s| s.mode == Mode::Symlink);
        let sides = match (before, after) {
            (Some(_), Some(_)) if link(before) != link(after) => {
                vec![(before, None), (None, after)]
            }
            _ => vec![(before, after)],
        };
        for (old, new) in sides {
            let file = FileDiff {
                path: rel,
                old,
                new,
            };
            write_file_diff(&file, inputs.deadline, &mut section);
        }
        diff.push(rel, &section)?;
        files.push(change.rel.clone());
    }
    let files_hash = copy.finish()?;
    let (diff_bytes, diff_hash, partial) = diff.finish()?;
    Ok(SavedPatch {
        files,
        diff_bytes,
        diff_hash,
        files_hash,
        partial,
    })
}

fn side(side: &Option<(Vec<u8>, Mode)>) -> Option<Side<'_>> {
    side.as_ref().map(|(content, mode)| Side {
        content,
        mode: *mode,
    })
}

/// The source side of a change.
enum SourceSide {
    /// A created file.
    Absent,
    Present(Vec<u8>, Mode),
    /// A deleted file over [`FILE_CAP`] (a changed one is rejected).
    OverCap,
}

fn read_source(root: &Path, source: &Dir, change: &Change) -> Result<SourceSide, PatchError> {
    let rel = Path::new(&change.rel);
    let failed = |e: Beneath| match e {
        Beneath::Io(source) => PatchError::Read {
            path: root.join(rel),
            source,
        },
        e => reject(&change.rel, format!("in the source: {e}")),
    };
    match change.old {
        None => Ok(SourceSide::Absent),
        Some(Mode::Symlink) => {
            let (parent, leaf) = source.open_parent(rel).map_err(failed)?;
            let target = parent.read_link(leaf).map_err(failed)?;
            let bytes = std::os::unix::ffi::OsStringExt::into_vec(target);
            Ok(SourceSide::Present(bytes, Mode::Symlink))
        }
        Some(_) => {
            let (file, meta) = source.open_file(rel).map_err(failed)?;
            if meta.size > FILE_CAP {
                return Ok(SourceSide::OverCap);
            }
            let bytes = read_open(&file, meta, FILE_CAP).map_err(failed)?;
            Ok(SourceSide::Present(bytes, Mode::of_file(meta.mode)))
        }
    }
}

/// `patch.diff`, written through a temporary file: the sections in order,
/// up to [`DIFF_CAP`]; the files left out are named on its first line.
struct DiffFile {
    path: PathBuf,
    temp: PathBuf,
    out: std::io::BufWriter<fs::File>,
    bytes: u64,
    hasher: sha2::Sha256,
    left_out: Vec<String>,
}

impl DiffFile {
    fn create(path: &Path) -> Result<DiffFile, PatchError> {
        let temp = path.with_extension("diff.tmp");
        let file = fs::File::create(&temp).map_err(|source| PatchError::Write {
            path: temp.clone(),
            source,
        })?;
        Ok(DiffFile {
            path: path.to_path_buf(),
            temp,
            out: std::io::BufWriter::new(file),
            bytes: 0,
            hasher: sha2::Sha256::new(),
            left_out: Vec::new(),
        })
    }

    fn push(&mut self, rel: &str, section: &str) -> Result<(), PatchError> {
        if self.bytes + section.len() as u64 > DIFF_CAP {
            self.leave_out(rel);
            return Ok(());
        }
        self.out
            .write_all(section.as_bytes())
            .map_err(|source| PatchError::Write {
                path: self.temp.clone(),
                source,
            })?;
        self.hasher.update(section.as_bytes());
        self.bytes += section.len() as u64;
        Ok(())
    }

    fn leave_out(&mut self, rel: &str) {
        self.left_out.push(rel.to_string());
    }

    /// Puts `patch.diff` in place: its size and short hash, and whether it
    /// is partial.
    fn finish(&mut self) -> Result<(u64, String, bool), PatchError> {
        let write = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PatchError::Write { path, source }
        };
        self.out
            .flush()
            .and_then(|()| self.out.get_ref().sync_all())
            .map_err(write(&self.temp))?;
        if self.left_out.is_empty() {
            fs::rename(&self.temp, &self.path).map_err(write(&self.path))?;
            let digest = std::mem::take(&mut self.hasher).finalize();
            return Ok((self.bytes, hex_prefix(&digest), false));
        }
        let note = format!(
            "# partial patch: {} left out (over the patch's cap of {DIFF_CAP} bytes, or a \
             deleted file over {FILE_CAP} bytes); files/ and files.json carry every change\n",
            self.left_out.join(", ")
        );
        let mut out = fs::File::create(&self.path).map_err(write(&self.path))?;
        out.write_all(note.as_bytes())
            .and_then(|()| fs::File::open(&self.temp))
            .and_then(|mut from| std::io::copy(&mut from, &mut out))
            .and_then(|_| out.sync_all())
            .map_err(write(&self.path))?;
        let _ = fs::remove_file(&self.temp);
        let text = fs::read(&self.path).map_err(|source| PatchError::Read {
            path: self.path.clone(),
            source,
        })?;
        Ok((text.len() as u64, short_hash(&text), true))
    }
}

impl Drop for DiffFile {
    /// A diff left unfinished goes.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.temp);
    }
}

/// What [`short_hash`] gives for the bytes `digest` is the SHA-256 of.
fn hex_prefix(digest: &[u8]) -> String {
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}
