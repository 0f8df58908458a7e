//! `exec`: the executor, for users and benchmarks, and the programs
//! `doctor` and `validate --verbose` show.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

use super::exit::Completion;
use crate::cancel::CancelToken;
use crate::exec::{
    AllowList, ExecError, ExecOutcome, ExecRequest, Refusal, SearchPath, Toolchain, run,
};
use crate::manifest::CACHE_PLACEHOLDER;
use crate::runner::job_search_path;
use crate::sandbox::{ResourceLimits, SandboxMode, SandboxPolicy};

/// `exec` options, resolved from the command line.
#[derive(Debug)]
pub(super) struct ExecArgs {
    pub allow: Vec<String>,
    pub workspace: Option<PathBuf>,
    pub timeout: Duration,
    pub output_cap: crate::protocol::units::ByteSize,
    /// Memory of the command, all its processes together.
    pub memory: crate::protocol::units::ByteSize,
    /// Processes and threads of the command at once.
    pub processes: u64,
    pub sandbox: SandboxMode,
    pub network: bool,
    pub env: Vec<String>,
    pub argv: Vec<String>,
}

pub(super) fn exec(args: ExecArgs) -> anyhow::Result<Completion> {
    let allow = if args.allow.is_empty() {
        // A program given as a path gets no default rule, so the check
        // below refuses it with the reason.
        args.argv
            .first()
            .and_then(|program| AllowList::program_any_args(program).ok())
            .unwrap_or_default()
    } else {
        AllowList::parse(&args.allow)?
    };
    let workspace = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("failed to read the current directory")?,
    };
    let mut extra_env = BTreeMap::new();
    for pair in &args.env {
        let (key, value) = pair
            .split_once('=')
            .with_context(|| format!("bad --env `{pair}`: expected KEY=VALUE"))?;
        extra_env.insert(key.to_string(), value.to_string());
    }
    // Said with a refusal: the rule that would let the command run.
    let admitting = crate::manifest::admitting_rule(&args.argv);
    let mut req = ExecRequest::new(args.argv, allow, workspace);
    // One command: grant what its program needs, not every program's.
    req.lazy_grants = true;
    req.timeout = args.timeout;
    req.output_cap =
        usize::try_from(args.output_cap.bytes()).context("--output-cap is too large")?;
    req.extra_env = extra_env;
    req.sandbox = SandboxPolicy {
        mode: args.sandbox,
        network: args.network,
        limits: ResourceLimits {
            memory: Some(args.memory.bytes()),
            processes: Some(args.processes),
            ..ResourceLimits::default()
        },
        ..SandboxPolicy::default()
    };

    let cancel = CancelToken::new();
    let interrupted = cancel_on_signals(&cancel);
    let outcome = run(&req, &cancel).map_err(|e| match (&e, admitting) {
        (ExecError::Refused(Refusal::NoMatch { .. } | Refusal::NoRules), Some(rule)) => {
            anyhow::anyhow!("{e}; --allow '{rule}' would admit it")
        }
        _ => e.into(),
    })?;
    print_outcome(&outcome).context("failed to write the result")?;
    Ok(if outcome.cancelled && interrupted {
        Completion::Interrupted
    } else if outcome.success() {
        Completion::Success
    } else {
        Completion::JobsFailed
    })
}

/// Turns Ctrl-C and SIGTERM into a cancel, so the command's group is
/// killed rather than orphaned. Returns whether signals are being watched.
fn cancel_on_signals(cancel: &CancelToken) -> bool {
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    // Blocked here, received by the watcher thread with sigwait; spawned
    // commands start with an empty mask.
    if pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None).is_err() {
        return false;
    }
    let token = cancel.clone();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if set.wait().is_ok() {
                token.cancel();
            }
        })
        .is_ok()
}

