//! Turns a policy into the layers to apply, in the runner, and the
//! allocation-free setup the child performs before exec.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use nix::sched::CloneFlags;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::cgroup::{
    CgroupError, CgroupLimits, CgroupSupport, CommandCgroup, EnterFds, PeakStart, Peaks,
    cgroup_support, enter_from_child,
};
use super::error::SandboxError;
use super::exit_page::ExitPage;
use super::landlock::{self, MIN_REQUIRED_ABI, SYSTEM_READ, SYSTEM_WRITE};
use super::mounts::{MountGrant, MountPlan};
use super::namespaces::{self, IdMaps, Namespaces};
use super::network;
use super::policy::{ResourceLimits, SandboxMode, SandboxPolicy};
use super::probe::probe;
use super::rlimits::RlimitPlan;
use super::seccomp;
use super::sys;

/// Paths the executor grants for one command, beyond the system set.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// Read and execute (toolchain, search path).
    pub read: Vec<PathBuf>,
    /// Read, write and execute (workspace, scratch).
    pub write: Vec<PathBuf>,
    /// The command's `HOME` and `TMPDIR` are a fresh tmpfs at
    /// [`SCRATCH`](super::SCRATCH) inside its own root (which needs the
    /// mount layer: ask [`private_root_available`] first) rather than
    /// host directories among `write`.
    pub scratch_in_root: bool,
    /// The command's working directory.
    pub cwd: Option<PathBuf>,
    /// The command is started from the attempt's zygote, which clones its
    /// init straight into its namespaces (see `Namespaces::direct`).
    pub from_zygote: bool,
}

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

/// What the child does between fork and exec. Built in the runner; the
/// child only reads it and makes system calls.
#[derive(Debug)]
pub struct ChildSetup {
    pub(super) parent: Pid,
    /// A pidfd of `parent`, for a child that cannot see its parent's pid
    /// (a [`direct`](Namespaces::direct) init, whose `getppid` is 0).
    pub(super) parent_fd: Option<RawFd>,
    pub(super) rlimits: Option<RlimitPlan>,
    /// Network only, when there is no PID namespace to carry it.
    pub(super) unshare: Option<CloneFlags>,
    pub(super) namespaces: Option<Namespaces>,
    pub(super) cgroup: Option<EnterFds>,
    pub(super) drop_caps: bool,
    pub(super) landlock: Option<RawFd>,
    /// A fresh session keyring for the command.
    pub(super) keyring: bool,
    /// The compiled deny list, installed last.
    pub(super) seccomp: Option<&'static [seccompiler::sock_filter]>,
}

impl ChildSetup {
    /// Whether [`apply`](Self::apply) forks (the PID namespace's waiter
    /// and init): then the child must be a copy of its parent, not a
    /// `CLONE_VM` child borrowing its memory.
    pub(crate) fn forks(&self) -> bool {
        self.namespaces.as_ref().is_some_and(|ns| !ns.shared_pid)
    }

    /// Whether the command is to start in the attempt's PID namespace
    /// (see `attempt_init.rs`), which its zygote holds.
    pub fn shares_pid(&self) -> bool {
        self.namespaces.as_ref().is_some_and(|ns| ns.shared_pid)
    }

    /// The namespaces the child is to be cloned into by its parent (see
    /// [`Namespaces::direct`]), if it is.
    pub(crate) fn direct(&self) -> Option<&Namespaces> {
        self.namespaces.as_ref().filter(|ns| ns.direct)
    }

    /// Runs in the child after fork. Async-signal-safe: system calls only.
    pub fn apply(&self) -> std::io::Result<()> {
        self.apply_head()?;
        if let Some(namespaces) = &self.namespaces {
            // Returns only in the command, inside its namespaces.
            namespaces.enter()?;
        } else if let Some(flags) = self.unshare {
            network::unshare(flags)?;
        }
        self.apply_tail()
    }

