//! Turns a policy into the layers to apply, in the runner: the [`Prepared`]
//! sandbox of one command, whose child part is a [`ChildSetup`].

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::cgroup::{CgroupLimits, PooledCgroup, cgroup_support};
use super::child_setup::ChildSetup;
use super::error::SandboxError;
use super::exit_page::ExitPage;
use super::grants::{Grants, ReuseKey, check_denied, given, given_identities};
use super::identity::{Identity, identities};
use super::landlock::{self, MIN_REQUIRED_ABI};
use super::mounts::{MountGrant, MountPlan};
use super::namespaces::{self, IdMaps, Namespaces};
use super::policy::{ResourceLimits, SandboxMode, SandboxPolicy};
use super::probe::probe;
use super::reuse::{cached_grant_lists, cached_plan, cached_ruleset};
use super::rlimits::RlimitPlan;
use super::seccomp;

/// The decided sandbox of one command. Keep it alive until the command has
/// been reaped: it owns the Landlock ruleset and the mount sources the
/// child uses, and the page the command's exit status comes back on.
#[derive(Debug)]
pub struct Prepared {
    /// Names of the layers applied, e.g. `landlock-abi7`, `netns`, `rlimits`.
    pub layers: Vec<String>,
    pub child: Arc<ChildSetup>,
    /// Where the namespace's init reports the command's exit (PID namespace only).
    pub exit: Option<ExitPage>,
    /// The command's cgroup (memory and process limits, kill, OOM).
    pub cgroup: Option<PooledCgroup>,
    _ruleset: Option<Arc<OwnedFd>>,
    /// The mount namespace the command's is copied from.
    _root: Option<Arc<OwnedFd>>,
}

/// Decides and builds the layers for `policy`. `timeout` sizes the default
/// CPU limit.
pub fn prepare(
    policy: &SandboxPolicy,
    grants: &Grants,
    timeout: Duration,
) -> Result<Prepared, SandboxError> {
    let ids = match policy.mode {
        SandboxMode::Off => Vec::new(),
        _ => given_identities(policy, grants),
    };
    prepare_with(policy, grants, timeout, &ids)
}

/// [`prepare`] for a command whose `key` was just made of the same policy
/// and grants: the granted paths it looked up serve every cache, instead
/// of being looked up again for each (a command's grants name dozens of
/// paths). A key of other grants is not used.
pub fn prepare_keyed(
    policy: &SandboxPolicy,
    grants: &Grants,
    timeout: Duration,
    key: &ReuseKey,
) -> Result<Prepared, SandboxError> {
    if key.policy != *policy || key.read != grants.read || key.write != grants.write {
        return prepare(policy, grants, timeout);
    }
    prepare_with(policy, grants, timeout, &key.ids)
}