fn print_outcome(outcome: &ExecOutcome) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let opt = |v: Option<i32>| v.map(|v| v.to_string()).unwrap_or_default();
    let shown = |text: &str| crate::escape::line(text).into_owned();
    writeln!(out, "program={}", shown(&outcome.program))?;
    writeln!(
        out,
        "resolved={}",
        shown(&outcome.resolved.display().to_string())
    )?;
    writeln!(out, "exit={}", opt(outcome.exit_code))?;
    writeln!(out, "signal={}", opt(outcome.signal))?;
    writeln!(out, "duration_ms={}", outcome.duration.as_millis())?;
    writeln!(out, "stdout_bytes={}", outcome.stdout.total_bytes)?;
    writeln!(out, "stderr_bytes={}", outcome.stderr.total_bytes)?;
    writeln!(out, "truncated={}", outcome.truncated())?;
    writeln!(out, "timed_out={}", outcome.timed_out)?;
    writeln!(out, "oom={}", outcome.oom)?;
    writeln!(out, "cancelled={}", outcome.cancelled)?;
    writeln!(out, "leaked={}", outcome.leaked)?;
    writeln!(out, "drain_timed_out={}", outcome.drain_timed_out)?;
    writeln!(
        out,
        "sandbox={}",
        crate::sandbox::joined(&outcome.sandbox_layers)
    )?;
    let figure = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    let used = &outcome.resources;
    writeln!(out, "cpu_ms={}", figure(used.cpu_ms))?;
    writeln!(out, "peak_memory_bytes={}", figure(used.peak_memory_bytes))?;
    writeln!(out, "pids_peak={}", figure(used.pids_peak))?;
    if let Some(kib) = peak_rss_kib() {
        writeln!(out, "peak_rss_kib={kib}")?;
    }
    // The output as text, its control and bidi characters as visible
    // escapes (line breaks and tabs kept): a command cannot drive the
    // terminal it is shown on.
    writeln!(out, "--- stdout ---")?;
    out.write_all(crate::escape::block(&outcome.stdout.to_text()).as_bytes())?;
    writeln!(out, "--- stderr ---")?;
    out.write_all(crate::escape::block(&outcome.stderr.to_text()).as_bytes())?;
    out.flush()
}

/// This process's peak resident set size (`VmHWM`), for benchmarks.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The programs `doctor` and `validate --verbose` show.
const SHOWN_PROGRAMS: [&str; 3] = ["cargo", "python3", "node"];

/// `search path: ...`, then per shown program where it resolves and what
/// really runs (its links followed), or why it is not found.
pub(super) fn programs(path: &SearchPath) -> Vec<String> {
    let mut lines = vec![format!("search path: {}", path.to_env())];
    for name in SHOWN_PROGRAMS {
        lines.push(match path.describe(name) {
            Ok((resolved, real)) if real == resolved => {
                format!("program {name}: {}", resolved.display())
            }
            Ok((resolved, real)) => format!(
                "program {name}: {} (runs {})",
                resolved.display(),
                real.display()
            ),
            Err(_) => format!("program {name}: not found in the search path"),
        });
    }
    lines
}

/// What `validate --verbose` shows of a job: its toolchain directories,
/// then its search path and programs as an attempt would fix them
/// (directories in the job cache exist only after its setup).
pub(super) fn job_programs(manifest: &crate::manifest::Manifest) -> Vec<String> {
    let mut lines = Vec::new();
    let cached: Vec<&String> = manifest
        .sandbox
        .toolchains
        .iter()
        .filter(|dir| dir.contains(CACHE_PLACEHOLDER))
        .collect();
    if !manifest.sandbox.toolchains.is_empty() {
        lines.push(format!(
            "toolchains: {}",
            manifest.sandbox.toolchains.join(", ")
        ));
    }
    if !cached.is_empty() {
        lines.push(format!(
            "(toolchains in {CACHE_PLACEHOLDER} are made by [setup] and not resolved here)"
        ));
    }
    let path = job_search_path(manifest, &Toolchain::detect(), |dir| {
        (!dir.contains(CACHE_PLACEHOLDER)).then(|| dir.to_string())
    });
    lines.extend(programs(&path));
    lines
}
