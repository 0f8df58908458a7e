//! Errors of the executor: bad rules, refused argv, and failures to run.

use std::path::PathBuf;

use crate::sandbox::SandboxError;

/// A rule that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowError {
    #[error("an allow rule is empty")]
    Empty,
    #[error("bad allow rule `{rule}`: {reason}")]
    Bad { rule: String, reason: String },
}

impl AllowError {
    pub(crate) fn bad(rule: &str, reason: &str) -> AllowError {
        AllowError::Bad {
            rule: rule.to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Why an argv was refused before anything ran. The text is one line,
/// meant to be shown to whoever asked for the command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the command is empty")]
    EmptyArgv,
    #[error("program must be a name, not a path: {0}")]
    ProgramIsPath(String),
    #[error("not a program name: `{0}`")]
    BadProgram(String),
    #[error("an argument contains a NUL byte")]
    NulByte,
    #[error("no command is allowed (the allow list is empty)")]
    NoRules,
    #[error("`{shown}` does not match any allow rule ({rules})")]
    NoMatch { shown: String, rules: String },
}

/// Failures of [`run`](super::run) and its helpers.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("refused: {0}")]
    Refused(#[from] Refusal),
    /// An allow rule the caller built is malformed (a runner's own rule,
    /// never a model's request).
    #[error("bad allow rule: {0}")]
    Rule(#[from] AllowError),
    #[error("`{program}` is not an executable file in the search path ({path})")]
    NotFound { program: String, path: String },
    #[error("working directory {} is not inside the workspace {}", .cwd.display(), .workspace.display())]
    CwdOutsideWorkspace { cwd: PathBuf, workspace: PathBuf },
    #[error("bad environment variable `{key}`: {reason}")]
    BadEnv { key: String, reason: &'static str },
    #[error("sandbox_unavailable: {layer}: {reason}")]
    SandboxUnavailable { layer: String, reason: String },
    #[error("failed to set up the sandbox: {0}")]
    Sandbox(SandboxError),
    /// `why` is empty or `: ` and what is missing inside the sandbox.
    #[error("failed to start `{program}` ({}): {source}{why}", .resolved.display())]
    Spawn {
        program: String,
        resolved: PathBuf,
        why: String,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to {action}: {source}")]
    Io {
        action: String,
        #[source]
        source: std::io::Error,
    },
}

impl ExecError {
    pub(crate) fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> ExecError {
        let action = action.into();
        move |source| ExecError::Io { action, source }
    }

    /// The failure kind a caller records: `sandbox_unavailable` when a
    /// required sandbox layer is missing, `refused` for a disallowed
    /// command, `exec_error` otherwise.
    pub fn kind(&self) -> &'static str {
        match self {
            ExecError::SandboxUnavailable { .. } => "sandbox_unavailable",
            ExecError::Refused(_) => "refused",
            _ => "exec_error",
        }
    }
}

impl From<SandboxError> for ExecError {
    fn from(err: SandboxError) -> ExecError {
        match err {
            SandboxError::Unavailable { layer, reason } => {
                ExecError::SandboxUnavailable { layer, reason }
            }
            other => ExecError::Sandbox(other),
        }
    }
}
