//! One command's cgroup: made with its limits before spawn, entered by the
//! child, killed as a whole, asked about OOM kills, removed afterwards.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Seek};
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::super::policy::ResourceLimits;
use super::enter::EnterFds;
use super::error::CgroupError;
use super::fs::{self, Backoff};
use super::peaks::{PeakFiles, PeakStart, Peaks};
use super::support::{CgroupSupport, Kind, V1_PREFIX, V2_PREFIX};

/// How long a kill may take to empty the cgroup before giving up.
const KILL_WAIT: Duration = Duration::from_secs(1);
/// How long to wait for a freeze before killing what is listed anyway.
const FREEZE_WAIT: Duration = Duration::from_millis(200);

/// Limits of one command's cgroup; `None` leaves the resource unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Bytes of memory of every process together; swap is not allowed on
    /// top (when the kernel accounts swap).
    pub memory: Option<u64>,
    /// Processes and threads at once.
    pub processes: Option<u64>,
}

impl From<&ResourceLimits> for CgroupLimits {
    fn from(limits: &ResourceLimits) -> CgroupLimits {
        CgroupLimits {
            memory: limits.memory,
            processes: limits.processes,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// A cgroup (one per v1 hierarchy, or one v2 directory) holding one
/// command. Dropping it kills what is left inside and removes it.
#[derive(Debug)]
pub struct CommandCgroup {
    version: Version,
    /// Every directory made, in creation order.
    dirs: Vec<PathBuf>,
    /// Where `memory.*` files are.
    memory: PathBuf,
    /// Where `pids.*` files are.
    pids: PathBuf,
    /// Whose `cgroup.procs` lists the command's processes (v1: the freezer
    /// or pids cgroup; v2: the only one). Also the v2 `cgroup.kill` and
    /// `cgroup.freeze` directory.
    members: PathBuf,
    /// The v1 freezer cgroup, when that hierarchy is mounted.
    freezer: Option<PathBuf>,
    /// Where the child enters each directory, opened for it to write: v1's
    /// `tasks`, v2's `cgroup.procs` (see [`CommandCgroup::open_procs`]).
    procs: Vec<File>,
    /// The files read once per command: members, peaks, OOM kills.
    kept: fs::Kept,
    removed: bool,
}

impl CommandCgroup {
    /// Makes the cgroup and writes its limits (memory before swap, as v1
    /// requires). Whatever was made is removed again on failure.
    /// A name still taken (by a leftover of an earlier process with the
    /// same pid whose processes survived) moves on to the next number.
    pub fn create(
        support: &CgroupSupport,
        limits: &CgroupLimits,
    ) -> Result<CommandCgroup, CgroupError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut attempts = 0;
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            match CommandCgroup::create_numbered(support, limits, n) {
                Ok(cgroup) => return Ok(cgroup),
                Err(CreateError::Taken(_)) if attempts < 8 => attempts += 1,
                Err(CreateError::Taken(err) | CreateError::Failed(err)) => return Err(err),
            }
        }
    }

    fn create_numbered(
        support: &CgroupSupport,
        limits: &CgroupLimits,
        n: u64,
    ) -> Result<CommandCgroup, CreateError> {
        let pid = std::process::id();
        match &support.kind {
            Kind::V1(v1) => {
                let name = format!("{V1_PREFIX}{pid}-{n}");
                let memory = v1.memory.join(&name);
                let pids = v1.pids.join(&name);
                let freezer = v1.freezer.as_ref().map(|dir| dir.join(&name));
                let mut cgroup = CommandCgroup::empty(
                    Version::V1,
                    memory.clone(),
                    pids.clone(),
                    freezer.clone().unwrap_or_else(|| pids.clone()),
                    freezer.clone(),
                );
                cgroup.make_dir(&memory)?;
                if let Some(bytes) = limits.memory {
                    let value = bytes.to_string();
                    fs::write_value(&memory.join("memory.limit_in_bytes"), value.as_bytes())?;
                    if v1.memsw {
                        let swap = memory.join("memory.memsw.limit_in_bytes");
                        fs::write_value(&swap, value.as_bytes())?;
                    }
                }
                cgroup.make_dir(&pids)?;
                if let Some(count) = limits.processes {
                    fs::write_value(&pids.join("pids.max"), count.to_string().as_bytes())?;
                }
                if let Some(freezer) = &freezer {
                    cgroup.make_dir(freezer)?;
                }
                cgroup.open_procs()?;
                Ok(cgroup)
            }
            Kind::V2(parent) => {
                let dir = parent.dir.join(format!("{V2_PREFIX}{pid}-{n}"));
                let mut cgroup =
                    CommandCgroup::empty(Version::V2, dir.clone(), dir.clone(), dir.clone(), None);
                cgroup.make_dir(&dir)?;
                if let Some(bytes) = limits.memory {
                    fs::write_value(&dir.join("memory.max"), bytes.to_string().as_bytes())?;
                    match fs::write(&dir.join("memory.swap.max"), b"0") {
                        Err(err) if err.kind() != ErrorKind::NotFound => {
                            return Err(CreateError::Failed(CgroupError::Write {
                                value: "0".to_string(),
                                path: dir.join("memory.swap.max"),
                                source: err,
                            }));
                        }
                        _ => {}
                    }
                }
                if let Some(count) = limits.processes {
                    fs::write_value(&dir.join("pids.max"), count.to_string().as_bytes())?;
                }
                cgroup.open_procs()?;
                Ok(cgroup)
            }
        }
    }

    fn empty(
        version: Version,
        memory: PathBuf,
        pids: PathBuf,
        members: PathBuf,
        freezer: Option<PathBuf>,
    ) -> CommandCgroup {
        CommandCgroup {
            version,
            dirs: Vec::with_capacity(3),
            memory,
            pids,
            members,
            freezer,
            procs: Vec::with_capacity(3),
            kept: fs::Kept::default(),
            removed: false,
        }
    }

    fn make_dir(&mut self, dir: &Path) -> Result<(), CreateError> {
        std::fs::create_dir(dir).map_err(|source| {
            let taken = source.kind() == ErrorKind::AlreadyExists;
            let err = CgroupError::Create {
                dir: dir.to_path_buf(),
                source,
            };
            if taken {
                CreateError::Taken(err)
            } else {
                CreateError::Failed(err)
            }
        })?;
        self.dirs.push(dir.to_path_buf());
        Ok(())
    }

    /// Opens the file the child writes `0` to, in each directory. On v1
    /// it is `tasks`: a thread moving itself there takes no lock of every
    /// thread group, which `cgroup.procs` does, and whose write waits for
    /// an RCU grace period (about 12 ms on an idle machine, measured) — the
    /// bulk of a one-shot sandboxed command. The child is single-threaded
    /// (it has just forked), so the thread is the whole process.
    fn open_procs(&mut self) -> Result<(), CreateError> {
        let file = match self.version {
            Version::V1 => "tasks",
            Version::V2 => "cgroup.procs",
        };
        for dir in &self.dirs {
            let path = dir.join(file);
            // std opens with O_CLOEXEC: the command never inherits these.
            let file = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|source| CgroupError::Open {
                    path: path.clone(),
                    source,
                })?;
            self.procs.push(file);
        }
        Ok(())
    }

