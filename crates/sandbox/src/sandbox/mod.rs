//! The Linux sandbox around each command: Landlock (filesystem, TCP and
//! signal scoping), PID, mount and network namespaces, a cgroup, resource
//! limits, dropped capabilities, a fresh session keyring and a seccomp
//! deny list.
//!
//! It owns deciding which layers a policy gets on this machine (`off`,
//! `auto` takes what is available, `required` fails closed with
//! `sandbox_unavailable`), building them in the runner, and the small
//! allocation-free step that applies them in the child just before exec.
//! It never spawns commands itself (the executor does), never widens a
//! grant it was not given, and never silently drops a layer `required`
//! asked for.

mod attempt_init;
mod caps;
mod cgroup;
mod child_setup;
mod error;
mod exit_page;
mod floor;
mod grants;
mod handoff;
mod identity;
mod init_image;
mod landlock;
mod mounts;
mod namespaces;
mod network;
mod path_walk;
mod policy;
mod prepare;
mod probe;
mod reuse;
mod rlimits;
mod seccomp;
mod skeleton;
pub(crate) mod sys;
mod test_hooks;

pub(crate) use attempt_init::{
    AttemptNamespace, make as make_attempt_namespace, serve as serve_attempt_init,
};
pub(crate) use caps::effective as has_capability;
pub use caps::protect_runner;
#[cfg(feature = "test-hooks")]
pub use caps::{WithoutPermissionOverrides, without_permission_overrides};
pub use cgroup::{
    CGROUP_ENV, CgroupError, CgroupLimits, CgroupSupport, CommandCgroup, EnterFds, LayoutError,
    PeakStart, Peaks, PooledCgroup, cgroup_support, enter_from_child, release_idle_cgroups,
};
pub use child_setup::ChildSetup;
pub use error::SandboxError;
pub use exit_page::{ExitPage, InitExit};
pub use floor::{run_in_fresh_mount_namespace, run_in_fresh_namespaces};
pub use grants::{Grants, ReuseKey};
pub use handoff::{Handoff, Held};
pub(crate) use init_image::{Image as InitImage, runner_image};
pub use landlock::NETWORK_READ;
pub use mounts::SCRATCH;
pub use network::NetIsolation;
pub use policy::{
    DEFAULT_MEMORY, DEFAULT_PROCESSES, ResourceLimits, SandboxMode, SandboxPolicy, UnknownMode,
};
pub use prepare::{Prepared, prepare, prepare_keyed, private_root_available};
pub use probe::{LayerStatus, Probe, probe};
pub use seccomp::{DENIED, DeniedGroup, denied_count};
pub use skeleton::set_skeleton_base;
pub use test_hooks::{REMOVABLE_LAYERS, TEST_HOOKS_ENV, TestHooks, test_hooks};
