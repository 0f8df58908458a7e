//! What one command cost the machine: CPU time from the rusage of the
//! process the runner reaps, and memory and task peaks from its cgroup.
//! The main crate's log records this same type on each `command` event
//! (absent figures left out, older events read back without them).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a command cost the machine; each figure is absent where this
/// machine or this run could not tell it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// User and system CPU time, in milliseconds, of the command and of
    /// every process reaped beneath it: with a PID namespace the whole
    /// tree (its init reaps every orphan, and the kernel the rest when
    /// init exits), without one the command and the children it waited
    /// for. Absent when a PID namespace's init had to be killed (the tree
    /// was never reaped where it could be counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<u64>,
    /// Bytes of memory charged to the command's cgroup at its highest
    /// (anonymous memory, page cache, kernel memory), above what the
    /// cgroup held when it started. Absent without a cgroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// Tasks (processes and threads) at once at the most, the sandbox's
    /// waiter and init included. Absent without a cgroup or `pids.peak`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_peak: Option<u64>,
}

impl Resources {
    /// Whether no figure is known.
    pub fn is_empty(&self) -> bool {
        self.cpu_ms.is_none() && self.peak_memory_bytes.is_none() && self.pids_peak.is_none()
    }

    /// Another command's figures added: CPU time summed (of those that
    /// tell it), the higher of each peak (a peak of one command, not of
    /// several at once).
    pub fn add(&mut self, other: &Resources) {
        self.cpu_ms = match (self.cpu_ms, other.cpu_ms) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
        self.peak_memory_bytes = self.peak_memory_bytes.max(other.peak_memory_bytes);
        self.pids_peak = self.pids_peak.max(other.pids_peak);
    }
}

/// User plus system time of a `wait4` rusage.
pub(crate) fn cpu_time(usage: &libc::rusage) -> Duration {
    let time = |tv: libc::timeval| {
        let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
        let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
        Duration::from_secs(secs) + Duration::from_micros(micros)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Whole milliseconds, saturating.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_adds_user_and_system() {
        // SAFETY: rusage is plain integers; all zero is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        usage.ru_utime.tv_sec = 1;
        usage.ru_utime.tv_usec = 250_000;
        usage.ru_stime.tv_usec = 40_500;
        assert_eq!(cpu_time(&usage), Duration::from_micros(1_290_500));
        assert_eq!(millis(cpu_time(&usage)), 1_290);
    }

    #[test]
    fn commands_add_their_time_and_keep_the_higher_peak() {
        let mut sum = Resources {
            cpu_ms: Some(100),
            peak_memory_bytes: Some(10 << 20),
            pids_peak: None,
        };
        sum.add(&Resources {
            cpu_ms: Some(50),
            peak_memory_bytes: Some(4 << 20),
            pids_peak: Some(3),
        });
        sum.add(&Resources::default());
        assert_eq!(
            sum,
            Resources {
                cpu_ms: Some(150),
                peak_memory_bytes: Some(10 << 20),
                pids_peak: Some(3),
            }
        );
    }

    #[test]
    fn empty_means_nothing_known() {
        assert!(Resources::default().is_empty());
        let cpu = Resources {
            cpu_ms: Some(0),
            ..Resources::default()
        };
        assert!(!cpu.is_empty());
    }
}
