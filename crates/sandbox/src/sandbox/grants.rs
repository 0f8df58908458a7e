//! What a command is granted (the system set, the executor's grants and
//! the policy's), what those paths name now, and the key a prepared
//! sandbox is reused under.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::SandboxError;
use super::identity::{Identity, kept_identities};
use super::landlock::{SYSTEM_READ, SYSTEM_WRITE};
use super::policy::SandboxPolicy;

/// Paths the executor grants for one command, beyond the system set.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// Read and execute (toolchain, search path).
    pub read: Vec<PathBuf>,
    /// Read, write and execute (workspace, scratch).
    pub write: Vec<PathBuf>,
    /// The command's `HOME` and `TMPDIR` are a fresh tmpfs at
    /// [`SCRATCH`](super::SCRATCH) inside its own root (which needs the
    /// mount layer: ask [`private_root_available`](super::private_root_available) first) rather than
    /// host directories among `write`.
    pub scratch_in_root: bool,
    /// The command's working directory.
    pub cwd: Option<PathBuf>,
    /// The command is started from the attempt's zygote, which clones its
    /// init straight into its namespaces (see `Namespaces::direct`).
    pub from_zygote: bool,
}

/// What a command's [`prepare`](super::prepare()) depends on, cheap to make: the policy,
/// the grants but the working directory, the timeout, and what the granted
/// paths name now (device and inode, as the ruleset and root caches check).
/// A sandbox prepared for one key serves any command of an equal key.
#[derive(Debug, Clone, PartialEq)]
pub struct ReuseKey {
    pub(super) policy: SandboxPolicy,
    pub(super) read: Vec<PathBuf>,
    pub(super) write: Vec<PathBuf>,
    scratch_in_root: bool,
    from_zygote: bool,
    timeout: Duration,
    pub(super) ids: Vec<Identity>,
}

impl ReuseKey {
    pub fn new(policy: &SandboxPolicy, grants: &Grants, timeout: Duration) -> ReuseKey {
        let ids = given_identities(policy, grants);
        ReuseKey {
            policy: policy.clone(),
            read: grants.read.clone(),
            write: grants.write.clone(),
            scratch_in_root: grants.scratch_in_root,
            from_zygote: grants.from_zygote,
            timeout,
            ids,
        }
    }
}

/// What the grants as given (see [`given`]), read then write, name now:
/// the one lookup of them a command's sandbox makes, kept while nothing
/// could have changed it (see `identity.rs`).
pub(super) fn given_identities(policy: &SandboxPolicy, grants: &Grants) -> Vec<Identity> {
    let (read, write) = given(policy, grants);
    let paths: Vec<&Path> = read.into_iter().chain(write).collect();
    kept_identities(&paths)
}

/// The read and write grants as given: the system paths, the executor's
/// and the policy's.
pub(super) fn given<'a>(
    policy: &'a SandboxPolicy,
    grants: &'a Grants,
) -> (Vec<&'a Path>, Vec<&'a Path>) {
    let read = SYSTEM_READ
        .iter()
        .map(Path::new)
        .chain(grants.read.iter().map(PathBuf::as_path))
        .chain(policy.readable.iter().map(PathBuf::as_path))
        .collect();
    let write = SYSTEM_WRITE
        .iter()
        .map(Path::new)
        .chain(grants.write.iter().map(PathBuf::as_path))
        .chain(policy.writable.iter().map(PathBuf::as_path))
        .collect();
    (read, write)
}

/// Canonical read and write grants, system paths included; paths that do
/// not exist are dropped.
pub(super) fn grant_lists(policy: &SandboxPolicy, grants: &Grants) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let canon = |paths: Vec<&Path>| -> Vec<PathBuf> {
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
    let (read, write) = given(policy, grants);
    (canon(read), canon(write))
}

/// A denied path inside any grant would be exposed by it: refuse.
pub(super) fn check_denied<'a>(
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
    fn a_reuse_key_follows_the_timeout_and_a_grant_made_again_but_not_the_directory() {
        let dir = std::env::temp_dir().join(format!("reuse-key-{}", std::process::id()));
        let ws = dir.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let policy = SandboxPolicy::default();
        let grants = Grants {
            write: vec![ws.clone()],
            ..Grants::default()
        };
        let five = Duration::from_secs(5);
        let key = ReuseKey::new(&policy, &grants, five);
        let elsewhere = Grants {
            cwd: Some(ws.join("sub")),
            ..grants.clone()
        };
        assert_eq!(key, ReuseKey::new(&policy, &elsewhere, five));
        assert_ne!(key, ReuseKey::new(&policy, &grants, Duration::from_secs(6)));
        let networked = SandboxPolicy {
            network: true,
            ..policy.clone()
        };
        assert_ne!(key, ReuseKey::new(&networked, &grants, five));
        // The workspace made again at its path (made before the old one
        // goes, so it cannot get its inode) is another directory.
        let fresh = dir.join("ws-new");
        std::fs::create_dir(&fresh).unwrap();
        std::fs::remove_dir(&ws).unwrap();
        std::fs::rename(&fresh, &ws).unwrap();
        let again = ReuseKey::new(&policy, &grants, five);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_ne!(key, again);
    }
}
