//! The resource-limit layer: no core dumps, and caps on file size, open
//! files and CPU seconds, computed in the runner and set in the child.

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use super::policy::ResourceLimits;

/// The resource of each slot of a plan, in order.
const SLOTS: [Resource; 6] = [
    Resource::RLIMIT_CORE,
    Resource::RLIMIT_FSIZE,
    Resource::RLIMIT_NOFILE,
    Resource::RLIMIT_CPU,
    Resource::RLIMIT_AS,
    Resource::RLIMIT_NPROC,
];

/// Concrete (soft, hard) pairs, never above the runner's own hard limits
/// (an unprivileged process cannot raise them).
#[derive(Debug, Clone, Copy, Default)]
pub struct RlimitPlan {
    entries: [Option<(Resource, u64, u64)>; 6],
}

impl RlimitPlan {
    /// `cpu_default` is used when the policy leaves CPU time open.
    pub(crate) fn new(limits: &ResourceLimits, cpu_default: u64) -> RlimitPlan {
        let clamp = |resource: Resource, want: u64, slack: u64| {
            let hard_now = getrlimit(resource)
                .map(|(_, hard)| hard)
                .unwrap_or(u64::MAX);
            let hard = want.saturating_add(slack).min(hard_now);
            (resource, want.min(hard), hard)
        };
        let cpu = limits.cpu_seconds.unwrap_or(cpu_default);
        RlimitPlan {
            entries: [
                Some((Resource::RLIMIT_CORE, 0, 0)),
                limits
                    .file_size
                    .map(|v| clamp(Resource::RLIMIT_FSIZE, v, 0)),
                limits
                    .open_files
                    .map(|v| clamp(Resource::RLIMIT_NOFILE, v, 0)),
                // SIGXCPU at the soft limit, SIGKILL a few seconds later.
                Some(clamp(Resource::RLIMIT_CPU, cpu, 5)),
                // Fallbacks when no cgroup carries `memory` and `processes`:
                // address space per process, and processes per user (which
                // does not bind root, so it is not set for root).
                limits.memory.map(|v| clamp(Resource::RLIMIT_AS, v, 0)),
                limits
                    .processes
                    .filter(|_| !nix::unistd::geteuid().is_root())
                    .map(|v| clamp(Resource::RLIMIT_NPROC, v, 0)),
            ],
        }
    }

    /// Names of the fallback layers in the plan, for the outcome.
    pub(crate) fn fallback_layers(&self) -> Vec<super::Layer> {
        let mut names = Vec::new();
        if self.entries[4].is_some() {
            names.push(super::Layer::RlimitAs);
        }
        if self.entries[5].is_some() {
            names.push(super::Layer::RlimitNproc);
        }
        names
    }

    /// The (soft, hard) pair of each slot, to hand to a zygote; the
    /// resource is the slot's own.
    pub(crate) fn pairs(&self) -> [Option<(u64, u64)>; 6] {
        self.entries
            .map(|entry| entry.map(|(_, soft, hard)| (soft, hard)))
    }

    /// The plan of [`pairs`](Self::pairs).
    pub(crate) fn from_pairs(pairs: [Option<(u64, u64)>; 6]) -> RlimitPlan {
        let mut entries = [None; 6];
        for ((slot, resource), pair) in entries.iter_mut().zip(SLOTS).zip(pairs) {
            *slot = pair.map(|(soft, hard)| (resource, soft, hard));
        }
        RlimitPlan { entries }
    }

    /// Applies the plan in the (child) process. Async-signal-safe.
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        for (resource, soft, hard) in self.entries.iter().flatten() {
            setrlimit(*resource, *soft, *hard).map_err(std::io::Error::from)?;
        }
        Ok(())
    }
}
