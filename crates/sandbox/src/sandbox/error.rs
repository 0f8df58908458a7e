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

/// Why a probe made in a short-lived forked child found a layer missing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChildProbeError {
    #[error("cannot fork to probe: {0}")]
    Fork(#[source] nix::errno::Errno),
    /// The child's `unshare` of `what` failed; `hint` is empty or says
    /// what may be disabled.
    #[error("unshare({what}) failed: {}{hint}", .errno.desc())]
    Unshare {
        what: &'static str,
        errno: nix::errno::Errno,
        hint: &'static str,
    },
    #[error("probe child ended oddly: {0:?}")]
    Ended(nix::sys::wait::WaitStatus),
    #[error("cannot wait for the probe child: {0}")]
    Wait(#[source] nix::errno::Errno),
}

/// The hint of [`ChildProbeError::Unshare`] when a user namespace was
/// asked for.
pub(crate) const USERNS_HINT: &str = " (unprivileged user namespaces may be disabled)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_reasons_read_as_before() {
        let err = ChildProbeError::Unshare {
            what: "pid, mount",
            errno: nix::errno::Errno::EPERM,
            hint: USERNS_HINT,
        };
        assert_eq!(
            err.to_string(),
            "unshare(pid, mount) failed: Operation not permitted (unprivileged user namespaces \
             may be disabled)"
        );
        assert_eq!(
            ChildProbeError::Fork(nix::errno::Errno::EAGAIN).to_string(),
            format!("cannot fork to probe: {}", nix::errno::Errno::EAGAIN)
        );
    }
}
