//! Commands of an attempt through the executor: the sandbox policy, the
//! environment and the time left, decided here from the job's manifest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::agent::{CommandRole, CommandRunner};
use crate::cancel::CancelToken;
use crate::exec::{
    AllowList, DEFAULT_KILL_GRACE, ExecError, ExecOutcome, ExecRequest, Refusal, SearchPath,
    Toolchain, run,
};
use crate::manifest::{CACHE_PLACEHOLDER, Manifest};
use crate::sandbox::{ResourceLimits, SandboxMode, SandboxPolicy};
use crate::zygote::Zygote;

/// Runs commands for one attempt in one directory.
#[derive(Debug, Clone)]
pub(crate) struct AttemptCommands {
    pub dir: PathBuf,
    pub allow: AllowList,
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
    pub output_cap: usize,
    pub sandbox: SandboxPolicy,
    pub deadline: Instant,
    /// Where each verify's output is kept (`verify-<n>.log`), so the cause
    /// of a failure outlives the attempt whatever the trace setting.
    pub artifacts: Option<PathBuf>,
    verifies: u32,
    toolchain: Toolchain,
    search_path: SearchPath,
    /// The zygote the commands start from: the attempt's, taken with the
    /// first command and shared by clones of these commands.
    zygote: Arc<OnceLock<Option<Arc<Zygote>>>>,
}

/// The sandbox a job's commands run in: the workspace is writable (the
/// executor grants it), the data dir and every acceptance dir are denied,
/// and memory and processes are limited as `[limits]` says.
pub(crate) fn policy_for(manifest: &Manifest, deny: Vec<PathBuf>) -> SandboxPolicy {
    SandboxPolicy {
        mode: match manifest.sandbox.mode {
            crate::manifest::SandboxMode::Off => SandboxMode::Off,
            crate::manifest::SandboxMode::Auto => SandboxMode::Auto,
            crate::manifest::SandboxMode::Required => SandboxMode::Required,
        },
        network: manifest.sandbox.network,
        deny,
        limits: ResourceLimits {
            memory: Some(manifest.limits.memory.bytes()),
            processes: Some(manifest.limits.processes),
            ..ResourceLimits::default()
        },
        ..SandboxPolicy::default()
    }
}

impl AttemptCommands {
    /// Commands in `dir` under `allow`, with the manifest's limits. The
    /// toolchain and search path are fixed here, at attempt start.
    pub(crate) fn new(
        manifest: &Manifest,
        dir: &Path,
        allow: AllowList,
        sandbox: SandboxPolicy,
        deadline: Instant,
    ) -> AttemptCommands {
        let toolchain = Toolchain::detect();
        // Toolchains inside the job cache are added once it is known
        // (`use_toolchains`).
        let search_path = job_search_path(manifest, &toolchain, |dir| {
            (!dir.contains(CACHE_PLACEHOLDER)).then(|| dir.to_string())
        });
        let mut env = manifest.env.clone();
        // Every build of a job starts from a fresh copy and is thrown away
        // after: rustc's incremental cache would only cost its writing
        // (about a third of a small crate's build). `[env]` may turn it on.
        env.entry("CARGO_INCREMENTAL".into())
            .or_insert_with(|| "0".into());
        AttemptCommands {
            dir: dir.to_path_buf(),
            allow,
            env,
            timeout: manifest.limits.command_timeout,
            output_cap: usize::try_from(manifest.limits.output_cap.bytes()).unwrap_or(usize::MAX),
            sandbox,
            deadline,
            artifacts: None,
            verifies: 0,
            toolchain,
            search_path,
            zygote: Arc::default(),
        }
    }

    /// Puts the job's `[sandbox] toolchains` first on the search path, with
    /// `{cache}` expanded by `expand`.
    pub(crate) fn use_toolchains(&mut self, manifest: &Manifest, expand: impl Fn(&str) -> String) {
        self.search_path = job_search_path(manifest, &self.toolchain, |dir| Some(expand(dir)));
    }

    /// The search path the commands get (fixed at attempt start, with the
    /// job's toolchain directories once known).
    pub(crate) fn search_path(&self) -> &SearchPath {
        &self.search_path
    }

