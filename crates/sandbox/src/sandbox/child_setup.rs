//! What the child does between clone and exec, built in the runner
//! ([`prepare`](super::prepare())) and handed to the zygote
//! (`handoff.rs`): the child only reads it and makes system calls.

use std::os::fd::RawFd;

use nix::sched::CloneFlags;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::cgroup::{EnterFds, enter_from_child};
use super::landlock;
use super::namespaces::Namespaces;
use super::network;
use super::rlimits::RlimitPlan;
use super::seccomp;
use super::sys;

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