    /// What comes before the namespaces: signals, death signal, cgroup,
    /// descriptors, rlimits.
    pub(crate) fn apply_head(&self) -> std::io::Result<()> {
        // A fresh signal state: the runner may block or ignore signals, and
        // a command must get its SIGTERM.
        sys::reset_signals()?;
        // Die with the runner; if it already died, do not run at all.
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
        let parent_alive = match (nix::unistd::getppid().as_raw(), self.parent_fd) {
            // Outside the child's PID namespace: ask its pidfd.
            (0, Some(fd)) => !sys::process_exited(fd),
            (ppid, _) => ppid == self.parent.as_raw(),
        };
        if !parent_alive {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        // Inside the limits before anything else can fork.
        if let Some(fds) = &self.cgroup {
            enter_from_child(fds)?;
        }
        // Only stdin, stdout and stderr reach the command.
        sys::cloexec_from(3)?;
        if let Some(plan) = &self.rlimits {
            plan.apply()?;
        }
        Ok(())
    }

    /// What comes after the namespaces, in the command itself (a warm
    /// command, see `zygote/warm.rs`, applies it before its command is
    /// known).
    pub(crate) fn apply_tail(&self) -> std::io::Result<()> {
        // After the namespaces (which need them as root), before Landlock.
        if self.drop_caps {
            super::caps::drop_all()?;
        }
        // After the namespaces, so nothing above needs a right the ruleset
        // withholds.
        if let Some(fd) = self.landlock {
            landlock::restrict_self(fd)?;
        }
        // The filter denies keyctl: join the new keyring before it.
        if self.keyring {
            seccomp::join_fresh_session_keyring()?;
        }
        // Last: nothing above may be refused by the filter.
        if let Some(program) = self.seccomp {
            seccomp::install(program)?;
        }
        Ok(())
    }

    /// The setup of a command forked by its namespace's init (a warm
    /// init, see `crate::zygote`) once the init applied the rest: the
    /// layers of [`apply_tail`](Self::apply_tail), with the init (PID 1)
    /// as its parent.
    pub(crate) fn command_part(&self) -> ChildSetup {
        ChildSetup {
            parent: Pid::from_raw(1),
            parent_fd: None,
            rlimits: None,
            unshare: None,
            namespaces: None,
            cgroup: None,
            drop_caps: self.drop_caps,
            landlock: self.landlock,
            keyring: self.keyring,
            seccomp: self.seccomp,
        }
    }
}

/// What a command's [`prepare`] depends on, cheap to make: the policy,
/// the grants but the working directory, the timeout, and what the granted
/// paths name now (device and inode, as the ruleset and root caches check).
/// A sandbox prepared for one key serves any command of an equal key.
#[derive(Debug, Clone, PartialEq)]
pub struct ReuseKey {
    policy: SandboxPolicy,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    scratch_in_root: bool,
    from_zygote: bool,
    timeout: Duration,
    ids: Vec<Identity>,
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

/// How many built rulesets and mount plans are kept for reuse: commands of
/// one attempt share their grants, and a batch runs a few attempts at once.
const CACHED: usize = 16;

/// A few recently built values, reused while the same key comes back.
struct Recent<K, V> {
    entries: Mutex<Vec<(K, V)>>,
}

impl<K: PartialEq, V: Clone> Recent<K, V> {
    const fn new() -> Self {
        Recent {
            entries: Mutex::new(Vec::new()),
        }
    }

