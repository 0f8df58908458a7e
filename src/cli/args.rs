//! Command-line syntax. Only `cli` sees these types; commands receive plain
//! values resolved from them.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::manifest::{DEFAULT_MEMORY, DEFAULT_PROCESSES, MAX_PROCESSES, MIN_MEMORY};
use crate::protocol::units::{ByteSize, parse_duration, parse_size};
use crate::sandbox::SandboxMode;

use super::help_text;

/// Runs automated coding tasks with language models, safely and reproducibly.
#[derive(Debug, Parser)]
#[command(
    name = "agent-runtime",
    version,
    after_help = "Start with `agent-runtime demo`. Docs: README.md and docs/ in the repository (manifest.md, reference.md, reports.md)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Install agents into a data dir's cache (`DATA/cache/agents/`), with
    /// the registry's access (npm, PyPI); an agent already there is left as
    /// it is.
    Install {
        /// Data directory whose cache gets the agents; created if missing.
        data: PathBuf,
        /// Agents as NAME or NAME@VERSION (the pinned version when none).
        #[arg(required = true, value_name = "NAME[@VERSION]")]
        agents: Vec<String>,
    },
}

/// One of the importers.
#[derive(Debug, clap::Subcommand)]
pub enum ImportCommand {
    /// Exercism / Aider-polyglot practice exercises as jobs `<track>-<slug>`
    /// (family `<track>`), without a provider: run them with
    /// `batch DATA DIR --provider FILE`, check them with `check DIR`.
    Exercism {
        /// A track checkout (its config.json names the language), its
        /// exercises/practice folder, or one exercise.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Directory the job folders are written to (one per exercise).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Also copy the tests into the source (as Aider's benchmark does)
        /// and allow running them.
        #[arg(long)]
        visible_tests: bool,
    },
    /// SWE-bench instances (JSON lines) as jobs, each source a fresh git
    /// repository holding only the base commit's tree.
    Swebench {
        /// The instances, one JSON object a line (SWE-bench's schema).
        instances: PathBuf,
        /// Holds the clones, at DIR/<owner>/<name> or DIR/<owner>__<name>.
        #[arg(long = "repo", value_name = "DIR")]
        repo: PathBuf,
        /// Directory the job folders are written to (one per instance).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The test command, instead of `python3 -m pytest -rA ...`; the
        /// test_patch's files are appended.
        #[arg(long, value_name = "CMD")]
        test_cmd: Option<String>,
        /// A setup command run in the venv instead of installing pytest and
        /// the declared requirements (repeatable); `none`: no setup and no
        /// venv, the machine's python3 runs everything.
        #[arg(long, value_name = "CMD")]
        setup: Vec<String>,
        /// A directory holding the python3 that makes the venv (e.g. a pyenv
        /// version's bin) [default: the commands' python3].
        #[arg(long, value_name = "DIR")]
        python: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Offline demo: run the bundled jobs with the scripted provider in a temporary data dir.
    ///
    /// One bundled job fails on purpose (a fix that special-cases the visible
    /// test), so the results and the report show a failure and its analysis.
    #[command(display_order = 0, after_long_help = help_text::DEMO)]
    Demo {
        /// Directory of job manifests [default: the bundled jobs, embedded
        /// in the binary].
        #[arg(long, value_name = "DIR")]
        jobs: Option<PathBuf>,
        /// Jobs run at once [default: number of CPUs].
        #[arg(short = 'j', long = "parallel", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
        parallel: Option<u32>,
        /// Keep the scratch directory (jobs, data dir and report) instead of
        /// removing it at the end.
        #[arg(long)]
        keep: bool,
    },
    /// Enqueue a bare lifecycle task (ID) or manifest jobs (--job FILE...).
    ///
    /// Prints enqueued=true the first time, enqueued=false when the same id
    /// (and, for manifests, the same manifest) is already there.
    #[command(
        override_usage = "agent-runtime enqueue <DATA> <ID>\n       agent-runtime enqueue <DATA> --job <FILE>..."
    )]
    #[command(display_order = 4, after_long_help = help_text::ENQUEUE)]
    Enqueue {
        /// Data directory (holds events.log); created if missing.
        data: PathBuf,
        /// Job id of a bare task: letters, digits, '.', '_' and '-'. For a
        /// manifest job, give --job FILE instead.
        #[arg(required = true, conflicts_with = "job")]
        id: Option<String>,
        /// Manifest files (or directories, or globs) to enqueue.
        #[arg(long, num_args = 1.., value_name = "FILE")]
        job: Vec<PathBuf>,
        /// Replace the manifest of a job already enqueued with a different one.
        #[arg(long, requires = "job")]
        replace: bool,
        /// Attempts of a bare task (manifests set [limits] attempts).
        #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=100))]
        attempts: u32,
    },
    /// Run one queued job through the agent loop; exit 0 if it succeeded, 1 if not.
    ///
    /// With WORKSPACE (seed form), a bare task runs in a copy of WORKSPACE with
    /// AGENT_TASK, AGENT_ALLOWED, AGENT_VERIFY, AGENT_MAX_STEPS,
    /// AGENT_TIMEOUT_SECS and AGY_BIN from the environment.
    #[command(after_long_help = help_text::RUN)]
    #[command(display_order = 3)]
    Run {
        /// Data directory: holds events.log, and work/, runs/, report/ of the jobs.
        data: PathBuf,
        /// Job id (an instance id in a sweep, e.g. off_by_one@local#2), as `status` shows it.
        id: String,
        /// Seed form: the directory to work on (copied; the patch is applied back).
        workspace: Option<PathBuf>,
        /// Provider file replacing the manifest's [provider].
        #[arg(long, value_name = "FILE")]
        provider: Option<PathBuf>,
        /// Whose workspaces and build dirs stay once the attempt ends:
        /// `failed`, `all` or `none` (artifacts under DATA/runs always stay).
        #[arg(long, value_name = "WHICH", default_value = "failed")]
        keep: crate::lifecycle::Keep,
    },
    /// Remove the workspaces and build dirs of finished attempts by a keep
    /// policy (artifacts under DATA/runs stay); prints what it freed.
    #[command(display_order = 11, after_long_help = help_text::GC)]
    Gc {
        /// Data directory (holds events.log).
        data: PathBuf,
        /// `failed` (remove those of succeeded attempts), `all` (remove
        /// nothing) or `none` (remove them all).
        #[arg(long, value_name = "WHICH", default_value = "failed")]
        keep: crate::lifecycle::Keep,
    },
    /// Enqueue and run many manifests in parallel, then acceptance, then reports.
    ///
    /// Resumable: rerunning the same command skips finished jobs and recovers
    /// interrupted ones (state is saved on Ctrl-C; rerun to finish).
    #[command(after_long_help = help_text::BATCH, display_order = 1)]
    Batch(BatchArgs),
    /// Regenerate the reports from one or more logs (several DATA dirs merge, e.g. shards).
    #[command(display_order = 7, after_long_help = help_text::REPORT)]
    Report {
        /// Data directories whose logs to read (several merge, e.g. shards).
        #[arg(required_unless_present = "compare")]
        data: Vec<PathBuf>,
        /// Directory for report.md, results.tsv, results.json, junit.xml,
        /// report.html [default: DATA/report, with one DATA].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Compare two finished runs of the same tasks instead: is A
        /// better than B? Prints where the paired difference A − B stands
        /// (a confidence sequence over the tasks both ran, in a random
        /// order from --seed) and writes nothing.
        #[arg(long, value_name = "DATA_A,DATA_B", value_delimiter = ',', conflicts_with_all = ["data", "out"])]
        compare: Vec<PathBuf>,
        /// Confidence level of the comparison.
        #[arg(long, default_value_t = 0.95, value_parser = level, requires = "compare")]
        level: f64,
        /// Also decide "no difference larger than M" when the interval
        /// lies inside ±M.
        #[arg(long, value_name = "M", value_parser = margin, requires = "compare")]
        margin: Option<f64>,
        /// Seed of the order the pairs are taken in.
        #[arg(long, default_value_t = 0, requires = "compare")]
        seed: u64,
    },
    /// Show one row per job, replayed from the log. Never writes.
    #[command(display_order = 5, after_long_help = help_text::STATUS)]
    Status {
        /// Data directory: holds events.log, and work/, runs/, report/ of the jobs.
        data: PathBuf,
        /// Print a JSON document instead of a table.
        #[arg(long)]
        json: bool,
        /// Fold every event of the log, not the writers' checkpoint of it
        /// (DATA/state.ckpt) and the events after it.
        #[arg(long)]
        full: bool,
    },
    /// Live view of the log: re-renders on change, exits when every job is terminal.
    ///
    /// When jobs are queued and no runner holds any attempt, it says so (and
    /// how to start one) and goes on waiting.
    #[command(display_order = 6, after_long_help = help_text::WATCH)]
    Watch {
        /// Data directory: holds events.log, and work/, runs/, report/ of the jobs.
        data: PathBuf,
        /// How often to look for changes, in milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 200, value_parser = clap::value_parser!(u64).range(20..=60_000))]
        interval_ms: u64,
    },
    /// Durably cancel a queued or running job; its runner stops within a second.
    #[command(display_order = 8, after_long_help = help_text::CANCEL)]
    Cancel {
        /// Data directory: holds events.log, and work/, runs/, report/ of the jobs.
        data: PathBuf,
        /// Job id (an instance id in a sweep, e.g. off_by_one@local#2), as `status` shows it.
        id: String,
    },
    /// Requeue a failed job if attempts remain.
    ///
    /// A job whose attempts are used up starts over with `batch DATA JOBS...
    /// --rerun failed`.
    #[command(display_order = 9, after_long_help = help_text::RETRY)]
    Retry {
        /// Data directory: holds events.log, and work/, runs/, report/ of the jobs.
        data: PathBuf,
        /// Job id (an instance id in a sweep, e.g. off_by_one@local#2), as `status` shows it.
        id: String,
    },
    /// Run one command through the bounded executor and sandbox; print its result.
    ///
    /// Prints key=value lines (exit, signal, duration_ms, bytes, truncated,
    /// timed_out, oom, cancelled, sandbox layers) and then the captured output.
    #[command(after_long_help = help_text::EXEC)]
    #[command(display_order = 12)]
    Exec {
        /// Allow rule (repeatable), e.g. 'cargo test **'. Without any, the
        /// rule is the program itself followed by '**' (any arguments).
        #[arg(long = "allow", value_name = "RULE")]
        allow: Vec<String>,
        /// Workspace and working directory [default: the current directory].
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Time limit, e.g. 500ms, 30s, 2m.
        #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_duration)]
        timeout: Duration,
        /// Bytes kept per output stream (head and tail), e.g. 4096, 64KiB, 1MiB.
        #[arg(long, value_name = "SIZE", default_value = "64KiB", value_parser = parse_size)]
        output_cap: ByteSize,
        /// Memory of the command, all its processes together, e.g. 512MiB.
        #[arg(long, value_name = "SIZE", default_value_t = DEFAULT_MEMORY, value_parser = parse_memory)]
        memory: ByteSize,
        /// Processes and threads of the command at once.
        #[arg(long, value_name = "N", default_value_t = DEFAULT_PROCESSES, value_parser = clap::value_parser!(u64).range(1..=MAX_PROCESSES))]
        processes: u64,
        /// off | auto (the layers this machine has) | required (fail closed).
        #[arg(long, default_value = "auto", value_name = "MODE")]
        sandbox: SandboxMode,
        /// Let the command use the network (no network namespace, TCP allowed).
        #[arg(long)]
        network: bool,
        /// Extra environment variable for the command (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// The command: program name and arguments, after `--`.
        #[arg(last = true, required = true, value_name = "ARGV")]
        argv: Vec<String>,
    },
    /// Report which sandbox layers this machine supports and what `auto` uses.
    ///
    /// Also shows the fixed search path and which `cargo`, `python3` and
    /// `node` commands would run (links followed). Given a data dir, also
    /// reads every record of its log and checks it (checksums, order,
    /// legal transitions), whatever the writers' checkpoint says.
    #[command(display_order = 13, after_long_help = help_text::DOCTOR)]
    Doctor {
        /// A data dir whose log to check from its first record.
        data: Option<PathBuf>,
    },
    /// The external agents the runtime can run, and what is installed.
    ///
    /// Lists each agent of the table (its package, pinned version, model API
    /// and modes) and, given a data dir, the versions installed in it
    /// (`DATA/cache/agents/`). `agents install DATA NAME[@VERSION]...`
    /// installs ahead of a batch.
    #[command(display_order = 17, after_long_help = help_text::AGENTS)]
    Agents {
        #[command(subcommand)]
        install: Option<AgentsCommand>,
        /// A data dir whose installed agents to list.
        data: Option<PathBuf>,
    },
    /// Turn an existing benchmark into job folders: Exercism tracks or
    /// SWE-bench instances.
    #[command(subcommand, display_order = 14, after_long_help = help_text::IMPORT)]
    Import(ImportCommand),
    /// Turn a recorded attempt (trace = "full") into a self-contained job
    /// that reproduces it with no model.
    ///
    /// DIR gets job.toml (the original manifest's settings, one attempt, a
    /// scripted provider), replies.jsonl (the model's raw replies in order,
    /// invalid ones included, each sent verbatim) and copies of the source
    /// and the acceptance tests. Run it with `batch`.
    #[command(after_long_help = help_text::REPLAY)]
    #[command(display_order = 10)]
    Replay {
        /// Data directory the attempt ran in (holds events.log and runs/).
        data: PathBuf,
        /// Job id (an instance id in a sweep, e.g. off_by_one@local#2), as `status` shows it.
        #[arg(value_name = "ID")]
        instance: String,
        /// Which attempt [default: the last one started].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        attempt: Option<u32>,
        /// New directory for the replay job.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Validate tasks without a model: each job's baseline and its
    /// `[oracle]` fix run N times under the real sandbox and limits.
    ///
    /// Verdict per job: valid, invalid_baseline (the pristine source already
    /// passes), unsolvable (the oracle does not succeed), flaky (identical
    /// runs disagree; the tests are named), no_oracle, incomplete (rerun to
    /// continue). Resumable: the runs are jobs in DIR's log, and a rerun
    /// skips the finished ones.
    #[command(after_long_help = help_text::CHECK)]
    #[command(display_order = 2)]
    Check(CheckArgs),
    /// Check job manifests without running them; exit 0 if all are valid, 2 otherwise.
    #[command(display_order = 14, after_long_help = help_text::VALIDATE)]
    Validate {
        /// Manifest files, directories (every *.toml inside) or globs.
        #[arg(required = true)]
        jobs: Vec<PathBuf>,
        /// Also show each job's search path and which `cargo`, `python3`
        /// and `node` its commands would run.
        #[arg(long, short = 'v')]
        verbose: bool,
    },
    /// Serve a live, read-only web viewer of data dirs on 127.0.0.1.
    ///
    /// Prints the URL to open (with its access token) and serves until
    /// Ctrl-C: runs and jobs with filters, a page per job (prompt, cause,
    /// failing tests, trajectory, patch, time, cost) and a comparison of
    /// two providers or two data dirs. It follows the logs as they grow,
    /// so it can watch a batch running in another process. Exit 2 if a
    /// DATA is not a directory or the port cannot be bound.
    #[command(after_long_help = help_text::VIEW, display_order = 16)]
    View {
        /// Data directories whose logs to show (several: e.g. two runs to compare).
        #[arg(required = true, value_name = "DATA")]
        data: Vec<PathBuf>,
        /// Port on 127.0.0.1 [default: a free one].
        #[arg(long, value_name = "N")]
        port: Option<u16>,
    },
    /// Print a published JSON Schema.
    #[command(display_order = 15, after_long_help = help_text::SCHEMA)]
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

/// `batch` arguments.
#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// Data directory (holds events.log, work/, runs/, report/); created if missing.
    pub data: PathBuf,
    /// Manifest files, directories (their *.toml) or globs.
    #[arg(required = true)]
    pub jobs: Vec<PathBuf>,
    /// Jobs run at once [default: number of CPUs].
    #[arg(short = 'j', long = "parallel", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub parallel: Option<u32>,
    /// Attempts per job, replacing each manifest's [limits] attempts.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub attempts: Option<u32>,
    /// Run finished jobs again from scratch: `failed` (and cancelled) or `all`.
    #[arg(long, value_name = "WHICH", value_parser = ["failed", "all"])]
    pub rerun: Option<String>,
    /// Run jobs whose manifest changed since they were enqueued (every
    /// instance of each) again under the new manifest, as new attempts;
    /// earlier attempts stay in the log as history. A job whose manifest is
    /// unchanged is left as it is.
    #[arg(long)]
    pub replace: bool,
    /// Only jobs of this family (a family no manifest has is an error that
    /// lists the families there are).
    #[arg(long, value_name = "FAMILY")]
    pub family: Option<String>,
    /// Only the I-th of N stable parts of the jobs (by job id), e.g. 2/4.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::batch::Shard>,
    /// Provider file; repeatable: a sweep runs every job under every provider.
    #[arg(long = "provider", value_name = "FILE")]
    pub providers: Vec<PathBuf>,
    /// Agent driving the jobs, NAME[@VERSION][:MODE] (claude-code, codex,
    /// mini-swe-agent, command, or runtime: the built-in loop); repeatable,
    /// crossed with --provider and --repeat.
    #[arg(long = "agent", value_name = "AGENT")]
    pub(crate) agents: Vec<crate::agents::AgentSpec>,
    /// Run each job N times (pass@k).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Where the reports go [default: DATA/report].
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Whose workspaces and build dirs stay once an attempt ends: `failed`,
    /// `all` or `none` (artifacts under DATA/runs always stay).
    #[arg(long, value_name = "WHICH", default_value = "failed")]
    pub keep: crate::lifecycle::Keep,
    /// Hard cap on what the batch's model calls may cost in all, in USD,
    /// across every worker (earlier runs of the same jobs count). Once
    /// reached no model call starts, running jobs stop at their next step
    /// as budget_exceeded and queued jobs stay queued. Every provider needs
    /// a [price].
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_cost: Option<f64>,
    /// Fail an attempt with any tamper signal (a non-editable file changed,
    /// test infrastructure in the patch, harness internals named, results
    /// that look made up) as tampered, not only one whose canary was forged.
    #[arg(long)]
    pub strict_integrity: bool,
    /// Whether the summary names the report (not when it is about to be
    /// removed, as `demo` does without `--keep`).
    #[arg(skip = true)]
    pub show_report: bool,
}