    /// The entry descriptors for [`super::enter_from_child`]. They
    /// are valid while this `CommandCgroup` lives.
    pub fn enter_fds(&self) -> EnterFds {
        EnterFds::new(self.procs.iter().map(AsRawFd::as_raw_fd))
    }

    /// Every directory made: one per v1 hierarchy (memory, pids, freezer),
    /// or the one v2 directory.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Kills every process inside, race-free against forks: v2
    /// `cgroup.kill` when the kernel has it, else freeze, SIGKILL each
    /// listed pid, thaw; v1 without a freezer repeats the kill until the
    /// cgroup is empty. Waits (at most a second) until it is empty and
    /// returns whether it is. An already empty cgroup costs one read.
    pub fn kill_all(&self) -> bool {
        if self.is_empty() {
            return true;
        }
        match self.version {
            Version::V2 => {
                self.kill_v2(true);
                self.wait_empty_v2(KILL_WAIT)
            }
            Version::V1 => {
                if let Some(freezer) = &self.freezer {
                    self.freeze_kill_thaw_v1(freezer);
                }
                self.kill_until_empty_v1(KILL_WAIT)
            }
        }
    }

    /// Live processes inside (zombies are not counted).
    pub fn population(&self) -> usize {
        let mut count = 0;
        let _ = self
            .kept
            .for_each_pid(&self.members.join("cgroup.procs"), |_| count += 1);
        count
    }

