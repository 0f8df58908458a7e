//! Turns a policy into the layers to apply, in the runner, and the
//! allocation-free setup the child performs before exec.

use std::os::fd::{OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sched::CloneFlags;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::error::SandboxError;
use super::landlock::{self, MIN_REQUIRED_ABI, SYSTEM_READ, SYSTEM_WRITE};
use super::network;
use super::policy::{SandboxMode, SandboxPolicy};
use super::probe::probe;
use super::rlimits::RlimitPlan;

/// Paths the executor grants for one command, beyond the system set.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// Read and execute (toolchain, search path).
    pub read: Vec<PathBuf>,
    /// Read, write and execute (workspace, scratch).
    pub write: Vec<PathBuf>,
}

/// The decided sandbox of one command. Keep it alive until the child has
/// been spawned: it owns the Landlock ruleset descriptor the child uses.
#[derive(Debug)]
pub struct Prepared {
    /// Names of the layers applied, e.g. `landlock-abi7`, `netns`, `rlimits`.
    pub layers: Vec<String>,
    pub child: ChildSetup,
    _ruleset: Option<OwnedFd>,
}

/// What the child does between fork and exec. Plain copyable data so the
/// child never allocates.
#[derive(Debug, Clone, Copy)]
pub struct ChildSetup {
    parent: Pid,
    rlimits: Option<RlimitPlan>,
    unshare: Option<CloneFlags>,
    drop_caps: bool,
    landlock: Option<RawFd>,
}

impl ChildSetup {
    /// Runs in the child after fork. Async-signal-safe: system calls only.
    pub fn apply(&self) -> std::io::Result<()> {
        // Die with the runner; if it already died, do not run at all.
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
        if nix::unistd::getppid() != self.parent {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        if let Some(plan) = &self.rlimits {
            plan.apply()?;
        }
        if let Some(flags) = self.unshare {
            network::unshare(flags)?;
        }
        // After unshare (which needs them as root), before Landlock.
        if self.drop_caps {
            super::caps::drop_all()?;
        }
        // Last, so nothing above needs a right the ruleset withholds.
        if let Some(fd) = self.landlock {
            landlock::restrict_self(fd)?;
        }
        Ok(())
    }
}

/// Decides and builds the layers for `policy`. `timeout` sizes the default
/// CPU limit.
pub fn prepare(
    policy: &SandboxPolicy,
    grants: &Grants,
    timeout: Duration,
) -> Result<Prepared, SandboxError> {
    let mut prepared = Prepared {
        layers: Vec::new(),
        child: ChildSetup {
            parent: nix::unistd::getpid(),
            rlimits: None,
            unshare: None,
            drop_caps: false,
            landlock: None,
        },
        _ruleset: None,
    };
    if policy.mode == SandboxMode::Off {
        return Ok(prepared);
    }
    let required = policy.mode == SandboxMode::Required;
    let probe = probe();
    let unavailable = |layer: &str, reason: String| SandboxError::Unavailable {
        layer: layer.to_string(),
        reason,
    };

    // Resource limits.
    match &probe.rlimits {
        Ok(()) => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
            let cpu_default = timeout.as_secs().saturating_add(1).saturating_mul(cores) + 10;
            prepared.child.rlimits = Some(RlimitPlan::new(&policy.limits, cpu_default));
        }
        Err(reason) if required => return Err(unavailable("rlimits", reason.clone())),
        Err(_) => {}
    }

    // Capabilities: a command started by root keeps none.
    if super::caps::is_root() {
        prepared.child.drop_caps = true;
    }

    // Network.
    let mut tcp_by_landlock = false;
    if !policy.network {
        match &probe.network {
            Ok(kind) => prepared.child.unshare = Some(kind.flags()),
            Err(reason) if required => return Err(unavailable("network", reason.clone())),
            Err(_) => tcp_by_landlock = true,
        }
    }

