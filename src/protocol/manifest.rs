//! The validated job manifest: defaults applied, paths absolute, every value
//! checked. What the rest of the runtime reads (it never sees the TOML), and
//! the body of the snapshot the log keeps: its serialized form is hashed, so
//! a field that is new must be left out of it at its default.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::provider::ProviderConfig;
use super::units::ByteSize;

/// One job, as declared in its manifest file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub id: String,
    pub family: String,
    /// The task text: `prompt`, or the contents of `prompt_file`.
    pub prompt: String,
    /// Where `prompt` was read from, when it came from a file.
    pub prompt_file: Option<PathBuf>,
    /// Absolute, canonical directory copied into each workspace.
    pub source: PathBuf,
    pub editable: Vec<String>,
    pub allow: Vec<String>,
    pub verify: Vec<String>,
    pub trace: Trace,
    pub env: BTreeMap<String, String>,
    pub acceptance: Option<Acceptance>,
    /// Trusted commands run once per job cache before the baseline. Left
    /// out of the stored form when absent, so manifests without it keep
    /// their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
    pub limits: Limits,
    /// `None` when the job expects `--provider FILE` at run time.
    pub provider: Option<ProviderConfig>,
    /// What the provider's tokens cost (`[price]`), for cost in reports and
    /// `--max-cost`; a `--provider FILE`'s price replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<super::Price>,
    pub sandbox: Sandbox,
    /// Which agent drives the job's attempts (`[agent]`, `--agent`); none
    /// is the runtime's own loop. Left out of the stored form when unset,
    /// so manifests without it keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentChoice>,
    /// Facts about where the job came from (`[metadata]`: an imported
    /// instance's `version`, say), shown in reports; nothing reads them to
    /// run the job. Left out of the stored form when empty, so manifests
    /// without it keep their hash.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// A known-good fix, read only by `check`: not part of the stored job
    /// (changing it does not change what a run does).
    #[serde(skip)]
    pub oracle: Option<Oracle>,
    /// `[check] waive`: findings of `check` a reviewer accepted, kept in
    /// its report as waived. Read only by `check`, like the oracle.
    #[serde(skip)]
    pub waive: Vec<Waiver>,
    /// Where fields were written, for errors found after loading; empty
    /// for a manifest rebuilt from a snapshot. Never stored.
    #[serde(skip)]
    pub(crate) origin: Origin,
}

/// Where a manifest came from, to place errors found after loading: its
/// file and, per dotted field, the line and column it was written at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Origin {
    pub file: PathBuf,
    pub fields: BTreeMap<String, (usize, usize)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trace {
    /// Only the event log's metadata.
    #[default]
    Metadata,
    /// Also a redacted transcript artifact per attempt.
    Full,
}

/// `[oracle]`: a known-good fix for the job, which `check` runs as the
/// model would (a script) or applies (a patch) and must see accepted.
/// Stored beside the manifest in its snapshot (`{"script": PATH}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Oracle {
    /// Scripted decisions (the `script` provider's format).
    Script(PathBuf),
    /// A unified diff against the job's `source`.
    Patch(PathBuf),
}

/// A kind of `check` finding a reviewer may waive (`[check] waive`,
/// `check --waive`): a waived finding stays in the report, marked waived,
/// and no longer decides the verdict or fails `--strict`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
pub enum Waiver {
    /// Every leak.
    #[strum(serialize = "leaky")]
    #[serde(rename = "leaky")]
    Leaky,
    /// What the source's `.git` holds past its base.
    #[strum(serialize = "leaky:git")]
    #[serde(rename = "leaky:git")]
    LeakyGit,
    /// The oracle's lines in the prompt.
    #[strum(serialize = "leaky:prompt")]
    #[serde(rename = "leaky:prompt")]
    LeakyPrompt,
    /// The oracle's lines in another source file.
    #[strum(serialize = "leaky:source")]
    #[serde(rename = "leaky:source")]
    LeakySource,
    /// A copy of an oracle file in the source or its git store.
    #[strum(serialize = "leaky:copy")]
    #[serde(rename = "leaky:copy")]
    LeakyCopy,
    /// The note that the prompt states what the tests check.
    #[strum(serialize = "note:prompt_states_answer")]
    #[serde(rename = "note:prompt_states_answer")]
    PromptStatesAnswer,
    /// The note that the prompt shows an example the oracle reuses.
    #[strum(serialize = "note:prompt_shows_example")]
    #[serde(rename = "note:prompt_shows_example")]
    PromptShowsExample,
}