    /// Nothing listed, or the cgroup is gone; an unreadable list is not
    /// taken for empty.
    fn is_empty(&self) -> bool {
        let mut any = false;
        let procs = self.members.join("cgroup.procs");
        match self.kept.for_each_pid(&procs, |_| any = true) {
            Ok(()) => !any,
            Err(err) => err.kind() == ErrorKind::NotFound,
        }
    }

    /// Whether the OOM killer killed a process inside: v2 `memory.events`
    /// `oom_kill`, v1 `memory.oom_control` `oom_kill` (kernels since 4.13),
    /// else v1 `memory.failcnt` > 0, which also counts reclaims at the limit.
    pub fn oom_killed(&self) -> bool {
        self.oom_kills() > 0
    }

    /// How many times the OOM killer fired in this cgroup since it was
    /// made (v1 without an `oom_kill` line: how often the limit was hit), so
    /// a reused cgroup can tell a new kill from an old one.
    pub fn oom_kills(&self) -> u64 {
        let count = |file: &str, key: Option<&str>| {
            let text = self.kept.read_small(&self.memory.join(file)).ok()?;
            match key {
                Some(key) => fs::keyed_value(&text, key),
                None => text.trim().parse().ok(),
            }
        };
        match self.version {
            Version::V2 => count("memory.events", Some("oom_kill")).unwrap_or(0),
            Version::V1 => count("memory.oom_control", Some("oom_kill"))
                .or_else(|| count("memory.failcnt", None))
                .unwrap_or(0),
        }
    }

    /// Resets the memory peak for the next command and notes the counters
    /// its peaks are read against; call it before the command is spawned.
    /// `fresh`: the cgroup was just made. `floor`: the tasks every command
    /// has at once (see [`PeakStart`]).
    pub fn start_peaks(&self, fresh: bool, floor: u64) -> PeakStart {
        self.peak_files().start(fresh, floor)
    }

    /// The peaks of the command begun with `start`, once it is over, and
    /// whether another command can use this cgroup after it and still be
    /// told its own ([`peaks_reusable`](Self::peaks_reusable)).
    pub fn peaks(&self, start: &PeakStart) -> (Peaks, bool) {
        self.peak_files().read(start)
    }

    /// Whether another command can use this cgroup after the one begun
    /// with `start` and still be told its own peaks.
    pub fn peaks_reusable(&self, start: &PeakStart) -> bool {
        start.reusable(self.peak_files().pids_peak())
    }

