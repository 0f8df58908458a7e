use std::path::PathBuf;

/// Failures deciding or building the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A layer the policy requires is missing on this machine.
    #[error("sandbox_unavailable: {layer}: {reason}")]
    Unavailable { layer: String, reason: String },
    /// A path that must stay unreadable lies inside a granted directory;
    /// Landlock cannot carve holes, so the grant would expose it.
    #[error("{} must not be readable but lies inside the granted {}", .deny.display(), .grant.display())]
    Conflict { deny: PathBuf, grant: PathBuf },
    #[error("failed to build the {layer} layer: {reason}")]
    Setup { layer: &'static str, reason: String },
}
