//! Command cgroups kept for the next command with the same limits:
//! taken from the idle ones or made, given back when a command leaves
//! nothing in them and their peaks can still be told.

use std::sync::Mutex;

use super::{CgroupError, CgroupLimits, CgroupSupport, CommandCgroup, EnterFds, PeakStart, Peaks};

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
    /// Whether it can serve another command, once its peaks were read.
    reusable: std::sync::OnceLock<bool>,
}

impl PooledCgroup {
    pub(crate) fn take(
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
            reusable: std::sync::OnceLock::new(),
        })
    }

    /// The cgroup, which only `drop` takes out.
    pub(crate) fn enter_fds(&self) -> Option<EnterFds> {
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
            (Some(cgroup), Some(start)) => {
                let (peaks, reusable) = cgroup.peaks(start);
                let _ = self.reusable.set(reusable);
                peaks
            }
            _ => Peaks::default(),
        }
    }
}

impl Drop for PooledCgroup {
    fn drop(&mut self) {
        let Some(cgroup) = self.cgroup.take() else {
            return;
        };
        // Asked again only where the peaks were never read.
        let start = self.peaks_start.take();
        let reusable = match self.reusable.get() {
            Some(reusable) => *reusable,
            None => start.is_some_and(|start| cgroup.peaks_reusable(&start)),
        };
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