    // Landlock.
    let abi = match &probe.landlock_abi {
        Ok(abi) if required && *abi < MIN_REQUIRED_ABI => {
            return Err(unavailable(
                "landlock",
                format!("ABI {abi} is older than the required {MIN_REQUIRED_ABI}"),
            ));
        }
        Ok(abi) => Some(*abi),
        Err(reason) if required => return Err(unavailable("landlock", reason.clone())),
        Err(_) => None,
    };
    if let Some(abi) = abi {
        let (read, write) = grant_lists(policy, grants);
        check_denied(&policy.deny, read.iter().chain(&write))?;
        let fd = landlock::build(&read, &write, !policy.network, required)?;
        if let Some(fd) = fd {
            prepared.child.landlock = Some(landlock::raw(&fd));
            prepared._ruleset = Some(fd);
            prepared.layers.push(format!("landlock-abi{abi}"));
        } else if required {
            return Err(unavailable(
                "landlock",
                "the ruleset was not created".into(),
            ));
        }
    }
    if let Some(flags) = prepared.child.unshare {
        let kind = if flags.contains(CloneFlags::CLONE_NEWUSER) {
            network::NetIsolation::UserNetNs
        } else {
            network::NetIsolation::NetNs
        };
        prepared.layers.push(kind.layer_name().to_string());
    } else if tcp_by_landlock && prepared.child.landlock.is_some() && abi.is_some_and(|a| a >= 4) {
        prepared.layers.push("landlock-tcp".to_string());
    }
    if prepared.child.rlimits.is_some() {
        prepared.layers.push("rlimits".to_string());
    }
    if prepared.child.drop_caps {
        prepared.layers.push("nocaps".to_string());
    }
    Ok(prepared)
}

/// Canonical read and write grants, system paths included; paths that do
/// not exist are dropped.
fn grant_lists(policy: &SandboxPolicy, grants: &Grants) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let canon = |paths: &mut dyn Iterator<Item = &Path>| -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for path in paths {
            if let Ok(path) = path.canonicalize()
                && !out.contains(&path)
            {
                out.push(path);
            }
        }
        out
    };
    let read = canon(
        &mut SYSTEM_READ
            .iter()
            .map(Path::new)
            .chain(grants.read.iter().map(PathBuf::as_path))
            .chain(policy.readable.iter().map(PathBuf::as_path)),
    );
    let write = canon(
        &mut SYSTEM_WRITE
            .iter()
            .map(Path::new)
            .chain(grants.write.iter().map(PathBuf::as_path))
            .chain(policy.writable.iter().map(PathBuf::as_path)),
    );
    (read, write)
}

/// A denied path inside any grant would be exposed by it: refuse.
fn check_denied<'a>(
    deny: &[PathBuf],
    grants: impl Iterator<Item = &'a PathBuf> + Clone,
) -> Result<(), SandboxError> {
    for denied in deny {
        let denied = denied.canonicalize().unwrap_or_else(|_| denied.clone());
        if let Some(grant) = grants.clone().find(|grant| denied.starts_with(grant)) {
            return Err(SandboxError::Conflict {
                deny: denied,
                grant: grant.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denied_path_inside_a_grant_is_a_conflict() {
        let grants = [PathBuf::from("/srv/ws")];
        assert!(check_denied(&[PathBuf::from("/srv/ws/data")], grants.iter()).is_err());
        // A denied directory that merely contains a grant is fine: the rest
        // of it stays unreadable.
        assert!(check_denied(&[PathBuf::from("/srv")], grants.iter()).is_ok());
        assert!(check_denied(&[PathBuf::from("/srv/other")], grants.iter()).is_ok());
    }

    #[test]
    fn off_applies_nothing() {
        let policy = SandboxPolicy {
            mode: SandboxMode::Off,
            ..SandboxPolicy::default()
        };
        let prepared = prepare(&policy, &Grants::default(), Duration::from_secs(1)).unwrap();
        assert!(prepared.layers.is_empty());
    }
}