impl Waiver {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Every waiver's name, for errors and help.
    pub fn names() -> Vec<&'static str> {
        use strum::VariantArray;
        Waiver::VARIANTS.iter().map(|w| w.as_str()).collect()
    }
}

impl Oracle {
    /// The file holding the fix.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Oracle::Script(path) | Oracle::Patch(path) => path,
        }
    }
}

/// Hidden acceptance tests, applied to a clean copy of the source plus the
/// agent's patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Acceptance {
    /// Absolute, canonical; never inside `source`.
    pub dir: PathBuf,
    pub command: Vec<String>,
    pub baseline: Baseline,
    /// How per-test results are read; `None` picks by the command (see
    /// [`Acceptance::results_format`]). Left out of the stored form when
    /// unset, so older manifests keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<ResultsFormat>,
    /// `libtest`: how long each test may run in its own process (default
    /// `[limits] command_timeout`). Left out of the stored form when
    /// unset, so older manifests keep their hash.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "super::units::optional_duration_text"
    )]
    pub test_timeout: Option<Duration>,
    /// An explicit inventory (SWE-bench's `FAIL_TO_PASS`): tests that must
    /// fail on the pristine source and pass after the fix, as the test
    /// runner names them (pytest node ids). Left out of the stored form
    /// when empty, so older manifests keep their hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_to_pass: Vec<String>,
    /// With `fail_to_pass`: tests that must pass before and after.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_to_pass: Vec<String>,
    /// Tests known to flip between identical runs (`check --write-flaky`
    /// writes them): left out of the inventory, so no verdict counts
    /// them. Left out of the stored form when empty, so manifests that do
    /// not set it keep their hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
    /// Plant a must-fail canary test in each hidden test file before the
    /// baseline and every acceptance run (where the language table can).
    /// Left out of the stored form at its default (`true`), so manifests
    /// that do not set it keep their hash.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub canary: bool,
    /// Run twins of the hidden tests (copies under fresh names that must
    /// fail with a token) at the baseline and every acceptance run, where
    /// the language table can. Left out of the stored form at its default
    /// (`true`), so manifests that do not set it keep their hash.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub twins: bool,
    /// pytest plugins the acceptance run loads (`-p NAME`); plugin
    /// autoload is off there. Left out of the stored form when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<String>,
    /// Any tamper signal fails the attempt as `tampered`. Left out of the
    /// stored form at its default (`false`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_integrity: bool,
}

fn default_true() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

impl Acceptance {
    /// Whether the inventory is given (`fail_to_pass`) rather than taken
    /// from the baseline.
    pub fn has_explicit_inventory(&self) -> bool {
        !self.fail_to_pass.is_empty()
    }

    /// The timeout of each test's own run: `test_timeout`, else the
    /// command timeout.
    pub fn test_timeout_or(&self, command_timeout: Duration) -> Duration {
        self.test_timeout.unwrap_or(command_timeout)
    }

    /// `results`, or `libtest` for a `cargo test` command and `exit` for
    /// anything else.
    pub fn results_format(&self) -> ResultsFormat {
        self.results.clone().unwrap_or_else(|| {
            if self.command.first().map(String::as_str) == Some("cargo")
                && self.command.get(1).map(String::as_str) == Some("test")
            {
                ResultsFormat::Libtest
            } else {
                ResultsFormat::Exit
            }
        })
    }
}

