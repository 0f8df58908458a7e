//! Git's patch format: writing one (`diff --git` sections with modes, full
//! blob ids, text hunks and `GIT binary patch` literals, so `git apply`
//! reproduces every byte) and reading one back onto a tree.
//!
//! - `blob.rs`: git's object ids and its text/binary rule.
//! - `base85.rs`: the base85 lines of `GIT binary patch`.
//! - `quote.rs`: C-style path quoting.
//! - `hunks.rs`: text hunks computed in bounded time: Myers with a deadline,
//!   after which the rest of a file is one coarse hunk — larger, never wrong.
//! - `write.rs`: one file's section.
//! - `apply.rs`: applying a patch in git's format (or a plain unified diff,
//!   parsed by `diffy`) to a tree beneath a directory handle.
//! - `tests.rs`: round trips through `apply.rs` and `git apply`.
//!
//! Never does: decide which paths a patch may touch (callers pass that in),
//! follow a symlink in the tree it applies to (every write goes through
//! [`crate::beneath`]), or read a workspace.

mod apply;
mod base85;
mod blob;
mod hunks;
mod quote;
mod write;

pub(crate) use apply::{Applied, ApplyError, LinkRefused, apply_to_tree, apply_with_links};
pub(crate) use blob::{Mode, blob_id};
pub(crate) use write::{FileDiff, Side, write_file_diff};

#[cfg(test)]
mod tests;
