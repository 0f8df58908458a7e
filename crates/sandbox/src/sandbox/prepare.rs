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
use super::layer::Layer;
use super::mounts::{MountGrant, MountPlan};
use super::namespaces::{self, IdMaps, Namespaces};
use super::policy::{ResourceLimits, SandboxMode, SandboxPolicy};
use super::probe::{Probe, probe};
use super::reuse::{cached_grant_lists, cached_plan, cached_ruleset};
use super::rlimits::RlimitPlan;
use super::seccomp;

/// The decided sandbox of one command. Keep it alive until the command has
/// been reaped: it owns the Landlock ruleset and the mount sources the
/// child uses, and the page the command's exit status comes back on.
#[derive(Debug)]
pub struct Prepared {
    /// The layers applied, e.g. `landlock-abi7`, `netns`, `rlimits`.
    pub layers: Vec<Layer>,
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
/// name now, looked up by the caller. Each layer is decided by its own
/// planner ([`Planner`]); this puts them together in the order a layer
/// needs the ones before it (a cgroup's task floor and the shared PID
/// namespace depend on the namespaces; the network on Landlock's ABI).
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
    let plan = Planner {
        policy,
        grants,
        ids,
        probe: probe(),
        required: policy.mode == SandboxMode::Required,
    };
    let shape = plan.shape();

    let (cgroup, fallback) = plan.cgroup(&shape)?;
    if let Some((cg, layer)) = &cgroup {
        child.cgroup = cg.enter_fds();
        layers.push(layer.clone());
    }
    child.rlimits = plan.rlimits(fallback, timeout)?;
    // Capabilities: a command started by root keeps none.
    child.drop_caps = super::caps::is_root();
    let (abi, ruleset) = plan.landlock()?;
    if let (Some(abi), Some(fd)) = (abi, &ruleset) {
        child.landlock = Some(landlock::raw(fd));
        layers.push(Layer::Landlock(abi));
    }
    child.seccomp = plan.seccomp()?;
    child.keyring = plan.probe.keyrings;

    let shared_pid = shape.wants_shared_pid && cgroup.is_some() && child.landlock.is_some();
    let (mut exit, mut prepared_root) = (None, None);
    let net_layer = match &shape.namespaces {
        Ok(()) => {
            let made = plan.namespaces(&shape, shared_pid, abi)?;
            child.namespaces = Some(made.namespaces);
            exit = made.exit;
            prepared_root = made.root;
            layers.push(Layer::Pidns);
            layers.push(Layer::Mntns);
            made.net_layer
        }
        Err(reason) if plan.required => return Err(unavailable("pidns", reason.clone())),
        Err(_) => {
            let (unshare, net_layer) = plan.network_alone()?;
            child.unshare = unshare;
            net_layer
        }
    };
    match net_layer {
        Some(layer) => layers.push(layer),
        None if !policy.network && child.landlock.is_some() && abi.is_some_and(|a| a >= 4) => {
            layers.push(Layer::LandlockTcp);
        }
        None => {}
    }
    if let Some(plan) = &child.rlimits {
        layers.push(Layer::Rlimits);
        layers.extend(plan.fallback_layers());
    }
    if child.drop_caps {
        layers.push(Layer::Nocaps);
    }
    if child.keyring {
        layers.push(Layer::Keyring);
    }
    if child.seccomp.is_some() {
        layers.push(Layer::Seccomp);
    }
    Ok(Prepared {
        layers,
        child: Arc::new(child),
        exit,
        cgroup: cgroup.map(|(cg, _)| cg),
        _ruleset: ruleset,
        _root: prepared_root,
    })
}

fn unavailable(layer: &str, reason: String) -> SandboxError {
    SandboxError::Unavailable {
        layer: layer.to_string(),
        reason,
    }
}

/// What one command's layers are decided from.
struct Planner<'a> {
    policy: &'a SandboxPolicy,
    grants: &'a Grants,
    ids: &'a [Identity],
    probe: &'static Probe,
    /// `required` mode: a layer this machine lacks is an error.
    required: bool,
}

