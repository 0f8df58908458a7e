//! Per-command cgroups: a memory limit and a process-count limit on the
//! whole command, a kill that reaches every process of it (`setsid` and
//! double forks included), and whether the OOM killer fired.
//!
//! It owns finding the layout once per process ([`cgroup_support`]:
//! cgroup v1 controllers, as on hybrid hosts, or the unified v2
//! hierarchy), the command cgroups, their limits, the kill and the
//! removal. On v1 a command's cgroups go under the runner's own cgroup in
//! the memory, pids and freezer hierarchies. On v2 they go under, in
//! order: the directory named by `AGENT_RUNTIME_CGROUP` (a cgroup v2
//! directory the user owns, with `memory` and `pids` in its
//! `cgroup.subtree_control` or no processes of its own so they can be
//! enabled; the runner must be inside the same delegated subtree, since
//! moving a process needs write access to the common ancestor); the
//! runner's own cgroup if it already enables both; the runner's own cgroup
//! when it is delegated to this user and the runner is alone in it
//! (`systemd-run --user --scope -p Delegate=yes agent-runtime ...`: the
//! runner moves into a leaf `agent-runtime-runner`); for root,
//! `/sys/fs/cgroup/agent-runtime`, made once and kept.
//!
//! The executor's side: [`CommandCgroup::create`] before spawn; in the
//! child, [`enter_from_child`] first (before namespaces, capabilities and
//! Landlock); keep the `CommandCgroup` until the command is over; read
//! [`CommandCgroup::population`] for leaked processes,
//! [`CommandCgroup::oom_killed`] and [`CommandCgroup::peaks`] (begun with
//! [`CommandCgroup::start_peaks`] before spawn) before
//! [`CommandCgroup::remove`].
//!
//! Its files:
//!
//! - `support.rs`: what this machine offers, probed once per process: the
//!   layout, where new cgroups go, or why there is no place; `layout.rs`: the
//!   layout and where the runner sits in it, from `/proc/self/mountinfo` and
//!   `/proc/self/cgroup` alone (pure).
//! - `command.rs`: one command's cgroup: made with its limits before spawn,
//!   killed as a whole, asked about OOM kills, removed afterwards; `enter.rs`:
//!   the child's move into it, through `cgroup.procs` descriptors the runner
//!   opened.
//! - `peaks.rs`: the command's memory and task peaks.
//! - `pool.rs`: idle cgroups kept for the next command with the same limits.
//! - `fs.rs`: small reads and writes of cgroup files with as few system calls
//!   as possible.
//! - `error.rs`: what can fail finding where command cgroups go, and making,
//!   filling and removing one.
//! - `tests.rs`: the v2 kill paths on a real v2 hierarchy without controllers.
//!
//! It never spawns a command, never moves a process other than the runner
//! (once, as above) and the child, never kills a process outside a command
//! cgroup it made, and removes nothing but command cgroups (its own, or
//! empty ones of dead runners, with rmdir).

mod command;
mod enter;
mod error;
mod fs;
mod layout;
mod peaks;
mod pool;
mod support;
#[cfg(test)]
mod tests;

pub use command::{CgroupLimits, CommandCgroup};
pub use enter::{EnterFds, enter_from_child};
pub use error::{CgroupError, LayoutError};
pub use peaks::{PeakStart, Peaks};
pub use pool::{PooledCgroup, release_idle_cgroups};
pub use support::{CGROUP_ENV, CgroupSupport, cgroup_support};