/// `exec --memory`: a size, at least what `[limits] memory` accepts.
fn parse_memory(text: &str) -> Result<ByteSize, String> {
    let size = parse_size(text).map_err(|e| e.to_string())?;
    if size < MIN_MEMORY {
        return Err(format!("must be at least {MIN_MEMORY}"));
    }
    Ok(size)
}

/// A confidence level strictly between 0 and 1, e.g. `0.95`.
fn level(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value > 0.0 && value < 1.0 => Ok(value),
        _ => Err(format!(
            "{text:?} is not a level between 0 and 1 (e.g. 0.95)"
        )),
    }
}

/// A margin of a difference of success rates, in (0, 1), e.g. `0.05`.
fn margin(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value > 0.0 && value < 1.0 => Ok(value),
        _ => Err(format!(
            "{text:?} is not a margin between 0 and 1 (e.g. 0.05)"
        )),
    }
}

/// A positive amount of US dollars, e.g. `2.50`.
fn parse_usd(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("{text:?} is not an amount of USD (e.g. 2.50)"))?;
    if !value.is_finite() || value <= 0.0 {
        return Err(format!("{text:?}: the cap must be more than 0 USD"));
    }
    Ok(value)
}

/// `check`'s arguments.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Manifest files, directories (their *.toml) or globs.
    #[arg(required = true)]
    pub jobs: Vec<PathBuf>,
    /// Runs of each job's baseline and oracle.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
    /// Jobs run at once [default: number of CPUs].
    #[arg(short = 'j', long = "parallel", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub parallel: Option<u32>,
    /// The check's data directory (its log, runs and report).
    #[arg(long, value_name = "DIR", default_value = "check-data")]
    pub data: PathBuf,
    /// Print a JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Check again, as new runs, the jobs whose manifest changed since
    /// their runs were enqueued (a moved task folder, an edited test);
    /// earlier runs stay in the log as history.
    #[arg(long)]
    pub replace: bool,
    /// A note fails the check too (exit 1): a prompt that states the
    /// answer, an inventory from the oracle, canaries off, a signal.
    #[arg(long)]
    pub strict: bool,
    /// Waive a kind of finding for every job, as `[check] waive` does for
    /// one: leaky, leaky:git, leaky:prompt, leaky:source, leaky:copy,
    /// note:prompt_states_answer, note:prompt_shows_example. A waived
    /// finding is listed as waived and decides nothing. Repeatable.
    #[arg(long, value_name = "FINDING", value_parser = parse_waiver)]
    pub waive: Vec<crate::protocol::Waiver>,
    /// Write the tests found flaky into each job's manifest as
    /// `[acceptance] flaky = [...]` (merged, in place), so its verdicts
    /// leave them out.
    #[arg(long)]
    pub write_flaky: bool,
}

fn parse_waiver(text: &str) -> Result<crate::protocol::Waiver, String> {
    text.parse().map_err(|_| {
        format!(
            "not a finding check can waive; one of: {}",
            crate::protocol::Waiver::names().join(", ")
        )
    })
}
