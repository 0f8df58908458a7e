//! Command-line syntax. Only `cli` sees these types; commands receive plain
//! values resolved from them.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Runs automated coding tasks with language models, safely and reproducibly.
#[derive(Debug, Parser)]
#[command(name = "agent-runtime", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Enqueue a bare lifecycle task. Prints enqueued=true the first time, enqueued=false after.
    Enqueue {
        /// Data directory (holds events.log); created if missing.
        data: PathBuf,
        /// Job id: letters, digits, '.', '_' and '-'.
        id: String,
        /// Attempts allowed in total (the first run plus retries).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=100))]
        attempts: u32,
    },
    /// Show one row per job, replayed from the log. Never writes.
    Status {
        data: PathBuf,
        /// Print a JSON document instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Live view of the log: re-renders on change, exits when every job is terminal.
    Watch {
        data: PathBuf,
        /// How often to look for changes, in milliseconds.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(20..=60_000))]
        interval_ms: u64,
    },
    /// Durably cancel a queued or running job; its runner stops within a second.
    Cancel { data: PathBuf, id: String },
    /// Requeue a failed job if attempts remain.
    Retry { data: PathBuf, id: String },
    /// Check job manifests without running them; exit 0 if all are valid, 2 otherwise.
    Validate {
        /// Manifest files, directories (every *.toml inside) or globs.
        #[arg(required = true)]
        jobs: Vec<PathBuf>,
    },
    /// Print a published JSON Schema.
    Schema {
        #[arg(value_enum)]
        which: SchemaName,
    },
}

/// The schemas `schema` can print.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SchemaName {
    /// The decision a model returns each step.
    Decision,
}