    fn get_or_build<E>(&self, key: K, build: impl FnOnce(&K) -> Result<V, E>) -> Result<V, E> {
        if let Ok(entries) = self.entries.lock()
            && let Some((_, value)) = entries.iter().find(|(k, _)| *k == key)
        {
            return Ok(value.clone());
        }
        let value = build(&key)?;
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHED {
                entries.remove(0);
            }
            entries.push((key, value.clone()));
        }
        Ok(value)
    }
}

/// A Landlock ruleset for these grants (read, write, block TCP, hard),
/// reused while the same grants come back naming the same files (`ids`,
/// what the grants as given and the skeleton's directories name now):
/// building one opens every path.
fn cached_ruleset(
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    block_tcp: bool,
    hard: bool,
    ids: Vec<Identity>,
) -> Result<Option<Arc<OwnedFd>>, SandboxError> {
    type Key = (Vec<PathBuf>, Vec<PathBuf>, bool, bool, Vec<Identity>);
    static CACHE: Recent<Key, Option<Arc<OwnedFd>>> = Recent::new();
    CACHE.get_or_build(
        (read, write, block_tcp, hard, ids),
        |(read, write, tcp, hard, _)| Ok(landlock::build(read, write, *tcp, *hard)?.map(Arc::new)),
    )
}

/// The CPUs this process may use, asked once: the answer reads the
/// cgroup's quota files, a dozen system calls a command would pay.
fn cores() -> u64 {
    static CORES: OnceLock<u64> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u64))
}

/// A file's device and inode, or zeros when it cannot be read.
type Identity = (u64, u64);

/// What the grants as given (see [`given`]), read then write, name now:
/// the one lookup of them a command's sandbox makes.
fn given_identities(policy: &SandboxPolicy, grants: &Grants) -> Vec<Identity> {
    let (read, write) = given(policy, grants);
    identities(read.iter().chain(&write))
}

/// What `paths` name now. A ruleset and a built root hold the files they
/// were built from: a path removed and made again, or renamed over, is
/// another file, and what was built for the old one must not be reused.
fn identities<P: AsRef<Path>>(paths: impl Iterator<Item = P>) -> Vec<Identity> {
    use std::os::unix::fs::MetadataExt;
    paths
        .map(|path| {
            std::fs::metadata(path.as_ref()).map_or((0, 0), |meta| (meta.dev(), meta.ino()))
        })
        .collect()
}

/// A mount plan for these grants (and a private scratch or not), and with
/// `prepare_root` the namespace holding its root, reused like rulesets
/// while the grants name the same files (`ids`, in the grants' order).
fn cached_plan(
    grants: Vec<MountGrant>,
    scratch: bool,
    prepare_root: bool,
    ids: Vec<Identity>,
) -> Result<(Arc<MountPlan>, Option<Arc<OwnedFd>>), SandboxError> {
    type Plan = (Arc<MountPlan>, Option<Arc<OwnedFd>>);
    type Key = (Vec<MountGrant>, bool, bool, Vec<Identity>);
    static CACHE: Recent<Key, Plan> = Recent::new();
    CACHE.get_or_build(
        (grants, scratch, prepare_root, ids),
        |(grants, scratch, prepare, _)| {
            let plan = MountPlan::new(grants, *scratch)?;
            let root = prepare.then(|| plan.prepared_root()).flatten();
            Ok((Arc::new(plan), root.map(Arc::new)))
        },
    )
}

/// Command cgroups that ended empty and can still tell a command's peaks,
/// kept for the next command with the same limits and floor: making and
/// removing one costs more than a step of most commands (v1 makes three
/// directories).
static IDLE_CGROUPS: Mutex<Vec<(PoolKey, CommandCgroup)>> = Mutex::new(Vec::new());
/// How many idle cgroups a runner keeps.
const IDLE_MAX: usize = 4;

/// What an idle cgroup must match: the limits, and the floor of tasks its
/// `pids.peak` was checked against.
type PoolKey = (CgroupLimits, u64);

/// A command's cgroup, taken from the idle ones or made; given back when
/// dropped if nothing was left in it and its peaks can still be told
/// (see [`CommandCgroup::peaks_reusable`]), else killed and removed.
#[derive(Debug)]
pub struct PooledCgroup {
    key: PoolKey,
    cgroup: Option<CommandCgroup>,
    /// OOM kills counted before this command (a reused cgroup keeps its
    /// counters).
    oom_before: u64,
    /// The counters this command's peaks are read against.
    peaks_start: Option<PeakStart>,
}

