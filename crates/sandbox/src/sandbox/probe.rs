//! What this machine supports, found once per process and shared by
//! `auto`, `required` and `doctor` (less what a test hook removes, in a
//! build with them: see `test_hooks.rs`).

use super::layer::Layer;
use std::sync::OnceLock;

use nix::sys::resource::{Resource, getrlimit};

use super::landlock::{self, MIN_REQUIRED_ABI};
use super::network::{self, NetIsolation};
use super::test_hooks::{TestHooks, test_hooks};

/// Availability of each layer, with the reason when one is missing.
#[derive(Debug, Clone)]
pub struct Probe {
    pub landlock_abi: Result<i32, String>,
    pub network: Result<NetIsolation, String>,
    pub rlimits: Result<(), String>,
    /// PID and mount namespaces (with a user namespace when not root).
    pub namespaces: Result<(), String>,
    /// System call filtering, with the filter's size in instructions.
    pub seccomp: Result<usize, String>,
    /// Whether the kernel has keyrings (each command gets a fresh session
    /// keyring where it does).
    pub keyrings: bool,
}

/// One line of the doctor's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerStatus {
    pub layer: &'static str,
    pub available: bool,
    pub detail: String,
}

/// The probe, run on first use.
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| {
        let found = Probe {
            landlock_abi: landlock::kernel_abi().map_err(|err| err.to_string()),
            network: network::probe().map_err(|err| err.to_string()),
            namespaces: super::namespaces::probe().map_err(|err| err.to_string()),
            rlimits: getrlimit(Resource::RLIMIT_CORE)
                .map(|_| ())
                .map_err(|errno| format!("getrlimit failed: {errno}")),
            seccomp: super::seccomp::probe().map_err(|err| err.to_string()),
            keyrings: super::seccomp::keyrings_present(),
        };
        #[cfg(all(feature = "test-hooks", debug_assertions))]
        let found = match test_hooks() {
            Some(hooks) => hooks.apply(found),
            None => found,
        };
        found
    })
}

impl Probe {
    pub fn statuses(&self) -> Vec<LayerStatus> {
        let landlock = match &self.landlock_abi {
            Ok(abi) if *abi >= MIN_REQUIRED_ABI => LayerStatus {
                layer: "landlock",
                available: true,
                detail: format!(
                    "ABI {abi}: filesystem{}{}",
                    if *abi >= 4 { ", TCP" } else { "" },
                    if *abi >= 6 {
                        ", signal and abstract-socket scoping"
                    } else {
                        ""
                    }
                ),
            },
            Ok(abi) => LayerStatus {
                layer: "landlock",
                available: true,
                detail: format!(
                    "ABI {abi}: partial (truncation not governed); `required` needs ABI {MIN_REQUIRED_ABI}+"
                ),
            },
            Err(reason) => LayerStatus {
                layer: "landlock",
                available: false,
                detail: reason.clone(),
            },
        };
        let network = match &self.network {
            Ok(kind) => LayerStatus {
                layer: "network",
                available: true,
                detail: format!("{}: private namespace, loopback down", kind.layer_name()),
            },
            Err(reason) => LayerStatus {
                layer: "network",
                available: false,
                detail: reason.clone(),
            },
        };
        let rlimits = LayerStatus {
            layer: "rlimits",
            available: self.rlimits.is_ok(),
            detail: match &self.rlimits {
                Ok(()) => "core dumps off, file size, open files, CPU seconds".to_string(),
                Err(reason) => reason.clone(),
            },
        };
        let namespaces = |layer: &'static str, what: &str| LayerStatus {
            layer,
            available: self.namespaces.is_ok(),
            detail: match &self.namespaces {
                Ok(()) => what.to_string(),
                Err(reason) => reason.clone(),
            },
        };
        vec![
            landlock,
            network,
            rlimits,
            namespaces(
                "pidns",
                "a PID namespace per command, or one per attempt with a cgroup per command: nothing outlives a command, other processes are hidden",
            ),
            namespaces(
                "mntns",
                "a mount namespace per command: only the granted paths exist (no host sockets)",
            ),
            match super::cgroup::cgroup_support() {
                Ok(support) => LayerStatus {
                    layer: "cgroup",
                    available: true,
                    detail: support.describe(),
                },
                Err(reason) => LayerStatus {
                    layer: "cgroup",
                    available: false,
                    detail: format!(
                        "{reason}; memory and processes fall back to per-process rlimits"
                    ),
                },
            },
            LayerStatus {
                layer: "seccomp",
                available: self.seccomp.is_ok(),
                detail: match &self.seccomp {
                    Ok(instructions) => format!(
                        "on ({instructions} BPF instructions): {} system calls (keyrings, bpf, perf, userfaultfd, io_uring, \
                         ptrace, mounts and namespaces, file handles, kexec, modules, \
                         reboot, swap, acct, clock setting) and namespace clone flags \
                         and non-default personalities get EPERM, clone3 ENOSYS, \
                         other ABIs (i386, x32) are refused",
                        super::seccomp::denied_count()
                    ),
                    Err(reason) => reason.clone(),
                },
            },
            LayerStatus {
                layer: "keyring",
                available: self.keyrings,
                detail: if self.keyrings {
                    "a fresh, empty session keyring per command".to_string()
                } else if test_hooks().is_some_and(|hooks| hooks.removes("keyring")) {
                    TestHooks::reason("keyring")
                } else {
                    "the kernel has no keyrings (nothing to hide)".to_string()
                },
            },
        ]
    }

    /// The layers `auto` applies with the network off.
    pub fn auto_layers(&self) -> Vec<Layer> {
        let mut layers = Vec::new();
        if let Ok(support) = super::cgroup::cgroup_support() {
            layers.push(support.layer_name());
        }
        if let Ok(abi) = self.landlock_abi {
            layers.push(Layer::Landlock(abi));
        }
        if self.namespaces.is_ok() {
            layers.push(Layer::Pidns);
            layers.push(Layer::Mntns);
        }
        match (&self.network, &self.landlock_abi) {
            (Ok(kind), _) => layers.push(kind.layer_name()),
            (Err(_), Ok(abi)) if *abi >= 4 => layers.push(Layer::LandlockTcp),
            _ => {}
        }
        if self.rlimits.is_ok() {
            layers.push(Layer::Rlimits);
        }
        if super::caps::is_root() {
            layers.push(Layer::Nocaps);
        }
        if self.keyrings {
            layers.push(Layer::Keyring);
        }
        if self.seccomp.is_ok() {
            layers.push(Layer::Seccomp);
        }
        layers
    }
}
