//! File operations beneath a directory descriptor, for trees that something
//! else may be changing at the same time (a workspace where a command the
//! agent started keeps running).
//!
//! - `dir.rs`: [`Dir`], a handle on a directory, and opening a path relative to
//!   it with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//!   RESOLVE_NO_MAGICLINKS)` (or, where the kernel lacks `openat2`, one
//!   `openat(O_NOFOLLOW)` per component from the root handle); refusing
//!   anything that is not the kind of file expected by `fstat` on the open
//!   descriptor, without blocking (FIFOs, sockets and devices are opened
//!   `O_NONBLOCK` and refused).
//! - `read.rs`: reads capped on the descriptor's size before anything is
//!   allocated.
//! - `write.rs`: `mkdirat`; atomic replacement (a temporary file created
//!   `O_EXCL` in the parent's handle, written, fsynced, renamed within that
//!   same handle); removing one entry or a whole tree by descriptors.
//! - `walk.rs`: walks that open each child directory from its parent's handle.
//! - `copy.rs`: copies that carry names as bytes and symlinks as symlinks.
//! - `error.rs`: refusals and file kinds.
//! - `tests.rs`: symlinks, FIFOs, huge sparse files and names that are not
//!   UTF-8.
//!
//! Never does: follow a symlink (a symlink anywhere in a path is refused; a
//! rename onto a symlink replaces the link itself), resolve the same path twice
//! for one operation (what is checked is the descriptor that is then used),
//! block on a FIFO, open anything by an absolute or `..` path below the root,
//! or decide policy (which paths are editable, what a refusal means for the
//! model or the attempt): callers do.

mod copy;
mod dir;
mod error;
mod read;
mod walk;
mod write;

#[cfg(test)]
mod tests;

pub(crate) use copy::{copy_into, copy_tree, overlay};
pub(crate) use dir::Dir;
pub(crate) use error::{AtPath, Error, Kind, escape_name};
pub(crate) use read::{read_open, same_content};
pub(crate) use walk::{Found, Step, Visitor, walk};
