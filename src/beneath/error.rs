//! Why an operation beneath a directory was refused or failed, and the kinds
//! of file it tells apart.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::FileType;
use rustix::io::Errno;

/// The kind of a directory entry or an open descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Unknown,
}

impl Kind {
    pub(super) fn from_file_type(file_type: FileType) -> Kind {
        match file_type {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            FileType::Fifo => Kind::Fifo,
            FileType::Socket => Kind::Socket,
            FileType::CharacterDevice => Kind::CharDevice,
            FileType::BlockDevice => Kind::BlockDevice,
            FileType::Unknown => Kind::Unknown,
        }
    }

    /// How a message names the kind: "a FIFO", "a directory".
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::File => "a regular file",
            Kind::Dir => "a directory",
            Kind::Symlink => "a symlink",
            Kind::Fifo => "a FIFO",
            Kind::Socket => "a socket",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
            Kind::Unknown => "a file of unknown type",
        }
    }
}

/// Why an operation beneath a directory did not happen. Everything but
/// [`Error::Io`] is about what the tree holds (see [`Error::is_content`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("does not exist")]
    NotFound,
    #[error("is or passes through a symlink (symlinks are never followed)")]
    Symlink,
    #[error("resolves outside the directory")]
    Escapes,
    #[error("has a component that is not a directory")]
    NotDirectory,
    /// Opening a directory found something else, which is a directory
    /// again by the time it was looked at: something is swapping it.
    #[error("changed while it was being opened (something is replacing it)")]
    Changed,
    #[error("is a directory")]
    IsDirectory,
    #[error("is {}, not a regular file", .0.describe())]
    NotRegular(Kind),
    #[error("is {size} bytes, over the cap of {cap} bytes")]
    TooLarge { size: u64, cap: u64 },
    #[error("is nested deeper than {0} directories")]
    TooDeep(usize),
    #[error("is not a plain relative path")]
    BadPath,
    /// The path (or a name in it) is longer than the system takes.
    #[error("is a path longer than the system allows")]
    NameTooLong,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Whether the tree's content caused this (a symlink, a FIFO, a file
    /// too large, a path that vanished), as opposed to an I/O failure of
    /// the runtime itself.
    pub(crate) fn is_content(&self) -> bool {
        !matches!(self, Error::Io(_))
    }

    /// Maps the errno of an open or a lookup. `ENOTDIR` is "not a
    /// directory" (callers that opened with `O_DIRECTORY` tell a symlink
    /// apart themselves); `ENXIO` is what opening a socket gives.
    pub(super) fn from_errno(errno: Errno) -> Error {
        match errno {
            Errno::NOENT => Error::NotFound,
            Errno::LOOP => Error::Symlink,
            Errno::XDEV => Error::Escapes,
            Errno::NOTDIR => Error::NotDirectory,
            Errno::ISDIR => Error::IsDirectory,
            Errno::NXIO => Error::NotRegular(Kind::Socket),
            Errno::NAMETOOLONG => Error::NameTooLong,
            other => Error::Io(other.into()),
        }
    }
}

/// A file name for a message: UTF-8 parts as they are (control characters
/// escaped), any other byte as `\xNN`, so a name that is not UTF-8 is shown
/// exactly and never confused with a valid one.
pub(crate) fn escape_name(name: &OsStr) -> String {
    let mut out = String::new();
    for chunk in name.as_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() || c == '\\' {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

/// An [`Error`] and the path it is about, relative to the root of the
/// operation (`.` for the root itself).
#[derive(Debug, thiserror::Error)]
#[error("{}: {error}", show_path(.path))]
pub(crate) struct AtPath {
    pub(crate) path: std::path::PathBuf,
    pub(crate) error: Error,
}

impl AtPath {
    pub(crate) fn new(path: &std::path::Path, error: impl Into<Error>) -> AtPath {
        AtPath {
            path: path.to_path_buf(),
            error: error.into(),
        }
    }
}

fn show_path(path: &std::path::Path) -> String {
    if path.as_os_str().is_empty() {
        ".".to_string()
    } else {
        escape_name(path.as_os_str())
    }
}