/// What the layers depend on, decided before any is made.
struct Shape {
    /// PID and mount namespaces, where this machine has them.
    namespaces: Result<(), String>,
    /// Init cloned by the zygote, not forked by a waiter: as root only (a
    /// user namespace's id maps are written by the waiter).
    direct: bool,
    /// Memory or processes are limited: the command needs a cgroup.
    limited: bool,
    /// The command in the attempt's PID namespace (`attempt_init.rs`):
    /// where a cgroup will hold whatever it leaves and Landlock scopes its
    /// signals away from the namespace's init (both checked again once
    /// made).
    wants_shared_pid: bool,
}

/// The cgroup layer: the command's cgroup and its layer's name, if made,
/// and the limits left to the per-process rlimits.
type Pooled = (Option<(PooledCgroup, Layer)>, ResourceLimits);

/// The namespaces layer, made.
struct MadeNamespaces {
    namespaces: Namespaces,
    exit: Option<ExitPage>,
    root: Option<Arc<OwnedFd>>,
    net_layer: Option<Layer>,
}

impl Planner<'_> {
    fn shape(&self) -> Shape {
        let namespaces = self.probe.namespaces.clone().and_then(|()| {
            super::skeleton::skeleton()
                .map(|_| ())
                .map_err(|err| err.to_string())
        });
        let direct = self.grants.from_zygote && namespaces::base_flags() & libc::CLONE_NEWUSER == 0;
        let limited = self.policy.limits.memory.is_some() || self.policy.limits.processes.is_some();
        let wants_shared_pid = direct
            && limited
            && namespaces.is_ok()
            && cgroup_support().is_ok()
            && self.probe.landlock_abi.as_ref().is_ok_and(|abi| *abi >= 6);
        Shape {
            namespaces,
            direct,
            limited,
            wants_shared_pid,
        }
    }

    /// Memory and processes of the whole command: a cgroup (and its layer
    /// name), or else the limits the per-process rlimits take instead
    /// (weaker: see [`RlimitPlan::fallback`]).
    fn cgroup(&self, shape: &Shape) -> Result<Pooled, SandboxError> {
        let without = ResourceLimits {
            memory: None,
            processes: None,
            ..self.policy.limits.clone()
        };
        if !shape.limited {
            return Ok((None, without));
        }
        // The tasks every command has at once in its cgroup.
        let floor = match shape.namespaces {
            Ok(()) if shape.wants_shared_pid => 1,
            Ok(()) if shape.direct => namespaces::TASKS_DIRECT,
            Ok(()) => namespaces::TASKS,
            Err(_) => 1,
        };
        let made = match cgroup_support() {
            Ok(support) => {
                PooledCgroup::take(support, CgroupLimits::from(&self.policy.limits), floor)
                    .map(|cg| (cg, support.layer_name()))
                    .map_err(|err| err.to_string())
            }
            Err(err) => Err(err.to_string()),
        };
        match made {
            Ok(made) => Ok((Some(made), without)),
            Err(reason) if self.required => Err(unavailable("cgroup", reason)),
            Err(_) => Ok((None, self.policy.limits.clone())),
        }
    }

    /// The per-process resource limits, `limits` among them.
    fn rlimits(
        &self,
        limits: ResourceLimits,
        timeout: Duration,
    ) -> Result<Option<RlimitPlan>, SandboxError> {
        match &self.probe.rlimits {
            Ok(()) => {
                let cpu_default = timeout.as_secs().saturating_add(1).saturating_mul(cores()) + 10;
                Ok(Some(RlimitPlan::new(&limits, cpu_default)))
            }
            Err(reason) if self.required => Err(unavailable("rlimits", reason.clone())),
            Err(_) => Ok(None),
        }
    }

    /// Landlock: this machine's ABI, and the ruleset of the grants (none
    /// where Landlock is missing and not required).
    fn landlock(&self) -> Result<(Option<i32>, Option<Arc<OwnedFd>>), SandboxError> {
        let (policy, grants, ids) = (self.policy, self.grants, self.ids);
        let abi = match &self.probe.landlock_abi {
            Ok(abi) if self.required && *abi < MIN_REQUIRED_ABI => {
                return Err(unavailable(
                    "landlock",
                    format!("ABI {abi} is older than the required {MIN_REQUIRED_ABI}"),
                ));
            }
            Ok(abi) => *abi,
            Err(reason) if self.required => return Err(unavailable("landlock", reason.clone())),
            Err(_) => return Ok((None, None)),
        };
        let (read, write) = cached_grant_lists(policy, grants, ids);
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
        let fd = cached_ruleset(
            rule_read,
            rule_write,
            !policy.network,
            self.required,
            rule_ids,
        )?;
        if fd.is_none() && self.required {
            return Err(unavailable(
                "landlock",
                "the ruleset was not created".into(),
            ));
        }
        Ok((Some(abi), fd))
    }

    /// The system call filter.
    fn seccomp(&self) -> Result<Option<&'static [seccompiler::sock_filter]>, SandboxError> {
        match &self.probe.seccomp {
            Ok(_) => Ok(seccomp::filter().ok()),
            Err(reason) if self.required => Err(unavailable("seccomp", reason.clone())),
            Err(_) => Ok(None),
        }
    }

    /// PID and mount namespaces, and the network with them; `abi` is
    /// Landlock's, where it applies.
    fn namespaces(
        &self,
        shape: &Shape,
        shared_pid: bool,
        abi: Option<i32>,
    ) -> Result<MadeNamespaces, SandboxError> {
        let (policy, grants) = (self.policy, self.grants);
        let mut flags = if shared_pid {
            namespaces::SHARED_PID_FLAGS
        } else {
            namespaces::base_flags()
        };
        let mut netns = None;
        let mut net_layer = None;
        if let (true, Some(own)) = (policy.network, &policy.join_network) {
            netns = Some(own.raw());
            net_layer = Some(Layer::Netns);
        } else if !policy.network {
            // Joining one namespace is much cheaper than making one, but
            // commands sharing it could reach each other's abstract unix
            // sockets unless Landlock scopes them (ABI 6+).
            let scoped = abi.is_some_and(|a| a >= 6);
            match namespaces::shared_netns().filter(|_| scoped) {
                Some(fd) => {
                    netns = Some(fd);
                    net_layer = Some(Layer::Netns);
                }
                None => {
                    flags |= libc::CLONE_NEWNET;
                    net_layer = Some(if flags & libc::CLONE_NEWUSER != 0 {
                        Layer::UserNetns
                    } else {
                        Layer::Netns
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
            self.ids.to_vec(),
        )?;
        // The init of a namespace of the command's own reports its exit
        // here; in the attempt's, the command is the runner's child and
        // reaped by it.
        let exit = if shared_pid {
            None
        } else {
            Some(ExitPage::new().map_err(|e| SandboxError::Setup {
                layer: "pidns",
                reason: format!("cannot map the exit page: {e}"),
            })?)
        };
        let cwd = grants.cwd.clone().unwrap_or_else(|| PathBuf::from("/"));
        let namespaces = Namespaces {
            flags,
            netns,
            id_maps: (flags & libc::CLONE_NEWUSER != 0).then(IdMaps::identity),
            mounts,
            root: root.as_deref().map(AsRawFd::as_raw_fd),
            cwd: CString::new(cwd.as_os_str().as_bytes()).map_err(|_| SandboxError::Setup {
                layer: "mntns",
                reason: "the working directory holds a NUL byte".into(),
            })?,
            direct: shape.direct,
            shared_pid,
            pid_ns: None,
            exit: exit.as_ref().map(ExitPage::writer),
            image: super::init_image::runner_image(),
        };
        Ok(MadeNamespaces {
            namespaces,
            exit,
            root,
            net_layer,
        })
    }

    /// Without PID and mount namespaces: no network by a namespace of
    /// its own where this machine has one (the flags to unshare, and the
    /// layer's name).
    fn network_alone(
        &self,
    ) -> Result<(Option<nix::sched::CloneFlags>, Option<Layer>), SandboxError> {
        if self.grants.scratch_in_root {
            return Err(SandboxError::Setup {
                layer: "mntns",
                reason: "a private scratch needs the mount layer, which is unavailable".into(),
            });
        }
        if self.policy.network && self.policy.join_network.is_some() {
            return Err(unavailable(
                "network",
                "joining a network namespace needs the PID and mount namespaces".into(),
            ));
        }
        if self.policy.network {
            return Ok((None, None));
        }
        match &self.probe.network {
            Ok(kind) => Ok((Some(kind.flags()), Some(kind.layer_name()))),
            Err(reason) if self.required => Err(unavailable("network", reason.clone())),
            Err(_) => Ok((None, None)),
        }
    }
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