/// `[acceptance] results`: where the verdict's per-test results come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ResultsFormat {
    /// The test binaries `cargo test` builds, run one by one from a
    /// runner-owned copy; libtest's per-test lines and summary.
    Libtest,
    /// A JUnit XML file the command writes, relative to the crate root.
    Junit(String),
    /// The exit status alone (not verified per test).
    Exit,
}

/// Why a `results` value names no format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultsFormatError {
    #[error("junit:{0}: the path must be relative to the crate root, without '..'")]
    JunitPath(String),
    #[error("unknown results format {0:?} (libtest, junit:PATH, exit)")]
    Unknown(String),
}

impl std::str::FromStr for ResultsFormat {
    type Err = ResultsFormatError;

    fn from_str(text: &str) -> Result<ResultsFormat, ResultsFormatError> {
        match text {
            "libtest" => Ok(ResultsFormat::Libtest),
            "exit" => Ok(ResultsFormat::Exit),
            other => match other.strip_prefix("junit:") {
                Some(path) => {
                    let clean = !path.is_empty()
                        && !path.starts_with('/')
                        && path.split('/').all(|c| !c.is_empty() && c != "..");
                    if clean {
                        Ok(ResultsFormat::Junit(path.to_string()))
                    } else {
                        Err(ResultsFormatError::JunitPath(path.to_string()))
                    }
                }
                None => Err(ResultsFormatError::Unknown(other.to_string())),
            },
        }
    }
}

impl TryFrom<String> for ResultsFormat {
    type Error = ResultsFormatError;

    fn try_from(text: String) -> Result<ResultsFormat, ResultsFormatError> {
        text.parse()
    }
}

impl From<ResultsFormat> for String {
    fn from(format: ResultsFormat) -> String {
        format.to_string()
    }
}

impl std::fmt::Display for ResultsFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResultsFormat::Libtest => f.write_str("libtest"),
            ResultsFormat::Junit(path) => write!(f, "junit:{path}"),
            ResultsFormat::Exit => f.write_str("exit"),
        }
    }
}

/// `[setup]`: the job author's commands that bring in what the job needs
/// (crate sources, Python packages) into the job cache, with the network
/// when `network` says so. Every later command sees the cache read-only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// Argv lists, run in order in a copy of `source`; `{cache}` in an
    /// argument is the job cache directory.
    pub commands: Vec<Vec<String>>,
    /// Network access for the setup commands (default `true`); commands of
    /// the later phases follow `[sandbox] network`.
    pub network: bool,
    /// Globs of source files the setup reads beyond the ones the language
    /// table names (lock and manifest files); part of the cache key. Left
    /// out of the stored form when empty, so manifests without it keep
    /// their hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
}

/// The placeholder for the job cache directory in `[setup]` arguments and
/// `[env]` values.
pub const CACHE_PLACEHOLDER: &str = "{cache}";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// The pristine source must fail acceptance, or the job is invalid.
    #[default]
    MustFail,
    Skip,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub attempts: u32,
    pub max_steps: u32,
    pub max_invalid: u32,
    #[serde(with = "super::units::duration_text")]
    pub wall_time: Duration,
    #[serde(with = "super::units::duration_text")]
    pub command_timeout: Duration,
    pub output_cap: ByteSize,
    pub observation_cap: ByteSize,
    pub token_budget: u64,
    /// Memory of each command, all its processes together.
    // Left out of the stored form at its default (and so of the content
    // hash), so manifests written before the key existed keep their hash
    // and their snapshots still load.
    #[serde(default = "default_memory", skip_serializing_if = "is_default_memory")]
    pub memory: ByteSize,
    /// Processes and threads of each command at once.
    #[serde(
        default = "default_processes",
        skip_serializing_if = "is_default_processes"
    )]
    pub processes: u64,
    /// Restarts after faults of the infrastructure (the runner died, the
    /// provider was unreachable, a runtime I/O error) before the job ends
    /// `infra_error`; they never use up `attempts`.
    #[serde(
        default = "default_max_restarts",
        skip_serializing_if = "is_default_max_restarts"
    )]
    pub max_restarts: u32,
}

/// `[limits] max_restarts` when a manifest says nothing.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;

