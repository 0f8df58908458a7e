//! [`Dir`]: a handle on a directory, and opening paths beneath it without
//! following any symlink.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::error::{Error, Kind};

/// Flags of every open: no controlling terminal, not inherited by commands,
/// and the last component is never followed.
const BASE: OFlags = OFlags::CLOEXEC
    .union(OFlags::NOCTTY)
    .union(OFlags::NOFOLLOW);
/// How `openat2` resolves: below the handle, through no symlink at all.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);
/// `openat2` reports EAGAIN when a concurrent rename might have let a
/// lookup escape; it is retried this many times before walking instead.
const OPENAT2_RETRIES: usize = 8;

/// Set once `openat2` returned ENOSYS (a kernel before 5.6, or a seccomp
/// filter that does not know it); from then on paths are walked.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Permission bits of directories this module creates (the umask applies),
/// as `std::fs::create_dir` does.
pub(super) const DIR_MODE: u32 = 0o777;

/// An open directory. Every path given to its methods is relative to it:
/// plain names separated by `/` (`.` components are ignored; `..`, a root
/// or an empty name are refused as [`Error::BadPath`]).
#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
}

/// What `fstat` said about an open regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) size: u64,
    /// Permission bits (`0o777` at most).
    pub(crate) mode: u32,
}

impl Dir {
    /// Opens `path` as a root. The path is the runtime's or the user's (a
    /// data dir, a manifest's source), so symlinks in it are followed; only
    /// what lies beneath is treated as hostile.
    pub(crate) fn open(path: &Path) -> std::io::Result<Dir> {
        let fd = rfs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Dir { fd })
    }

    /// Creates the directory `path` (which must not exist) and opens it.
    pub(crate) fn create(path: &Path) -> std::io::Result<Dir> {
        rfs::mkdir(path, Mode::from_raw_mode(DIR_MODE))?;
        let fd = rfs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | BASE,
            Mode::empty(),
        )?;
        Ok(Dir { fd })
    }

    pub(super) fn from_fd(fd: OwnedFd) -> Dir {
        Dir { fd }
    }

    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Opens the regular file `rel` read-only. It is opened non-blocking
    /// and checked with `fstat` on the descriptor: a FIFO, socket or device
    /// is refused without ever blocking, a directory too.
    pub(crate) fn open_file(&self, rel: &Path) -> Result<(File, Meta), Error> {
        let fd = self.open_beneath(rel, OFlags::RDONLY | OFlags::NONBLOCK)?;
        let meta = file_meta(&fd)?;
        Ok((File::from(fd), meta))
    }

    /// Opens the directory `rel` (the handle itself for an empty path).
    pub(crate) fn open_dir(&self, rel: &Path) -> Result<Dir, Error> {
        match self.open_beneath(rel, OFlags::RDONLY | OFlags::DIRECTORY) {
            Ok(fd) => Ok(Dir { fd }),
            Err(Error::NotDirectory) => Err(self.not_a_directory(rel)),
            Err(e) => Err(e),
        }
    }

    /// The kind of `rel` itself (a symlink at the end is reported as one),
    /// from an `O_PATH` descriptor: nothing is read, nothing can block.
    pub(crate) fn kind(&self, rel: &Path) -> Result<Kind, Error> {
        let fd = self.open_beneath(rel, OFlags::PATH)?;
        let stat = rfs::fstat(&fd).map_err(|e| Error::Io(e.into()))?;
        Ok(Kind::from_file_type(FileType::from_raw_mode(stat.st_mode)))
    }

    /// The existing parent directory of `rel`, and the last component.
    pub(crate) fn open_parent<'p>(&self, rel: &'p Path) -> Result<(Dir, &'p OsStr), Error> {
        let names = components(rel)?;
        let (leaf, parents) = names.split_last().ok_or(Error::BadPath)?;
        let parent: PathBuf = parents.iter().collect();
        Ok((self.open_dir(&parent)?, leaf))
    }

    /// Opens `rel` with `flags` (plus `O_CLOEXEC | O_NOCTTY | O_NOFOLLOW`),
    /// resolving it once, beneath this handle and through no symlink.
    pub(super) fn open_beneath(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, Error> {
        let names = components(rel)?;
        // Exactly the names checked: no `.`, no trailing `/`.
        let path: PathBuf = if names.is_empty() {
            PathBuf::from(".")
        } else {
            names.iter().collect()
        };
        let flags = with_base(flags);
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            for _ in 0..OPENAT2_RETRIES {
                match rfs::openat2(&self.fd, &path, flags, Mode::empty(), RESOLVE) {
                    Ok(fd) => return Ok(fd),
                    Err(Errno::AGAIN | Errno::INTR) => {}
                    Err(Errno::NOSYS) => {
                        NO_OPENAT2.store(true, Ordering::Relaxed);
                        break;
                    }
                    Err(e) => return Err(Error::from_errno(e)),
                }
            }
        }
        self.open_walking(&names, flags)
    }

    /// The fallback of [`Dir::open_beneath`]: one `openat(O_NOFOLLOW)` per
    /// component, each from the descriptor of the one before.
    pub(super) fn open_walking(&self, names: &[&OsStr], flags: OFlags) -> Result<OwnedFd, Error> {
        let flags = with_base(flags);
        let Some((leaf, parents)) = names.split_last() else {
            return rfs::openat(&self.fd, ".", flags, Mode::empty()).map_err(Error::from_errno);
        };
        let mut current: Option<OwnedFd> = None;
        for name in parents {
            let at = current.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            let next = rfs::openat(
                at,
                *name,
                with_base(OFlags::PATH | OFlags::DIRECTORY),
                Mode::empty(),
            )
            .map_err(|e| classify_not_dir(at, name, e))?;
            current = Some(next);
        }
        let at = current.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
        rfs::openat(at, *leaf, flags, Mode::empty()).map_err(Error::from_errno)
    }

    /// `rel` could not be opened as a directory: say whether it is a
    /// symlink, or a directory again (for the message only; the open was
    /// refused).
    fn not_a_directory(&self, rel: &Path) -> Error {
        match self.kind(rel) {
            Ok(Kind::Symlink) | Err(Error::Symlink) => Error::Symlink,
            Ok(Kind::Dir) => Error::Changed,
            _ => Error::NotDirectory,
        }
    }
}