/// [`prepare`] with `ids`, what the granted paths as given (see [`given`])
/// name now, looked up by the caller.
fn prepare_with(
    policy: &SandboxPolicy,
    grants: &Grants,
    timeout: Duration,
    ids: &[Identity],
) -> Result<Prepared, SandboxError> {
    let mut child = ChildSetup {
        parent: nix::unistd::getpid(),
        parent_fd: None,
        rlimits: None,
        unshare: None,
        namespaces: None,
        cgroup: None,
        drop_caps: false,
        landlock: None,
        keyring: false,
        seccomp: None,
    };
    let mut layers = Vec::new();
    if policy.mode == SandboxMode::Off {
        return Ok(Prepared {
            layers,
            child: Arc::new(child),
            exit: None,
            cgroup: None,
            _ruleset: None,
            _root: None,
        });
    }
    let required = policy.mode == SandboxMode::Required;
    let probe = probe();
    let unavailable = |layer: &str, reason: String| SandboxError::Unavailable {
        layer: layer.to_string(),
        reason,
    };

    // Memory and processes of the whole command: a cgroup, or else the
    // per-process rlimits (weaker: see RlimitPlan::fallback).
    let mut cgroup = None;
    let mut fallback = ResourceLimits {
        memory: None,
        processes: None,
        ..policy.limits.clone()
    };
    // PID and mount namespaces, where this machine has them (decided
    // here: a cgroup's peaks depend on them).
    let namespaces_ok = probe.namespaces.clone().and_then(|()| {
        super::skeleton::skeleton()
            .map(|_| ())
            .map_err(|err| err.to_string())
    });
    // Init cloned by the zygote, not forked by a waiter: as root only (a
    // user namespace's id maps are written by the waiter).
    let direct = grants.from_zygote && namespaces::base_flags() & libc::CLONE_NEWUSER == 0;
    let limited = policy.limits.memory.is_some() || policy.limits.processes.is_some();
    // The command in the attempt's PID namespace (`attempt_init.rs`):
    // where a cgroup will hold whatever it leaves and Landlock scopes its
    // signals away from the namespace's init (both checked again below,
    // once made).
    let wants_shared_pid = direct
        && limited
        && namespaces_ok.is_ok()
        && cgroup_support().is_ok()
        && probe.landlock_abi.as_ref().is_ok_and(|abi| *abi >= 6);
    if limited {
        // The tasks every command has at once in its cgroup.
        let floor = match namespaces_ok {
            Ok(()) if wants_shared_pid => 1,
            Ok(()) if direct => namespaces::TASKS_DIRECT,
            Ok(()) => namespaces::TASKS,
            Err(_) => 1,
        };
        let made = match cgroup_support() {
            Ok(support) => PooledCgroup::take(support, CgroupLimits::from(&policy.limits), floor)
                .map(|cg| (cg, support.layer_name()))
                .map_err(|err| err.to_string()),
            Err(err) => Err(err.to_string()),
        };
        match made {
            Ok((cg, layer)) => {
                child.cgroup = cg.enter_fds();
                cgroup = Some(cg);
                layers.push(layer.to_string());
            }
            Err(reason) if required => return Err(unavailable("cgroup", reason)),
            Err(_) => fallback = policy.limits.clone(),
        }
    }

    // Resource limits.
    match &probe.rlimits {
        Ok(()) => {
            let cores = cores();
            let cpu_default = timeout.as_secs().saturating_add(1).saturating_mul(cores) + 10;
            child.rlimits = Some(RlimitPlan::new(&fallback, cpu_default));
        }
        Err(reason) if required => return Err(unavailable("rlimits", reason.clone())),
        Err(_) => {}
    }

    // Capabilities: a command started by root keeps none.
    if super::caps::is_root() {
        child.drop_caps = true;
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
    let (read, write) = cached_grant_lists(policy, grants, ids);
    let mut ruleset = None;
    if let Some(abi) = abi {
        check_denied(&policy.deny, read.iter().chain(&write))?;
        // With the mount layer, the fresh /proc and scratch are mounted on
        // skeleton directories, whose rules they inherit.
        let (mut rule_read, mut rule_write) = (read.clone(), write.clone());
        let mut rule_ids = ids.to_vec();
        if private_root_available(policy)
            && let Some((root, scratch)) = MountPlan::landlock_grants()
        {
            rule_ids.extend(identities([&root].into_iter()));
            rule_read.push(root);
            if grants.scratch_in_root {
                rule_ids.extend(identities([&scratch].into_iter()));
                rule_write.push(scratch);
            }
        }
        let fd = cached_ruleset(rule_read, rule_write, !policy.network, required, rule_ids)?;
        if let Some(fd) = fd {
            child.landlock = Some(landlock::raw(&fd));
            ruleset = Some(fd);
            layers.push(format!("landlock-abi{abi}"));
        } else if required {
            return Err(unavailable(
                "landlock",
                "the ruleset was not created".into(),
            ));
        }
    }

    // The system call filter, and a keyring of the command's own.
    match &probe.seccomp {
        Ok(_) => child.seccomp = seccomp::filter().ok(),
        Err(reason) if required => return Err(unavailable("seccomp", reason.clone())),
        Err(_) => {}
    }
    child.keyring = probe.keyrings;

    // PID and mount namespaces, and the network with them.
    let mut exit = None;
    let mut prepared_root = None;
    let mut net_layer = None;
    let shared_pid = wants_shared_pid && cgroup.is_some() && child.landlock.is_some();
    match namespaces_ok {
        Ok(()) => {
            let mut flags = if shared_pid {
                namespaces::SHARED_PID_FLAGS
            } else {
                namespaces::base_flags()
            };
            let mut netns = None;
            if !policy.network {
                // Joining one namespace is much cheaper than making one, but
                // commands sharing it could reach each other's abstract unix
                // sockets unless Landlock scopes them (ABI 6+).
                let scoped = abi.is_some_and(|a| a >= 6);
                match namespaces::shared_netns().filter(|_| scoped) {
                    Some(fd) => {
                        netns = Some(fd);
                        net_layer = Some("netns");
                    }
                    None => {
                        flags |= libc::CLONE_NEWNET;
                        net_layer = Some(if flags & libc::CLONE_NEWUSER != 0 {
                            "userns+netns"
                        } else {
                            "netns"
                        });
                    }
                }
            }
            // The grants as given, not resolved: the plan recreates the
            // links on their way (`/bin -> usr/bin`, a toolchain directory
            // that is a link) and binds their real paths.
            let (given_read, given_write) = given(policy, grants);
            let mount_grants: Vec<MountGrant> = given_read
                .iter()
                .map(|path| (path, false))
                .chain(given_write.iter().map(|path| (path, true)))
                .map(|(path, writable)| MountGrant {
                    path: path.to_path_buf(),
                    writable,
                })
                .collect();
            // As root only: joining another mount namespace from a user
            // namespace of the command's own is refused.
            let (mounts, root) = cached_plan(
                mount_grants,
                grants.scratch_in_root,
                flags & libc::CLONE_NEWUSER == 0,
                ids.to_vec(),
            )?;
            // The init of a namespace of the command's own reports its
            // exit here; in the attempt's, the command is the runner's
            // child and reaped by it.
            let page = if shared_pid {
                None
            } else {
                Some(ExitPage::new().map_err(|e| SandboxError::Setup {
                    layer: "pidns",
                    reason: format!("cannot map the exit page: {e}"),
                })?)
            };
            let cwd = grants.cwd.clone().unwrap_or_else(|| PathBuf::from("/"));
            child.namespaces = Some(Namespaces {
                flags,
                netns,
                id_maps: (flags & libc::CLONE_NEWUSER != 0).then(IdMaps::identity),
                mounts,
                root: root.as_deref().map(AsRawFd::as_raw_fd),
                cwd: CString::new(cwd.as_os_str().as_bytes()).map_err(|_| SandboxError::Setup {
                    layer: "mntns",
                    reason: "the working directory holds a NUL byte".into(),
                })?,
                direct,
                shared_pid,
                pid_ns: None,
                exit: page.as_ref().map(ExitPage::writer),
                image: super::init_image::runner_image(),
            });
            exit = page;
            prepared_root = root;
            layers.push("pidns".to_string());
            layers.push("mntns".to_string());
        }
        Err(reason) if required => return Err(unavailable("pidns", reason)),
        Err(_) => {
            if grants.scratch_in_root {
                return Err(SandboxError::Setup {
                    layer: "mntns",
                    reason: "a private scratch needs the mount layer, which is unavailable".into(),
                });
            }
            if !policy.network {
                match &probe.network {
                    Ok(kind) => {
                        child.unshare = Some(kind.flags());
                        net_layer = Some(kind.layer_name());
                    }
                    Err(reason) if required => {
                        return Err(unavailable("network", reason.clone()));
                    }
                    Err(_) => {}
                }
            }
        }
    }
    match net_layer {
        Some(name) => layers.push(name.to_string()),
        None if !policy.network && child.landlock.is_some() && abi.is_some_and(|a| a >= 4) => {
            layers.push("landlock-tcp".to_string());
        }
        None => {}
    }
    if let Some(plan) = &child.rlimits {
        layers.push("rlimits".to_string());
        layers.extend(plan.fallback_layers().iter().map(|l| l.to_string()));
    }
    if child.drop_caps {
        layers.push("nocaps".to_string());
    }
    if child.keyring {
        layers.push("keyring".to_string());
    }
    if child.seccomp.is_some() {
        layers.push("seccomp".to_string());
    }
    Ok(Prepared {
        layers,
        child: Arc::new(child),
        exit,
        cgroup,
        _ruleset: ruleset,
        _root: prepared_root,
    })
}

/// Whether commands under `policy` get their own root file system (and
/// so can have their scratch inside it): the sandbox is on and this
/// machine has PID and mount namespaces.
pub fn private_root_available(policy: &SandboxPolicy) -> bool {
    policy.mode != SandboxMode::Off
        && probe().namespaces.is_ok()
        && super::skeleton::skeleton().is_ok()
}

/// The CPUs this process may use, asked once: the answer reads the
/// cgroup's quota files, a dozen system calls a command would pay.
fn cores() -> u64 {
    static CORES: OnceLock<u64> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

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