    /// Runs `argv`, with the timeout cut to the time left before the deadline.
    pub(crate) fn run_argv(
        &self,
        argv: &[String],
        cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError> {
        run(&self.request(argv), cancel)
    }

    /// Runs `argv` with at most `output_cap` bytes kept per stream (for
    /// output the runner must read whole, such as a build's artifact list).
    pub(crate) fn run_argv_capped(
        &self,
        argv: &[String],
        output_cap: usize,
        cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError> {
        let mut req = self.request(argv);
        req.output_cap = output_cap;
        run(&req, cancel)
    }

    /// Runs a binary the runner chose (`binary`, shown as `argv[0]`), from a
    /// directory the command can read but not write, with `output_cap`.
    pub(crate) fn run_binary(
        &self,
        binary: &Path,
        argv: &[String],
        cwd: &Path,
        output_cap: usize,
        cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError> {
        self.run_binary_in(binary, argv, &self.dir, cwd, output_cap, cancel)
    }

    /// [`run_binary`](Self::run_binary) with `workspace` (holding `cwd`)
    /// as the command's workspace instead of the commands' directory.
    pub(crate) fn run_binary_in(
        &self,
        binary: &Path,
        argv: &[String],
        workspace: &Path,
        cwd: &Path,
        output_cap: usize,
        cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError> {
        let mut req = self.request(argv);
        req.workspace = workspace.to_path_buf();
        // As `cargo test` runs it: in its package, which it may look up.
        req.cwd = cwd.to_path_buf();
        req.extra_env
            .insert("CARGO_MANIFEST_DIR".into(), cwd.display().to_string());
        req.allow = AllowList::default();
        if let Some(name) = argv.first() {
            req.allow = AllowList::program_any_args(name).map_err(|e| ExecError::Io {
                action: format!("allow {name}: {e}"),
                source: std::io::Error::other("bad program name"),
            })?;
        }
        req.program_path = Some(binary.to_path_buf());
        if let Some(dir) = binary.parent() {
            req.sandbox.readable.push(dir.to_path_buf());
        }
        req.output_cap = output_cap;
        // A binary the runner just wrote may still be open for writing in
        // a child another thread is forking (until its exec closes it):
        // exec then fails with ETXTBSY for a moment.
        let mut tries = 0;
        loop {
            match run(&req, cancel) {
                Err(ExecError::Spawn { source, .. })
                    if source.raw_os_error() == Some(nix::errno::Errno::ETXTBSY as i32)
                        && tries < 50 =>
                {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => return other,
            }
        }
    }

    /// The zygote, taken on first use when this binary can serve as one,
    /// whatever the sandbox (with it off too, a spawn from the small
    /// zygote copies none of the runner's page tables); `None` (commands
    /// are forked directly) otherwise, or when it cannot be started.
    fn zygote(&self) -> Option<Arc<Zygote>> {
        if !crate::zygote::available() {
            return None;
        }
        self.zygote
            .get_or_init(super::attempt_zygote::zygote)
            .clone()
    }

    /// The request for `argv` with the timeout cut to the time left.
    fn request(&self, argv: &[String]) -> ExecRequest {
        let left = self.deadline.saturating_duration_since(Instant::now());
        // Built field by field: the toolchain and search path were fixed at
        // attempt start and are not detected again per command.
        ExecRequest {
            argv: argv.to_vec(),
            allow: self.allow.clone(),
            cwd: self.dir.clone(),
            workspace: self.dir.clone(),
            scratch: None,
            extra_env: self.env.clone(),
            timeout: self.timeout.min(left.max(Duration::from_millis(1))),
            kill_grace: DEFAULT_KILL_GRACE,
            output_cap: self.output_cap,
            sandbox: self.sandbox.clone(),
            search_path: self.search_path.clone(),
            toolchain: self.toolchain.clone(),
            stdin: None,
            zygote: self.zygote(),
            program_path: None,
            lazy_grants: false,
        }
    }
}

/// The search path of `manifest`'s commands: its toolchain directories
/// (each passed through `expand`, which may drop one), then the runner's
/// toolchain and the system directories. Fixed at attempt start.
pub(crate) fn job_search_path(
    manifest: &Manifest,
    toolchain: &Toolchain,
    expand: impl Fn(&str) -> Option<String>,
) -> SearchPath {
    let dirs: Vec<PathBuf> = manifest
        .sandbox
        .toolchains
        .iter()
        .filter_map(|dir| expand(dir))
        .map(PathBuf::from)
        .collect();
    SearchPath::for_job(&dirs, toolchain)
}

/// A command and its captured output (head and tail, as capped), as kept
/// in the artifacts of an attempt.
pub(super) fn command_log(argv: &[String], outcome: &ExecOutcome) -> String {
    format!(
        "$ {}\nexit={} signal={} timed_out={} oom={} duration_ms={}\n--- stdout ---\n{}\n--- stderr ---\n{}\n",
        argv.join(" "),
        outcome.exit_code.map_or("-".into(), |c| c.to_string()),
        outcome.signal.map_or("-".into(), |s| s.to_string()),
        outcome.timed_out,
        outcome.oom,
        outcome.duration.as_millis(),
        outcome.stdout.to_text(),
        outcome.stderr.to_text(),
    )
}

impl CommandRunner for AttemptCommands {
    fn allows(&self, argv: &[String]) -> Result<(), Refusal> {
        self.allow.check(argv)
    }

    fn run(
        &mut self,
        argv: &[String],
        role: CommandRole,
        cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError> {
        let outcome = self.run_argv(argv, cancel)?;
        if role == CommandRole::Verify
            && let Some(dir) = &self.artifacts
        {
            self.verifies += 1;
            // Diagnostic: failing to keep it does not fail the command.
            let _ = std::fs::write(
                dir.join(format!("verify-{}.log", self.verifies)),
                command_log(argv, &outcome),
            );
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(limits: &str) -> Manifest {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let text = format!(
            "prompt = \"p\"\nsource = \"src\"\neditable = [\"*\"]\nallow = [\"true\"]\n\
             verify = [\"true\"]\n{limits}"
        );
        crate::manifest::parse_manifest(&dir.path().join("job.toml"), &text).unwrap()
    }

    #[test]
    fn the_policy_carries_the_manifests_memory_and_processes() {
        let policy = policy_for(&manifest(""), Vec::new());
        assert_eq!(policy.limits.memory, Some(crate::sandbox::DEFAULT_MEMORY));
        assert_eq!(
            policy.limits.processes,
            Some(crate::sandbox::DEFAULT_PROCESSES)
        );
        let limits = "[limits]\nmemory = \"512MiB\"\nprocesses = 64\n";
        let policy = policy_for(&manifest(limits), vec![PathBuf::from("/data")]);
        assert_eq!(policy.limits.memory, Some(512 << 20));
        assert_eq!(policy.limits.processes, Some(64));
        // The other limits stay the sandbox's.
        let defaults = ResourceLimits::default();
        assert_eq!(policy.limits.file_size, defaults.file_size);
        assert_eq!(policy.limits.open_files, defaults.open_files);
        assert_eq!(policy.deny, [PathBuf::from("/data")]);
    }
}
