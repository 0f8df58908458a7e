//! Copies between trees, by descriptors: names carried as bytes, symlinks
//! copied as symlinks (never followed), regular files with their permission
//! bits. FIFOs, sockets and devices are not copied.

use std::ffi::OsStr;
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};

use super::dir::{DIR_MODE, Dir};
use super::error::{AtPath, Error, Kind};
use super::walk::MAX_DEPTH;

/// Copies the tree at `from` into the new directory `to` (which must not
/// exist; its parent must), leaving out entries named in `skip` at any
/// depth. Returns a handle on `to`.
pub(crate) fn copy_tree(from: &Path, to: &Path, skip: &[&str]) -> Result<Dir, AtPath> {
    let root = Path::new("");
    let source = Dir::open(from).map_err(|e| AtPath::new(root, e))?;
    let dest = Dir::create(to).map_err(|e| AtPath::new(root, e))?;
    copy_dir(&source, &dest, root, skip, 0)?;
    Ok(dest)
}

/// Copies the tree at `from` into the existing, empty directory `to`, as
/// [`copy_tree`] does.
pub(crate) fn copy_into(from: &Path, to: &Path, skip: &[&str]) -> Result<(), AtPath> {
    let root = Path::new("");
    let source = Dir::open(from).map_err(|e| AtPath::new(root, e))?;
    let dest = Dir::open(to).map_err(|e| AtPath::new(root, e))?;
    copy_dir(&source, &dest, root, skip, 0)
}

fn copy_dir(from: &Dir, to: &Dir, rel: &Path, skip: &[&str], depth: usize) -> Result<(), AtPath> {
    for entry in from.entries().map_err(|e| AtPath::new(rel, e))? {
        if skip.iter().any(|s| entry.name == *s) {
            continue;
        }
        let child = rel.join(&entry.name);
        let at = |e: Error| AtPath::new(&child, e);
        let name = entry.name.as_os_str();
        match entry.kind {
            Kind::Dir => {
                if depth + 1 >= MAX_DEPTH {
                    return Err(at(Error::TooDeep(MAX_DEPTH)));
                }
                let sub_from = from.open_subdir(name).map_err(at)?;
                rfs::mkdirat(to.fd(), name, Mode::from_raw_mode(DIR_MODE))
                    .map_err(|e| at(Error::from_errno(e)))?;
                let sub_to = to.open_subdir(name).map_err(at)?;
                copy_dir(&sub_from, &sub_to, &child, skip, depth + 1)?;
            }
            Kind::Symlink => {
                let target = from.read_link(name).map_err(at)?;
                rfs::symlinkat(&target, to.fd(), name).map_err(|e| at(Error::from_errno(e)))?;
            }
            Kind::File => copy_file(from, to, name).map_err(at)?,
            _ => {}
        }
    }
    Ok(())
}

/// Creates `name` in `to` (it must not exist) with the content and
/// permission bits of `name` in `from`.
fn copy_file(from: &Dir, to: &Dir, name: &OsStr) -> Result<(), Error> {
    let (mut source, meta) = from.open_file(Path::new(name))?;
    let fd = rfs::openat(
        to.fd(),
        name,
        OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NOCTTY
            | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(Error::from_errno)?;
    let mut dest = std::fs::File::from(fd);
    rfs::fchmod(&dest, Mode::from_raw_mode(meta.mode)).map_err(|e| Error::Io(e.into()))?;
    std::io::copy(&mut source, &mut dest)?;
    Ok(())
}

/// Copies every entry of the tree at `from` onto the tree at `to`,
/// replacing what is there under the same name: a file or symlink is
/// replaced atomically (never written through), a non-directory where
/// `from` has a directory is removed first.
pub(crate) fn overlay(from: &Path, to: &Path) -> Result<(), AtPath> {
    let root = Path::new("");
    let source = Dir::open(from).map_err(|e| AtPath::new(root, e))?;
    let dest = Dir::open(to).map_err(|e| AtPath::new(root, e))?;
    overlay_dir(&source, &dest, root, 0)
}

fn overlay_dir(from: &Dir, to: &Dir, rel: &Path, depth: usize) -> Result<(), AtPath> {
    for entry in from.entries().map_err(|e| AtPath::new(rel, e))? {
        let child = rel.join(&entry.name);
        let at = |e: Error| AtPath::new(&child, e);
        let name = entry.name.as_os_str();
        match entry.kind {
            Kind::Dir => {
                if depth + 1 >= MAX_DEPTH {
                    return Err(at(Error::TooDeep(MAX_DEPTH)));
                }
                let sub_from = from.open_subdir(name).map_err(at)?;
                let sub_to = match to.subdir_creating(name) {
                    Err(Error::Symlink | Error::NotDirectory) => {
                        rfs::unlinkat(to.fd(), name, AtFlags::empty())
                            .map_err(|e| at(Error::from_errno(e)))?;
                        to.subdir_creating(name)
                    }
                    other => other,
                }
                .map_err(at)?;
                overlay_dir(&sub_from, &sub_to, &child, depth + 1)?;
            }
            Kind::Symlink => {
                let target = from.read_link(name).map_err(at)?;
                to.replace_symlink(name, &target).map_err(at)?;
            }
            Kind::File => {
                let (mut source, meta) = from.open_file(Path::new(name)).map_err(at)?;
                to.replace_with(name, meta.mode, |dest| {
                    std::io::copy(&mut source, dest).map(|_| ())
                })
                .map_err(at)?;
            }
            _ => {}
        }
    }
    Ok(())
}
