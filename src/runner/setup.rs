//! The setup phase: the job's trusted `[setup]` commands, in order, in a
//! copy of the pristine source (of only its declared inputs when the
//! cache is shared, see [`crate::cache::SetupInputs`]), with the job cache writable and the
//! network as `[setup] network` says. Runs once per job cache; the caller
//! holds the cache's lock and records the result.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use super::cache_use::CacheUse;
use super::commands::{AttemptCommands, command_log, policy_for};
use crate::agent::{copy_tree, first_cause};
use crate::cache::{CacheError, JobCache};
use crate::cancel::CancelToken;
use crate::exec::{AllowList, ExecError, ExecOutcome, Toolchain};
use crate::manifest::{Manifest, Setup};

/// Failures preparing the setup (the runtime's, not the job's).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("failed to prepare {}: {source}", .path.display())]
    Prepare {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("failed to copy the source to {}: {message}", .path.display())]
    Copy {
        path: std::path::PathBuf,
        message: String,
    },
    /// `mode = "required"` and a sandbox layer is missing.
    #[error(transparent)]
    Sandbox(ExecError),
}

/// What the setup commands did.
#[derive(Debug)]
pub(crate) struct SetupRun {
    pub commands: Vec<ExecOutcome>,
    pub duration: Duration,
    /// Why it failed, in one line; `None` when every command succeeded.
    pub failure: Option<String>,
}

impl SetupRun {
    pub(crate) fn cancelled(&self) -> bool {
        self.commands.iter().any(|c| c.cancelled)
    }
}

/// Runs `setup`'s commands in `dir` (made afresh from the source), filling
/// `cache` (emptied first), and writes their output to `log`. Stops at the
/// first command that fails. `deny` stays unreadable (the data dir).
pub(crate) fn run_setup(
    manifest: &Manifest,
    setup: &Setup,
    cache: &JobCache,
    dir: &Path,
    log: &Path,
    deny: Vec<std::path::PathBuf>,
    cancel: &CancelToken,
) -> Result<SetupRun, SetupError> {
    let started = Instant::now();
    let toolchain = Toolchain::detect();
    cache.reset_setup(toolchain.cargo_home.as_deref())?;
    let prepare = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SetupError::Prepare { path, source }
    };
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(prepare(dir))?;
    }
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent).map_err(prepare(parent))?;
    }
    // A shared cache's setup sees only its declared inputs (so nothing
    // else of the source can change what it brings in); a job-scoped one
    // the whole source.
    let copied = match crate::cache::shared_inputs(manifest) {
        Some(inputs) => inputs
            .copy_to(&manifest.source, dir)
            .map_err(|e| e.to_string()),
        None => copy_tree(&manifest.source, dir)
            .map(|_| ())
            .map_err(|e| e.to_string()),
    };
    copied.map_err(|message| SetupError::Copy {
        path: dir.to_path_buf(),
        message,
    })?;
    let cache_use = CacheUse {
        setup_dir: Some(cache.setup_dir()),
        cargo_home: Some(cache.cargo_home()),
        ..CacheUse::default()
    };
    let argvs: Vec<Vec<String>> = setup
        .commands
        .iter()
        .map(|argv| argv.iter().map(|a| cache_use.expand(a)).collect())
        .collect();
    let mut policy = policy_for(manifest, deny);
    policy.network = setup.network;
    policy.writable.push(cache.setup_dir());
    let budget = manifest
        .limits
        .command_timeout
        .saturating_mul(u32::try_from(argvs.len()).unwrap_or(u32::MAX));
    let mut commands = AttemptCommands::new(
        manifest,
        dir,
        AllowList::default(),
        policy,
        Instant::now() + budget,
    );
    for (key, value) in &manifest.env {
        commands.env.insert(key.clone(), cache_use.expand(value));
    }
    // A toolchain the setup makes in the cache (a venv) is used by its
    // later commands: each command's grants are found when it starts.
    commands.use_toolchains(manifest, |dir| cache_use.expand(dir));
    if !manifest.env.contains_key("CARGO_HOME") {
        commands.env.insert(
            "CARGO_HOME".into(),
            cache.cargo_home().display().to_string(),
        );
    }
    let mut run = SetupRun {
        commands: Vec::new(),
        duration: Duration::ZERO,
        failure: None,
    };
    let mut text = String::new();
    for (index, argv) in argvs.iter().enumerate() {
        let program = argv.first().cloned().unwrap_or_default();
        // The job author's own commands: the runtime runs exactly these
        // argv, so the rule only names the program.
        commands.allow = match AllowList::program_any_args(&program) {
            Ok(allow) => allow,
            Err(e) => {
                run.failure = Some(format!("setup command {}: {e}", index + 1));
                break;
            }
        };
        let outcome = match commands.run_argv(argv, cancel) {
            Ok(outcome) => outcome,
            Err(e @ ExecError::SandboxUnavailable { .. }) => return Err(SetupError::Sandbox(e)),
            Err(e) => {
                run.failure = Some(format!("setup command {} `{program}`: {e}", index + 1));
                text.push_str(&format!("$ {}\nerror: {e}\n", argv.join(" ")));
                break;
            }
        };
        text.push_str(&command_log(argv, &outcome));
        let failed = !outcome.success();
        if failed && !outcome.cancelled {
            let status = match (outcome.timed_out, outcome.exit_code, outcome.signal) {
                (true, _, _) => "timed out".to_string(),
                (_, Some(code), _) => format!("exited {code}"),
                (_, _, Some(signal)) => format!("was killed by signal {signal}"),
                _ => "failed".to_string(),
            };
            let why = first_cause(&outcome.stdout.to_text(), &outcome.stderr.to_text())
                .map(|line| format!(": {line}"))
                .unwrap_or_default();
            run.failure = Some(format!(
                "setup command {} `{program}` {status}{why}",
                index + 1
            ));
        }
        run.commands.push(outcome);
        if failed {
            break;
        }
    }
    run.duration = started.elapsed();
    if let Some(parent) = log.parent() {
        fs::create_dir_all(parent).map_err(prepare(parent))?;
    }
    fs::write(log, text).map_err(prepare(log))?;
    // The copy served its commands; what they brought in is in the cache.
    let _ = fs::remove_dir_all(dir);
    Ok(run)
}
