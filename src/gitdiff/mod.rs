//! Git's patch format: writing one (`diff --git` sections with modes, full
//! blob ids, text hunks and `GIT binary patch` literals, so `git apply`
//! reproduces every byte) and reading one back onto a tree.
//!
//! Owns: git's object ids and its text/binary rule (`blob.rs`), git's
//! base85 lines (`base85.rs`), C-style path quoting (`quote.rs`), text
//! hunks computed in bounded time (`hunks.rs`: Myers with a deadline, after
//! which the rest of a file is one coarse hunk — larger, never wrong), one
//! file's section (`write.rs`), and applying a patch in git's format (or a
//! plain unified diff) to a tree beneath a directory handle (`apply.rs`).
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

pub(crate) use apply::{Applied, ApplyError, apply_to_tree};
pub(crate) use blob::{Mode, blob_id};
pub(crate) use write::{FileDiff, Side, write_file_diff};

#[cfg(test)]
mod tests;
