//! The command-line edge: parse arguments once, dispatch to a command, map the
//! result to an exit code. The only layer that prints: the output macros
//! `outln!`, `out!` and `errln!` (here) pass everything printed through the
//! escaping function.
//!
//! - `args.rs`: the argument syntax; only `cli` sees these types, commands
//!   receive plain values resolved from them.
//! - `exit.rs`: the exit-code policy, in one place.
//! - `help_text.rs`: the examples and exit codes that end every command's
//!   `--help`.
//! - `batch.rs`: `batch` and `report`, and Ctrl-C: a second SIGINT within 1 s
//!   is the same interrupt, a later one quits after saying what the log holds.
//! - `jobs.rs`: `enqueue --job`, `run` and `replay`.
//! - `lifecycle.rs`: `enqueue`, `cancel`, `retry`, one transaction each.
//! - `status.rs`: `status` and `watch`, with the width tables fit (`COLUMNS`)
//!   and the height `watch`'s frame fits (`LINES`).
//! - `check.rs`: `check`, validating tasks with their oracles.
//! - `bench.rs`: what `cargo bench --bench bridge` and `--bench agent`
//!   measure, reached from the benches (not a command).
//! - `demo.rs`: `demo`, with the bundled jobs that the crate's `build.rs`
//!   embeds in the binary.
//! - `doctor.rs`: `doctor`, its lines a pure function of what the sandbox probe
//!   found.
//! - `exec.rs`: `exec`, and the programs `doctor` and `validate --verbose`
//!   show.
//! - `validate.rs`: `validate`, and loading every manifest of a command,
//!   refusing two with one id; `schema`.
//! - `import.rs`: `import exercism` and `import swebench`: what was written,
//!   what was left out and why.
//! - `view.rs`: `view`: start the local web viewer, print its URL, serve until
//!   Ctrl-C.
//!
//! Never holds logic that a library caller would need.

/// `println!` for command output: a closed stdout (`status | head`) becomes
/// an error the exit-code policy treats as a quiet end, never a panic.
/// Everything printed passes through the one escaping function (line
/// breaks and tabs kept), so no control or bidi character a model, a
/// workspace or a command produced reaches the terminal raw.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        writeln!(std::io::stdout(), "{}", crate::escape::block(&text))?
    }};
}

/// `print!` counterpart of [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        write!(std::io::stdout(), "{}", crate::escape::block(&text))?
    }};
}

/// `eprintln!` through the escaping function, like [`outln!`]; a closed
/// stderr is ignored.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", crate::escape::block(&text));
    }};
}

mod agents;
mod args;
mod batch;
#[doc(hidden)]
pub mod bench;
mod check;
mod demo;
mod doctor;
mod exec;
mod exit;
mod help_text;
mod import;
mod jobs;
mod lifecycle;
mod status;
mod validate;
mod view;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

pub use args::{AgentsCommand, Cli, Command, ImportCommand, SchemaName};
pub use exit::{Completion, EXIT_ERROR, EXIT_FAILED, EXIT_INTERRUPTED, exit_code};

/// Entry point used by `main`.
pub fn main() -> ExitCode {
    // Sandboxed commands must not read the runner's /proc files (its
    // environment holds provider keys).
    crate::sandbox::protect_runner();
    // Before any thread starts: one heap, so what one thread frees another
    // reuses (see the executor's `heap`).
    crate::exec::share_one_heap();
    let result = run(Cli::parse());
    // Cgroups kept for reuse between commands go with the runner, and
    // so do the scratch directories still being removed.
    crate::sandbox::release_idle_cgroups();
    crate::exec::remove_pending_scratch();
    exit_code(result)
}

/// Runs one parsed command.
pub fn run(cli: Cli) -> anyhow::Result<Completion> {
    match cli.command {
        Command::Enqueue {
            data,
            id,
            job,
            replace,
            attempts,
        } => match id {
            Some(id) => lifecycle::enqueue(&data, &id, attempts),
            None => jobs::enqueue_jobs(&data, &job, replace),
        },
        Command::Run {
            data,
            id,
            workspace,
            provider,
            keep,
        } => jobs::run(&data, &id, workspace.as_deref(), provider.as_deref(), keep),
        Command::Gc { data, keep } => jobs::gc(&data, keep),
        Command::Status { data, json, full } => status::status(&data, json, full),
        Command::Batch(args) => batch::batch(args),
        Command::Report {
            compare,
            level,
            margin,
            seed,
            ..
        } if !compare.is_empty() => batch::compare(&compare, level, margin, seed),
        Command::Report { data, out, .. } => {
            let out = match (out, data.as_slice()) {
                (Some(out), _) => out,
                (None, [one]) => one.join("report"),
                (None, _) => anyhow::bail!(
                    "{} data dirs merge into one report: say where it goes with --out DIR",
                    data.len()
                ),
            };
            batch::report(&data, &out)
        }
        Command::Demo {
            jobs,
            parallel,
            keep,
        } => demo::demo(jobs, parallel, keep),
        Command::Watch { data, interval_ms } => {
            status::watch(&data, Duration::from_millis(interval_ms))
        }
        Command::Cancel { data, id } => lifecycle::cancel(&data, &id),
        Command::Retry { data, id } => lifecycle::retry(&data, &id),
        Command::Exec {
            allow,
            workspace,
            timeout,
            output_cap,
            memory,
            processes,
            sandbox,
            network,
            env,
            argv,
        } => exec::exec(exec::ExecArgs {
            allow,
            workspace,
            timeout,
            output_cap,
            memory,
            processes,
            sandbox,
            network,
            env,
            argv,
        }),
        Command::Doctor { data } => doctor::doctor(data.as_deref()),
        Command::Replay {
            data,
            instance,
            attempt,
            out,
        } => jobs::replay(&data, &instance, attempt, &out),
        Command::Check(args) => check::check(&args),
        Command::Import(which) => import::import(which),
        Command::Agents { install, data } => match install {
            Some(AgentsCommand::Install { data, agents }) => agents::install_agents(&data, &agents),
            None => agents::list(data.as_deref()),
        },
        Command::Validate { jobs, verbose } => validate::validate(&jobs, verbose),
        Command::Schema { which } => validate::schema(which),
        Command::View { data, port } => view::view(&data, port),
    }
}
