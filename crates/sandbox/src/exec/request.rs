//! What the executor is asked to run, and what it reports back.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Serialize, Serializer};

use super::allow::AllowList;
use super::output::Captured;
use super::resources::Resources;
use super::search_path::SearchPath;
use super::toolchain::Toolchain;
use crate::sandbox::SandboxPolicy;
use crate::zygote::Zygote;

/// Time between SIGTERM and SIGKILL on a timeout, unless a request says otherwise.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(500);

/// One command to run. Plain data: the caller decides every field from the
/// job's configuration; only `argv` comes from a model.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// Program name and arguments; never a shell string.
    pub argv: Vec<String>,
    /// Rules the argv must match before anything is resolved or spawned.
    pub allow: AllowList,
    /// Working directory; must be inside `workspace` once canonicalized.
    pub cwd: PathBuf,
    pub workspace: PathBuf,
    /// Private directory for `HOME` and `TMPDIR` (created inside it as
    /// `home/` and `tmp/`); `None` makes a fresh one that is removed after.
    pub scratch: Option<PathBuf>,
    /// Per-job variables added to the cleared environment.
    pub extra_env: BTreeMap<String, String>,
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL on timeout (cancel uses at most
    /// [`CANCEL_GRACE`](super::CANCEL_GRACE)).
    pub kill_grace: Duration,
    /// Bytes kept per stream (half head, half tail).
    pub output_cap: usize,
    pub sandbox: SandboxPolicy,
    /// Chosen at job start; never from model input.
    pub search_path: SearchPath,
    pub toolchain: Toolchain,
    /// Bytes given to the command on stdin, then end of file; `None` (the
    /// default) gives it /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// A binary the runner chose itself (a test binary it built and copied
    /// out of reach), run instead of resolving `argv[0]` from the search
    /// path; its directory must be among the sandbox's readable grants.
    /// Never set from model input.
    pub program_path: Option<PathBuf>,
    /// Start the command from this zygote (see `crate::zygote`); without
    /// one, or once it is lost, the executor forks it itself.
    pub zygote: Option<Arc<Zygote>>,
    /// Grant only what the program resolved from the search path needs
    /// (the search path's directories and that program's real directory)
    /// rather than the real directory of every program on it: for a
    /// one-shot command, which runs once and would pay for a scan of
    /// every link of the search path, while a job's commands share one.
    pub lazy_grants: bool,
}

impl ExecRequest {
    /// A request with the defaults: cwd = workspace, 120 s timeout, 500 ms
    /// grace, 64 KiB cap, `auto` sandbox without network, the runner's
    /// toolchain and the fixed search path.
    pub fn new(argv: Vec<String>, allow: AllowList, workspace: PathBuf) -> ExecRequest {
        let toolchain = Toolchain::detect();
        ExecRequest {
            argv,
            allow,
            cwd: workspace.clone(),
            workspace,
            scratch: None,
            extra_env: BTreeMap::new(),
            timeout: Duration::from_secs(120),
            kill_grace: DEFAULT_KILL_GRACE,
            output_cap: 64 * 1024,
            sandbox: SandboxPolicy::default(),
            search_path: SearchPath::for_toolchain(&toolchain),
            toolchain,
            stdin: None,
            program_path: None,
            zygote: None,
            lazy_grants: false,
        }
    }
}

/// How a command ended. Serializes without the captured bytes (only their
/// counts), so it can be logged as is.
#[derive(Debug, Clone, Serialize)]
pub struct ExecOutcome {
    pub program: String,
    pub resolved: PathBuf,
    pub argc: usize,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    #[serde(rename = "duration_ms", serialize_with = "millis")]
    pub duration: Duration,
    pub stdout: Captured,
    pub stderr: Captured,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Processes were still in the group after the leader exited (they were killed).
    pub leaked: bool,
    /// A pipe was still held open (by a process outside the group) when the
    /// bounded drain gave up.
    pub drain_timed_out: bool,
    /// The memory limit was hit: the kernel's OOM killer killed a process
    /// of the command.
    pub oom: bool,
    /// The layers it ran under, and how it was started.
    pub sandbox_layers: Vec<crate::sandbox::Layer>,
    /// What it cost the machine: CPU time, memory and task peaks.
    pub resources: Resources,
}

impl ExecOutcome {
    /// Exited with status 0, not stopped by timeout or cancel.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled
    }

    pub fn truncated(&self) -> bool {
        self.stdout.truncated || self.stderr.truncated
    }
}

fn millis<S: Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}
