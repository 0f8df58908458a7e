//! Writing beneath a [`Dir`]: missing parents made with `mkdirat`, and
//! atomic replacement of one entry through a temporary file renamed within
//! the same directory handle.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::dir::{DIR_MODE, Dir, components};
use super::error::Error;
use super::walk::MAX_DEPTH;

/// Attempts at a fresh temporary name before giving up.
const TEMP_ATTEMPTS: u64 = 64;
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Dir {
    /// The parent directory of `rel` and its last component; missing
    /// directories are created on the way, one component at a time from
    /// this handle, and none is ever reached through a symlink.
    pub(crate) fn create_parents<'p>(&self, rel: &'p Path) -> Result<(Dir, &'p OsStr), Error> {
        let names = components(rel)?;
        let (leaf, parents) = names.split_last().ok_or(Error::BadPath)?;
        let mut current = self.open_dir(Path::new(""))?;
        for name in parents {
            current = current.subdir_creating(name)?;
        }
        Ok((current, leaf))
    }

    /// The child directory `name`, created if it is missing.
    pub(crate) fn subdir_creating(&self, name: &OsStr) -> Result<Dir, Error> {
        match self.open_subdir(name) {
            Err(Error::NotFound) => {
                match rfs::mkdirat(self.fd(), name, Mode::from_raw_mode(DIR_MODE)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(Error::from_errno(e)),
                }
                self.open_subdir(name)
            }
            other => other,
        }
    }

    /// Creates or replaces `rel` with `bytes` (permission bits `mode`),
    /// creating missing parent directories.
    pub(crate) fn write_file(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
        let (parent, leaf) = self.create_parents(rel)?;
        parent.replace_file(leaf, bytes, mode)
    }

    /// Atomically replaces the entry `name` of this directory with a
    /// regular file holding `bytes`. Whatever `name` was (a file, a
    /// symlink) is replaced, never written through; a directory there makes
    /// it fail with [`Error::IsDirectory`].
    pub(crate) fn replace_file(&self, name: &OsStr, bytes: &[u8], mode: u32) -> Result<(), Error> {
        self.replace_with(name, mode, |file| file.write_all(bytes))
    }

    /// [`Dir::replace_file`] with the content written by `fill`.
    pub(super) fn replace_with(
        &self,
        name: &OsStr,
        mode: u32,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        let (temp, fd) = self.create_temp()?;
        let mut file = File::from(fd);
        let result = rfs::fchmod(&file, Mode::from_raw_mode(mode & 0o777))
            .map_err(std::io::Error::from)
            .and_then(|()| fill(&mut file))
            .and_then(|()| file.sync_all())
            .map_err(Error::Io)
            .and_then(|()| self.rename_within(&temp, name));
        if result.is_err() {
            let _ = rfs::unlinkat(self.fd(), &temp, AtFlags::empty());
        }
        result
    }

    /// Atomically replaces the entry `name` with a symlink to `target`.
    pub(crate) fn replace_symlink(&self, name: &OsStr, target: &OsStr) -> Result<(), Error> {
        let temp = self.fresh_name(|temp| rfs::symlinkat(target, self.fd(), temp))?;
        let result = self.rename_within(&temp, name);
        if result.is_err() {
            let _ = rfs::unlinkat(self.fd(), &temp, AtFlags::empty());
        }
        result
    }

    /// Removes the entry `name` of this directory: a file, or a symlink
    /// itself (never what it points to); a directory there is refused as
    /// [`Error::IsDirectory`].
    pub(crate) fn remove_entry(&self, name: &OsStr) -> Result<(), Error> {
        rfs::unlinkat(self.fd(), name, AtFlags::empty()).map_err(Error::from_errno)
    }

    /// Removes the entry `name` and, when it is a directory, everything
    /// in it, each child removed from its parent's handle (a symlink is
    /// removed itself, never followed), at most [`MAX_DEPTH`] deep.
    pub(crate) fn remove_tree(&self, name: &OsStr) -> Result<(), Error> {
        self.remove_tree_in(name, 0)
    }

    fn remove_tree_in(&self, name: &OsStr, depth: usize) -> Result<(), Error> {
        match self.remove_entry(name) {
            Err(Error::IsDirectory) => {}
            other => return other,
        }
        if depth >= MAX_DEPTH {
            return Err(Error::TooDeep(MAX_DEPTH));
        }
        let sub = self.open_subdir(name)?;
        for entry in sub.entries()? {
            sub.remove_tree_in(&entry.name, depth + 1)?;
        }
        rfs::unlinkat(self.fd(), name, AtFlags::REMOVEDIR).map_err(Error::from_errno)
    }

    /// `renameat` from `from` to `to`, both in this directory.
    fn rename_within(&self, from: &OsStr, to: &OsStr) -> Result<(), Error> {
        rfs::renameat(self.fd(), from, self.fd(), to).map_err(Error::from_errno)
    }

    /// A new, empty, private regular file in this directory.
    fn create_temp(&self) -> Result<(OsString, std::os::fd::OwnedFd), Error> {
        let mut created = None;
        let name = self.fresh_name(|temp| {
            let fd = rfs::openat(
                self.fd(),
                temp,
                OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::NOFOLLOW
                    | OFlags::NOCTTY
                    | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )?;
            created = Some(fd);
            Ok(())
        })?;
        match created {
            Some(fd) => Ok((name, fd)),
            None => Err(Error::Io(std::io::Error::other("no temporary file"))),
        }
    }

    /// Calls `make` with fresh names until one does not exist yet.
    fn fresh_name(
        &self,
        mut make: impl FnMut(&OsStr) -> rustix::io::Result<()>,
    ) -> Result<OsString, Error> {
        for _ in 0..TEMP_ATTEMPTS {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let name = OsString::from(format!(".agent-runtime-{}-{n}.tmp", std::process::id()));
            match make(&name) {
                Ok(()) => return Ok(name),
                Err(Errno::EXIST) => {}
                Err(e) => return Err(Error::from_errno(e)),
            }
        }
        Err(Error::Io(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "no free temporary name",
        )))
    }
}
