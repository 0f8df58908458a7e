//! What one command took of the machine at its highest, from the peaks
//! its cgroup keeps: memory (v1 `memory.max_usage_in_bytes`, v2
//! `memory.peak`) and tasks, processes and threads together (`pids.peak`,
//! in both versions since Linux 6.1; absent before).
//!
//! A cgroup is reused by later commands, so a peak must be made this
//! command's: the memory peak is reset when the command starts (v1 by
//! writing `0`, v2 through a `memory.peak` descriptor of its own, Linux
//! 6.12 and later) and what the cgroup held then (page cache an earlier
//! command left charged to it) is taken off. `pids.peak` cannot be reset:
//! a cgroup is only given to another command while its peak is at most
//! the *floor*, the tasks every command has (see [`PeakStart::reusable`]),
//! so the next command's own peak, never below the floor, is what the
//! file shows.

use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::path::Path;

use super::fs;

/// The peaks of one command, where its cgroup can tell them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Peaks {
    /// Bytes of memory charged to the command's cgroup at its highest
    /// (anonymous memory, page cache, kernel memory) above what the
    /// cgroup held when it started.
    pub memory_bytes: Option<u64>,
    /// Tasks (processes and threads) at once, at the most.
    pub pids: Option<u64>,
}

/// A cgroup's counters as one command starts, to read its peaks against.
#[derive(Debug)]
pub struct PeakStart {
    /// The memory peak right after the reset (what the cgroup held); `None`
    /// when the peak cannot be this command's (a reused cgroup whose peak
    /// could not be reset).
    memory_base: Option<u64>,
    /// Whether the memory peak could be reset, so the cgroup can serve
    /// another command.
    memory_resets: bool,
    /// v2: the `memory.peak` descriptor reset for this command (the kernel
    /// keeps a peak per open file); read through it.
    memory_file: Option<File>,
    /// `pids.peak` as the command starts.
    pids_before: Option<u64>,
    /// Tasks every command of this cgroup has at once (1, or 3 with a PID
    /// namespace: the waiter, the init and the command).
    floor: u64,
}

/// Which files hold a cgroup's peaks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeakFiles<'a> {
    /// The cgroup's files kept open for reading.
    pub(crate) kept: &'a fs::Kept,
    pub(crate) memory_dir: &'a Path,
    pub(crate) pids_dir: &'a Path,
    /// `memory.max_usage_in_bytes` (v1) or `memory.peak` (v2).
    pub(crate) memory_peak: &'static str,
    /// v1 resets by a write of `0` to the path; v2 through the descriptor.
    pub(crate) per_file_reset: bool,
}

impl PeakFiles<'_> {
    /// Resets the memory peak and notes the counters, before the command
    /// is spawned. `fresh`: the cgroup was just made (its peaks are zero).
    pub(crate) fn start(&self, fresh: bool, floor: u64) -> PeakStart {
        let path = self.memory_dir.join(self.memory_peak);
        let (memory_file, memory_resets) = if self.per_file_reset {
            match reset_through_file(&path) {
                Some(file) => (Some(file), true),
                None => (None, false),
            }
        } else {
            (None, self.kept.write_small(&path, b"0").is_ok())
        };
        let memory_base = if memory_resets {
            read_peak(self.kept, memory_file.as_ref(), &path)
        } else {
            fresh.then_some(0)
        };
        PeakStart {
            memory_base,
            memory_resets,
            memory_file,
            pids_before: self.pids_peak(),
            floor,
        }
    }

    /// The command's peaks, once it is over, and whether the cgroup can
    /// serve another command ([`PeakStart::reusable`]), from the same
    /// reading of `pids.peak`.
    pub(crate) fn read(&self, start: &PeakStart) -> (Peaks, bool) {
        let path = self.memory_dir.join(self.memory_peak);
        let pids = self.pids_peak();
        let peaks = Peaks {
            memory_bytes: memory_figure(
                read_peak(self.kept, start.memory_file.as_ref(), &path),
                start,
            ),
            pids: pids_figure(pids, start),
        };
        (peaks, start.reusable(pids))
    }

    pub(crate) fn pids_peak(&self) -> Option<u64> {
        let text = self
            .kept
            .read_small(&self.pids_dir.join("pids.peak"))
            .ok()?;
        parse_count(&text)
    }
}

impl PeakStart {
    /// Whether the cgroup can serve another command (of the same floor)
    /// and still tell its peaks: the memory peak resets and `pids.peak`
    /// (`pids_now`) is not above the floor.
    pub(crate) fn reusable(&self, pids_now: Option<u64>) -> bool {
        self.memory_resets && pids_now.is_none_or(|peak| peak <= self.floor)
    }
}

/// Opens `memory.peak` for reading and writing and resets the peak seen
/// through it; `None` where the kernel does not reset (before 6.12).
fn reset_through_file(path: &Path) -> Option<File> {
    let mut file = OpenOptions::new().read(true).write(true).open(path).ok()?;
    let written = file.write(b"reset\n").ok()?;
    (written > 0).then_some(file)
}

