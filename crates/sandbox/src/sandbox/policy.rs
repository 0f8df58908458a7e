//! What a job asks of the sandbox.

use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// `off`: no sandbox layer. `auto`: every layer this machine supports.
/// `required`: every layer, or refuse to run (`sandbox_unavailable`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    Off,
    #[default]
    Auto,
    Required,
}

/// A sandbox mode that is none of `off`, `auto` and `required`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}` (off, auto, required)")]
pub struct UnknownMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<SandboxMode, UnknownMode> {
        match text {
            "off" => Ok(SandboxMode::Off),
            "auto" => Ok(SandboxMode::Auto),
            "required" => Ok(SandboxMode::Required),
            other => Err(UnknownMode(other.to_string())),
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SandboxMode::Off => "off",
            SandboxMode::Auto => "auto",
            SandboxMode::Required => "required",
        })
    }
}

/// Resource limits set on the command (and inherited by its children).
/// `None` leaves the runner's limit; core dumps are always disabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Largest file a command may write, in bytes.
    pub file_size: Option<u64>,
    /// Open file descriptors per process.
    pub open_files: Option<u64>,
    /// CPU seconds per process; `None` derives it from the timeout.
    pub cpu_seconds: Option<u64>,
    /// Memory of the whole command (every process of it), in bytes,
    /// enforced by the cgroup memory controller; `None` sets no limit.
    pub memory: Option<u64>,
    /// Processes (and threads) of the whole command at once, enforced by
    /// the cgroup pids controller; `None` sets no limit.
    pub processes: Option<u64>,
}

/// `[limits] memory` when a manifest says nothing.
pub const DEFAULT_MEMORY: u64 = 4 << 30;
/// `[limits] processes` when a manifest says nothing.
pub const DEFAULT_PROCESSES: u64 = 512;

impl Default for ResourceLimits {
    fn default() -> ResourceLimits {
        ResourceLimits {
            file_size: Some(4 << 30),
            open_files: Some(4096),
            cpu_seconds: None,
            memory: Some(DEFAULT_MEMORY),
            processes: Some(DEFAULT_PROCESSES),
        }
    }
}

/// The sandbox a command runs in. The workspace (unless
/// `workspace_read_only`) and the private scratch directory are writable;
/// `writable` and `readable` add to that, on top of the system and
/// toolchain directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Whether the command may use the network at all.
    pub network: bool,
    /// Extra directories (or files) readable and writable, e.g. a target dir.
    pub writable: Vec<PathBuf>,
    /// Extra directories (or files) readable and executable.
    pub readable: Vec<PathBuf>,
    /// Paths that must never be readable (the data dir, acceptance dirs).
    /// A grant containing one of them is an error rather than a silent leak.
    pub deny: Vec<PathBuf>,
    pub limits: ResourceLimits,
    /// The workspace is granted read-only (a test run that must not
    /// change what the next one runs); `writable` may still open parts of
    /// it.
    pub workspace_read_only: bool,
    /// With `network`: join this namespace (an agent's own, with only
    /// the model bridge in it) instead of the host's network. Needs the
    /// namespace layers.
    pub join_network: Option<super::OwnNetwork>,
}
