//! Walking a tree by descriptors: each directory's entries are read from its
//! handle, and each child directory is opened from its parent's handle with
//! `O_DIRECTORY | O_NOFOLLOW`, so a directory swapped for a symlink is never
//! entered.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::dir::{Dir, classify_not_dir};
use super::error::{AtPath, Error, Kind};

/// Deepest directory a walk or a copy enters (each level holds one
/// descriptor open).
pub(crate) const MAX_DEPTH: usize = 256;

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: OsString,
    /// From the directory entry, or `lstat` when the file system does not
    /// say; it may have changed by the time the entry is opened, which is
    /// why every open checks again.
    pub(crate) kind: Kind,
}

/// An entry met by [`walk`].
#[derive(Debug)]
pub(crate) struct Found<'a> {
    /// The directory holding the entry: open the entry from here, by name.
    pub(crate) dir: &'a Dir,
    /// The entry's path relative to the walk's root (names as bytes).
    pub(crate) rel: &'a Path,
    pub(crate) name: &'a OsStr,
    pub(crate) kind: Kind,
}

/// What the walk does after an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Enter it, if it is a directory.
    Descend,
    /// Go on with the next entry.
    Next,
    /// End the walk (it returns `false`: cut short).
    Stop,
}

/// What a walk calls for each entry, in name order, depth first.
pub(crate) trait Visitor {
    type Error: From<AtPath>;

    fn visit(&mut self, found: &Found<'_>) -> Result<Step, Self::Error>;

    /// A directory to descend into could not be entered: it is no longer a
    /// directory (a symlink now, say), vanished, or is [`MAX_DEPTH`] deep.
    /// The default ends the walk with the error.
    fn descend_failed(&mut self, found: &Found<'_>, error: Error) -> Result<(), Self::Error> {
        Err(AtPath::new(found.rel, error).into())
    }
}

impl Dir {
    /// The entries of this directory but `.` and `..`, sorted by name bytes.
    pub(crate) fn entries(&self) -> Result<Vec<Entry>, Error> {
        let io = |e: Errno| Error::Io(e.into());
        // A fresh descriptor: reading moves its offset, and this handle may
        // be shared.
        let fd = rfs::openat(
            self.fd(),
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        let mut stream = rfs::Dir::new(fd).map_err(io)?;
        let mut out = Vec::new();
        while let Some(entry) = stream.read() {
            let entry = entry.map_err(io)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsStr::from_bytes(name);
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    match rfs::statat(self.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => Kind::from_file_type(FileType::from_raw_mode(stat.st_mode)),
                        // Gone since the directory was read.
                        Err(Errno::NOENT) => continue,
                        Err(e) => return Err(io(e)),
                    }
                }
                known => Kind::from_file_type(known),
            };
            out.push(Entry {
                name: name.to_os_string(),
                kind,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The child directory `name` (one component), never through a symlink.
    pub(crate) fn open_subdir(&self, name: &OsStr) -> Result<Dir, Error> {
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
            return Err(Error::BadPath);
        }
        rfs::openat(
            self.fd(),
            name,
            OFlags::RDONLY
                | OFlags::DIRECTORY
                | OFlags::NOFOLLOW
                | OFlags::NOCTTY
                | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(Dir::from_fd)
        .map_err(|e| classify_not_dir(self.fd(), name, e))
    }

    /// The target of the symlink `name` (one component), as bytes.
    pub(crate) fn read_link(&self, name: &OsStr) -> Result<OsString, Error> {
        let target = rfs::readlinkat(self.fd(), name, Vec::new()).map_err(Error::from_errno)?;
        Ok(OsStr::from_bytes(target.as_bytes()).to_os_string())
    }
}

/// Walks the tree under `root`, depth first in name order. Returns `false`
/// when the visitor stopped it.
pub(crate) fn walk<V: Visitor>(root: &Dir, visitor: &mut V) -> Result<bool, V::Error> {
    walk_in(root, Path::new(""), 0, visitor)
}

fn walk_in<V: Visitor>(
    dir: &Dir,
    rel: &Path,
    depth: usize,
    visitor: &mut V,
) -> Result<bool, V::Error> {
    for entry in dir.entries().map_err(|e| AtPath::new(rel, e))? {
        let child = rel.join(&entry.name);
        let found = Found {
            dir,
            rel: &child,
            name: &entry.name,
            kind: entry.kind,
        };
        match visitor.visit(&found)? {
            Step::Stop => return Ok(false),
            Step::Descend if entry.kind == Kind::Dir => {
                if depth + 1 >= MAX_DEPTH {
                    visitor.descend_failed(&found, Error::TooDeep(MAX_DEPTH))?;
                    continue;
                }
                match dir.open_subdir(&entry.name) {
                    Ok(sub) => {
                        if !walk_in(&sub, &child, depth + 1, visitor)? {
                            return Ok(false);
                        }
                    }
                    Err(e) => visitor.descend_failed(&found, e)?,
                }
            }
            Step::Descend | Step::Next => {}
        }
    }
    Ok(true)
}