/// `flags` plus [`BASE`]; `O_PATH` takes only `O_CLOEXEC`, `O_DIRECTORY`
/// and `O_NOFOLLOW` (`openat2` refuses anything else with it).
fn with_base(flags: OFlags) -> OFlags {
    if flags.contains(OFlags::PATH) {
        flags | OFlags::CLOEXEC | OFlags::NOFOLLOW
    } else {
        flags | BASE
    }
}

/// The plain names of `rel`, or [`Error::BadPath`].
pub(super) fn components(rel: &Path) -> Result<Vec<&OsStr>, Error> {
    let mut names = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) | Component::ParentDir => {
                return Err(Error::BadPath);
            }
        }
    }
    Ok(names)
}

/// `fstat` of an open descriptor that must be a regular file.
pub(super) fn file_meta(fd: &OwnedFd) -> Result<Meta, Error> {
    let stat = rfs::fstat(fd).map_err(|e| Error::Io(e.into()))?;
    match Kind::from_file_type(FileType::from_raw_mode(stat.st_mode)) {
        Kind::File => Ok(Meta {
            size: u64::try_from(stat.st_size).unwrap_or(0),
            mode: Mode::from_raw_mode(stat.st_mode).bits() & 0o777,
        }),
        Kind::Dir => Err(Error::IsDirectory),
        other => Err(Error::NotRegular(other)),
    }
}

/// An `openat(O_DIRECTORY | O_NOFOLLOW)` of `name` in `at` failed: ENOTDIR
/// is also what a symlink gives, so look (for the message only; a directory
/// now means it was swapped in the meantime).
pub(super) fn classify_not_dir(at: BorrowedFd<'_>, name: &OsStr, errno: Errno) -> Error {
    if errno != Errno::NOTDIR {
        return Error::from_errno(errno);
    }
    match rfs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => Error::Symlink,
            FileType::Directory => Error::Changed,
            _ => Error::NotDirectory,
        },
        Err(_) => Error::NotDirectory,
    }
}
