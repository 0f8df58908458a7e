//! Importers: benchmarks that already exist, as they are, turned into job
//! folders (`DIR/<id>/job.toml` with its `source/`, hidden tests and oracle).
//!
//! - `exercism.rs`: Exercism / Aider-polyglot track layouts.
//! - `swebench.rs`: SWE-bench instances, each source a fresh git repository at
//!   the base commit.
//! - `git.rs`: every git command the importers run: exporting a base tree and
//!   making the fresh repository holding it alone.
//! - `job_dir.rs`: writing a job folder and its manifest.
//!
//! What differs per language (test commands, results files, setup, build
//! checks, enabling skipped tests) is the language table's
//! ([`crate::lang::Tooling`]); nothing here matches on a language beyond
//! naming the one a track says it is. Never prints, never runs a job, and
//! never writes outside the output directory.

mod exercism;
mod git;
mod job_dir;
mod swebench;

use std::path::PathBuf;

pub(crate) use exercism::{ExercismOptions, import_exercism};
pub(crate) use swebench::{SetupChoice, SwebenchOptions, import_swebench};

/// What an import wrote and what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ImportReport {
    /// Job ids and the manifests written, in order.
    pub written: Vec<(String, PathBuf)>,
    /// What was left out and why: (name, reason).
    pub skipped: Vec<(String, String)>,
    /// Facts worth saying about jobs that were written: (id, note).
    pub notes: Vec<(String, String)>,
}

/// What became of one exercise or instance: imported, or left out and
/// why (named in [`ImportReport::skipped`]).
#[derive(Debug)]
enum Taken<T> {
    Imported(T),
    Left(String),
}

/// Why an import could not run at all (one bad exercise or instance is
/// skipped and named instead).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImportError {
    #[error("{}: {message}", .path.display())]
    Input { path: PathBuf, message: String },
    #[error("failed to write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: already exists; choose a new --out directory or remove it", .0.display())]
    Exists(PathBuf),
}

fn input(path: impl Into<PathBuf>, message: impl Into<String>) -> ImportError {
    ImportError::Input {
        path: path.into(),
        message: message.into(),
    }
}

fn write_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ImportError + '_ {
    move |source| ImportError::Write {
        path: path.to_path_buf(),
        source,
    }
}