impl PooledCgroup {
    fn take(
        support: &CgroupSupport,
        limits: CgroupLimits,
        floor: u64,
    ) -> Result<PooledCgroup, CgroupError> {
        let key = (limits, floor);
        let idle = IDLE_CGROUPS.lock().ok().and_then(|mut idle| {
            let at = idle.iter().position(|(k, _)| *k == key)?;
            Some(idle.swap_remove(at).1)
        });
        let fresh = idle.is_none();
        let cgroup = match idle {
            Some(cgroup) => cgroup,
            None => CommandCgroup::create(support, &limits)?,
        };
        Ok(PooledCgroup {
            key,
            oom_before: cgroup.oom_kills(),
            peaks_start: Some(cgroup.start_peaks(fresh, floor)),
            cgroup: Some(cgroup),
        })
    }

    /// The cgroup, which only `drop` takes out.
    fn enter_fds(&self) -> Option<EnterFds> {
        self.cgroup.as_ref().map(CommandCgroup::enter_fds)
    }

    /// Live processes in it (none once the command is over, unless one
    /// escaped its process group without a PID namespace).
    pub fn population(&self) -> usize {
        self.cgroup.as_ref().map_or(0, CommandCgroup::population)
    }

    /// Kills every process in it.
    pub fn kill_all(&self) -> bool {
        self.cgroup.as_ref().is_none_or(CommandCgroup::kill_all)
    }

    /// Whether the OOM killer fired during this command.
    pub fn oom_killed(&self) -> bool {
        self.cgroup
            .as_ref()
            .is_some_and(|cgroup| cgroup.oom_kills() > self.oom_before)
    }

    /// This command's memory and task peaks, once it is over.
    pub fn peaks(&self) -> Peaks {
        match (&self.cgroup, &self.peaks_start) {
            (Some(cgroup), Some(start)) => cgroup.peaks(start),
            _ => Peaks::default(),
        }
    }
}

impl Drop for PooledCgroup {
    fn drop(&mut self) {
        let Some(cgroup) = self.cgroup.take() else {
            return;
        };
        let reusable = self
            .peaks_start
            .take()
            .is_some_and(|start| cgroup.peaks_reusable(&start));
        if reusable
            && cgroup.population() == 0
            && let Ok(mut idle) = IDLE_CGROUPS.lock()
            && idle.len() < IDLE_MAX
        {
            idle.push((self.key, cgroup));
        }
        // Otherwise dropping the cgroup kills what is left and removes it.
    }
}

/// Removes the idle cgroups (a runner about to exit calls this; a runner
/// that dies leaves them to the next runner's clean-up of dead runners').
pub fn release_idle_cgroups() {
    if let Ok(mut idle) = IDLE_CGROUPS.lock() {
        idle.clear();
    }
}

/// [`grant_lists`], reused while the same grants come back naming the
/// same files (`ids`; resolving them walks every path, link by link). Grants are the runner's choice
/// (system, toolchain, workspace), never a command's.
fn cached_grant_lists(
    policy: &SandboxPolicy,
    grants: &Grants,
    ids: &[Identity],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    type Key = ([Vec<PathBuf>; 4], Vec<Identity>);
    static CACHE: Recent<Key, (Vec<PathBuf>, Vec<PathBuf>)> = Recent::new();
    let key = [
        grants.read.clone(),
        grants.write.clone(),
        policy.readable.clone(),
        policy.writable.clone(),
    ];
    CACHE
        .get_or_build((key, ids.to_vec()), |_| {
            Ok::<_, std::convert::Infallible>(grant_lists(policy, grants))
        })
        .unwrap_or_else(|never| match never {})
}

/// The read and write grants as given: the system paths, the executor's
/// and the policy's.
fn given<'a>(policy: &'a SandboxPolicy, grants: &'a Grants) -> (Vec<&'a Path>, Vec<&'a Path>) {
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
fn grant_lists(policy: &SandboxPolicy, grants: &Grants) -> (Vec<PathBuf>, Vec<PathBuf>) {
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