/// The peak from its own descriptor (read from the start), else the path.
fn read_peak(kept: &fs::Kept, file: Option<&File>, path: &Path) -> Option<u64> {
    let text = match file {
        Some(mut file) => {
            file.rewind().ok()?;
            fs::read_from(&mut file).ok()?
        }
        None => kept.read_small(path).ok()?,
    };
    parse_count(&text)
}

/// A file holding one count (`4096\n`).
pub(crate) fn parse_count(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The command's memory peak: the cgroup's peak above what it held at the
/// start, or nothing when the start could not be told.
fn memory_figure(peak: Option<u64>, start: &PeakStart) -> Option<u64> {
    Some(peak?.saturating_sub(start.memory_base?))
}

/// The command's task peak: what `pids.peak` reads, when that can only be
/// this command's (its peak before was at most the floor every command
/// reaches, or the command rose above it).
fn pids_figure(after: Option<u64>, start: &PeakStart) -> Option<u64> {
    let after = after?;
    match start.pids_before {
        Some(before) if before > start.floor && after <= before => None,
        _ => Some(after),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(memory_base: Option<u64>, pids_before: Option<u64>, floor: u64) -> PeakStart {
        PeakStart {
            memory_base,
            memory_resets: memory_base.is_some(),
            memory_file: None,
            pids_before,
            floor,
        }
    }

    #[test]
    fn counts_parse_with_or_without_a_newline() {
        assert_eq!(parse_count("209715200\n"), Some(209_715_200));
        assert_eq!(parse_count("3"), Some(3));
        assert_eq!(parse_count(" 0 \n"), Some(0));
        assert_eq!(parse_count("max\n"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("-1\n"), None);
    }

    #[test]
    fn the_memory_peak_is_taken_above_what_the_cgroup_held() {
        let fresh = start(Some(0), Some(0), 3);
        assert_eq!(memory_figure(Some(210 << 20), &fresh), Some(210 << 20));
        // A reused cgroup still charged with an earlier command's cache.
        let reused = start(Some(50 << 20), Some(3), 3);
        assert_eq!(memory_figure(Some(60 << 20), &reused), Some(10 << 20));
        // Reclaimed below the start: nothing above it.
        assert_eq!(memory_figure(Some(40 << 20), &reused), Some(0));
        // A peak that could not be reset is no one command's.
        assert_eq!(
            memory_figure(Some(60 << 20), &start(None, Some(3), 3)),
            None
        );
        assert_eq!(memory_figure(None, &fresh), None);
    }

    #[test]
    fn the_pids_peak_is_the_commands_while_it_cannot_be_an_earlier_one() {
        // Fresh, or reused with a peak at the floor: the file is the command's.
        assert_eq!(pids_figure(Some(3), &start(Some(0), Some(0), 3)), Some(3));
        assert_eq!(pids_figure(Some(3), &start(Some(0), Some(3), 3)), Some(3));
        assert_eq!(pids_figure(Some(40), &start(Some(0), Some(3), 3)), Some(40));
        // Above the floor before: only a new high is the command's.
        assert_eq!(pids_figure(Some(12), &start(Some(0), Some(12), 3)), None);
        assert_eq!(
            pids_figure(Some(13), &start(Some(0), Some(12), 3)),
            Some(13)
        );
        // No `pids.peak` (kernels before 6.1).
        assert_eq!(pids_figure(None, &start(Some(0), None, 3)), None);
    }

    #[test]
    fn a_cgroup_is_reused_only_while_its_peaks_can_be_told() {
        let resets = start(Some(0), Some(0), 3);
        assert!(resets.reusable(Some(3)));
        assert!(resets.reusable(Some(1)));
        assert!(resets.reusable(None), "nothing to tell without pids.peak");
        assert!(!resets.reusable(Some(4)), "a thread more than the floor");
        let stuck = PeakStart {
            memory_resets: false,
            ..start(Some(0), Some(0), 3)
        };
        assert!(!stuck.reusable(Some(3)));
    }

    #[test]
    fn peaks_are_read_from_the_files_and_v1_resets_by_writing_zero() {
        let dir = tempfile::tempdir().unwrap();
        let memory = dir.path().join("memory.max_usage_in_bytes");
        std::fs::write(&memory, "7\n").unwrap();
        std::fs::write(dir.path().join("pids.peak"), "3\n").unwrap();
        let kept = fs::Kept::default();
        let files = PeakFiles {
            kept: &kept,
            memory_dir: dir.path(),
            pids_dir: dir.path(),
            memory_peak: "memory.max_usage_in_bytes",
            per_file_reset: false,
        };
        // A plain file takes the `0` as the kernel's reset would.
        let begun = files.start(false, 3);
        assert_eq!(std::fs::read_to_string(&memory).unwrap(), "0\n");
        std::fs::write(&memory, "209715200\n").unwrap();
        std::fs::write(dir.path().join("pids.peak"), "5\n").unwrap();
        assert_eq!(
            files.read(&begun),
            (
                Peaks {
                    memory_bytes: Some(209_715_200),
                    pids: Some(5),
                },
                false
            )
        );
    }
}