    fn peak_files(&self) -> PeakFiles<'_> {
        PeakFiles {
            kept: &self.kept,
            memory_dir: &self.memory,
            pids_dir: &self.pids,
            memory_peak: match self.version {
                Version::V1 => "memory.max_usage_in_bytes",
                Version::V2 => "memory.peak",
            },
            per_file_reset: self.version == Version::V2,
        }
    }

    /// Kills what is inside, waits (at most a second) until it is empty and
    /// removes every directory made; the first failure is returned.
    pub fn remove(mut self) -> Result<(), CgroupError> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), CgroupError> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        let emptied = self.kill_all();
        self.procs.clear();
        let mut first_error = None;
        for dir in self.dirs.iter().rev() {
            if let Err(source) = std::fs::remove_dir(dir) {
                first_error.get_or_insert_with(|| CgroupError::Remove {
                    dir: dir.clone(),
                    survived: if emptied {
                        ""
                    } else {
                        " (processes survived the kill)"
                    },
                    source,
                });
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// v2: `cgroup.kill` if `use_kill_file` and present, else freeze, kill
    /// the listed pids, thaw.
    fn kill_v2(&self, use_kill_file: bool) {
        if use_kill_file && fs::write(&self.members.join("cgroup.kill"), b"1").is_ok() {
            return;
        }
        let freeze = self.members.join("cgroup.freeze");
        if fs::write(&freeze, b"1").is_ok() {
            self.wait_events_v2("frozen", 1, FREEZE_WAIT);
        }
        self.kill_listed();
        let _ = fs::write(&freeze, b"0");
    }

    /// Waits until `populated 0` in `cgroup.events`; whether it came.
    fn wait_empty_v2(&self, budget: Duration) -> bool {
        self.wait_events_v2("populated", 0, budget)
    }

    /// Waits until `key` reads `want` in `cgroup.events`, sleeping in
    /// poll(2): the kernel signals a change of the file with POLLPRI.
    fn wait_events_v2(&self, key: &str, want: u64, budget: Duration) -> bool {
        let Ok(mut file) = File::open(self.members.join("cgroup.events")) else {
            return false;
        };
        let clock = Backoff::new(budget);
        loop {
            // Reading re-arms the notification, so no change is missed
            // between this read and the poll below.
            let seen = file
                .rewind()
                .and_then(|()| fs::read_from(&mut file))
                .map(|text| fs::keyed_value(&text, key));
            match seen {
                Ok(Some(value)) if value == want => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
            let left = clock.remaining();
            if left.is_zero() {
                return false;
            }
            let millis = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
            let mut fds = [PollFd::new(file.as_fd(), PollFlags::POLLPRI)];
            // EINTR or a timeout: read again; the budget bounds the loop.
            let _ = poll(&mut fds, PollTimeout::from(millis));
        }
    }

    /// v1: freeze, SIGKILL each listed pid, thaw. Frozen processes cannot
    /// fork, so nothing escapes the list; they die once thawed.
    fn freeze_kill_thaw_v1(&self, freezer: &Path) {
        let state = freezer.join("freezer.state");
        if fs::write(&state, b"FROZEN").is_ok() {
            let mut backoff = Backoff::new(FREEZE_WAIT);
            while fs::read_small(&state).is_ok_and(|s| s.trim() != "FROZEN") && backoff.wait() {}
        }
        self.kill_listed();
        let _ = fs::write(&state, b"THAWED");
    }

    /// v1: SIGKILL whatever is listed until the list is empty or the budget
    /// is spent (forks racing the kill are caught by the next round).
    fn kill_until_empty_v1(&self, budget: Duration) -> bool {
        let mut backoff = Backoff::new(budget);
        loop {
            if self.is_empty() {
                return true;
            }
            self.kill_listed();
            if !backoff.wait() {
                return self.is_empty();
            }
        }
    }

    /// SIGKILL to every pid in `cgroup.procs`. Frozen, a listed process
    /// cannot exit, so its pid cannot be reused before the signal lands;
    /// without a freezer that window is the few microseconds between the
    /// read and the kill.
    fn kill_listed(&self) {
        let _ = fs::for_each_pid(&self.members.join("cgroup.procs"), |pid| {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        });
    }
}

/// Why a numbered cgroup could not be made.
enum CreateError {
    /// The name exists already: try the next number.
    Taken(CgroupError),
    Failed(CgroupError),
}

impl From<CgroupError> for CreateError {
    fn from(err: CgroupError) -> CreateError {
        CreateError::Failed(err)
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

#[cfg(test)]
impl CommandCgroup {
    /// The v2 freeze path even where `cgroup.kill` exists.
    pub(crate) fn kill_by_freezing(&self) -> bool {
        self.kill_v2(false);
        self.wait_empty_v2(KILL_WAIT)
    }
}