fn default_max_restarts() -> u32 {
    DEFAULT_MAX_RESTARTS
}

fn is_default_max_restarts(n: &u32) -> bool {
    *n == DEFAULT_MAX_RESTARTS
}

/// `[limits] memory` when a manifest says nothing: 4 GiB.
pub const DEFAULT_MEMORY: ByteSize = ByteSize(agent_runtime_sandbox::sandbox::DEFAULT_MEMORY);
/// The least `[limits] memory` (and `exec --memory`) accepted: less cannot
/// even load a program.
pub const MIN_MEMORY: ByteSize = ByteSize(1 << 20);
/// `[limits] processes` when a manifest says nothing.
pub const DEFAULT_PROCESSES: u64 = agent_runtime_sandbox::sandbox::DEFAULT_PROCESSES;
/// The most `[limits] processes` (and `exec --processes`) accepted: the
/// kernel never has more process ids than this (`PID_MAX_LIMIT`).
pub const MAX_PROCESSES: u64 = 1 << 22;

fn default_memory() -> ByteSize {
    DEFAULT_MEMORY
}

fn is_default_memory(memory: &ByteSize) -> bool {
    *memory == DEFAULT_MEMORY
}

fn default_processes() -> u64 {
    DEFAULT_PROCESSES
}

fn is_default_processes(processes: &u64) -> bool {
    *processes == DEFAULT_PROCESSES
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            attempts: 2,
            max_steps: 16,
            max_invalid: 3,
            wall_time: Duration::from_secs(15 * 60),
            command_timeout: Duration::from_secs(120),
            output_cap: ByteSize(64 * 1024),
            observation_cap: ByteSize(16 * 1024),
            token_budget: 500_000,
            memory: DEFAULT_MEMORY,
            processes: DEFAULT_PROCESSES,
            max_restarts: DEFAULT_MAX_RESTARTS,
        }
    }
}

/// An external agent driving a job's attempts: a name of the agent table,
/// its version (the table's pinned one unless a manifest names another)
/// and how it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentChoice {
    pub name: String,
    /// Set when the job is planned (the table's pinned version unless
    /// the manifest or `--agent` names one), so the stored job names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub mode: AgentMode,
    /// The `command` agent's argv: its program (a path, absolute and
    /// canonical, or a name looked up on the search path) and arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Contained: how many times a failed forced verify goes back to the
    /// agent (`[agent] verify_rounds`, default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_rounds: Option<u32>,
    /// Memory of the agent's whole tree in bytes (`[agent] memory`);
    /// `None`: the job's `memory` plus 1 GiB, as the agent's own runtime
    /// shares it with the builds it starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
}

/// How an external agent runs: `leashed`, its every action a call of the
/// runtime's tool gateway; `contained`, with its own tools in the
/// attempt's sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentMode {
    #[default]
    Leashed,
    Contained,
}

impl AgentChoice {
    /// How instance ids and reports name the agent: its name, with
    /// `-contained` when it runs contained (so one sweep can hold both).
    pub fn label(&self) -> String {
        match self.mode {
            AgentMode::Leashed => self.name.clone(),
            AgentMode::Contained => format!("{}-contained", self.name),
        }
    }
}

impl AgentMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentMode::Leashed => "leashed",
            AgentMode::Contained => "contained",
        }
    }
}

/// The names of the agent table (`src/agents/`), `runtime` (the built-in
/// loop) first, for manifests to check a name against.
pub const AGENT_NAMES: &[&str] = &[
    "runtime",
    "claude-code",
    "codex",
    "mini-swe-agent",
    "command",
];

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sandbox {
    pub mode: SandboxMode,
    pub network: bool,
    /// The job's own toolchain directories, first on the search path:
    /// absolute canonical paths, or `{cache}/...` inside the job cache.
    /// Left out of the stored form when empty, so manifests without it
    /// keep their hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub toolchains: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    Off,
    /// Use every layer this machine supports.
    #[default]
    Auto,
    /// Fail closed if a layer is missing.
    Required,
}
