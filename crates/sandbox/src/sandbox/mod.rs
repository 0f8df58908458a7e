//! The Linux sandbox around each command: Landlock (filesystem, TCP and
//! signal scoping), PID, mount and network namespaces, a cgroup, resource
//! limits, dropped capabilities, a fresh session keyring and a seccomp
//! deny list.
//!
//! It owns deciding which layers a policy gets on this machine (`off`, `auto`
//! takes what is available, `required` fails closed with
//! `sandbox_unavailable`), building them in the runner, and the small
//! allocation-free step that applies them in the child just before exec.
//!
//! Deciding, in the runner:
//!
//! - `probe.rs`: what this machine supports, probed once; `policy.rs`: what a
//!   job asks.
//! - `prepare.rs`: the layers decided per command.
//! - `grants.rs`: what a command is granted, and the key a prepared sandbox is
//!   reused under.
//! - `identity.rs`: what the granted paths name now, looked up once and watched
//!   with inotify.
//! - `reuse.rs`: the rulesets, mount plans and grant lists built once and
//!   reused while the grants name the same files.
//! - `child_setup.rs`: what the child does between clone and exec;
//!   `handoff.rs`: a prepared command's setup as plain data and descriptors,
//!   for the zygote.
//!
//! The layers:
//!
//! - `landlock.rs`: Landlock.
//! - `namespaces.rs`, `exit_page.rs`: PID and mount namespaces with the tiny
//!   init, forked by a waiter or, from the zygote, cloned straight into them.
//! - `attempt_init.rs`: the attempt's one PID namespace that the zygote's
//!   commands are cloned into, held by an init that only reaps;
//!   `init_image.rs`: the init blanks what `/proc/1` shows of the runner.
//! - `mounts.rs`: the command's root, built once per set of grants in a mount
//!   namespace the runner keeps, which each command's copies, on the skeleton
//!   with the links of its grants (`skeleton.rs`); `path_walk.rs`: a path
//!   walked as the kernel resolves it, links followed, which both the skeleton
//!   and `identity.rs` read.
//! - `cgroup/`: cgroups v1/v2, with each command's memory and task peaks in
//!   `peaks.rs`, the idle cgroups kept for the next command with the same
//!   limits in `pool.rs`, and what can fail finding, making or removing one in
//!   `error.rs`.
//! - `network.rs`: the network namespace.
//! - `rlimits.rs`, `caps.rs`: rlimits and dropped capabilities.
//! - `layer.rs`: a layer's name, as the log and `exec` write it.
//! - `seccomp/`: the seccomp deny list and the fresh session keyring, compiled
//!   once in the runner, installed last in the child.
//! - `sys.rs`: the raw system calls of the child.
//!
//! And `test_hooks.rs`, the test hooks that make the probe report layers
//! unavailable, compiled only with the `test-hooks` feature and debug
//! assertions (see `docs/reference.md`'s Testing); `floor.rs`, the kernel's own
//! price of a command in namespaces of its own, for `BENCH exec`: PID, mount
//! and IPC namespaces, or only the mount and IPC ones a command in the
//! attempt's PID namespace gets; `error.rs`, failures deciding or building the
//! sandbox.
//!
//! It never spawns commands itself (the executor does), never allocates between
//! fork and exec, never widens a grant it was not given, and never silently
//! drops a layer `required` asked for.

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
mod layer;
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
pub use layer::{Layer, joined};
pub use mounts::SCRATCH;
pub use network::{NetIsolation, OwnNetwork};
pub use policy::{
    DEFAULT_MEMORY, DEFAULT_PROCESSES, ResourceLimits, SandboxMode, SandboxPolicy, UnknownMode,
};
pub use prepare::{Prepared, prepare, prepare_keyed, private_root_available};
pub use probe::{LayerStatus, Probe, probe};
pub use seccomp::{DENIED, DeniedGroup, denied_count};
pub use skeleton::set_skeleton_base;
pub use test_hooks::{REMOVABLE_LAYERS, TEST_HOOKS_ENV, TestHooks, test_hooks};
