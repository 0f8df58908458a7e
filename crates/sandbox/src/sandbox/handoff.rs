//! A command's sandbox handed to another process: the [`ChildSetup`] the
//! runner prepared, as plain data plus the descriptors it names, so the
//! attempt's zygote (`crate::zygote`) can apply it in a child of its own.
//!
//! Only what the runner decided crosses: limits, flags, the mount plan,
//! the id maps, the working directory, and the descriptors (Landlock
//! ruleset, network namespace, prepared root, exit page, cgroup `procs`
//! files). What is
//! the receiving process's own it works out itself: its parent (the
//! runner), its memory layout to blank in the namespace's init, and the
//! compiled seccomp filter.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use nix::sched::CloneFlags;
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::cgroup::EnterFds;
use super::child_setup::ChildSetup;
use super::exit_page::ExitPage;
use super::mounts::MountPlan;
use super::namespaces::{IdMaps, Namespaces};
use super::prepare::Prepared;
use super::rlimits::RlimitPlan;

/// The plain-data half of a handed-over [`ChildSetup`]; descriptors are
/// named by their index in the list sent beside it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Handoff {
    rlimits: Option<[Option<(u64, u64)>; 6]>,
    unshare: Option<libc::c_int>,
    namespaces: Option<HandoffNamespaces>,
    cgroup: Vec<u8>,
    drop_caps: bool,
    landlock: Option<u8>,
    keyring: bool,
    seccomp: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct HandoffNamespaces {
    flags: libc::c_int,
    netns: Option<u8>,
    id_maps: Option<IdMaps>,
    mounts: Arc<MountPlan>,
    root: Option<u8>,
    cwd: CString,
    direct: bool,
    shared_pid: bool,
    exit: Option<u8>,
}

/// What a received setup borrows from: keep it until the child is forked
/// (the child has its own copies of the descriptors and of the mapping).
#[derive(Debug)]
pub struct Held {
    _fds: Vec<OwnedFd>,
    _exit: Option<ExitPage>,
}

impl Prepared {
    /// The setup as plain data, and the descriptors it names (borrowed:
    /// valid while `self` lives).
    pub fn handoff(&self) -> (Handoff, Vec<RawFd>) {
        let child = &self.child;
        let mut fds = Vec::new();
        let mut index = |fd: RawFd| {
            fds.push(fd);
            u8::try_from(fds.len() - 1).unwrap_or(u8::MAX)
        };
        let landlock = child.landlock.map(&mut index);
        let cgroup = child
            .cgroup
            .as_ref()
            .map(|enter| enter.raw().iter().map(|fd| index(*fd)).collect())
            .unwrap_or_default();
        let namespaces = child.namespaces.as_ref().map(|ns| HandoffNamespaces {
            flags: ns.flags,
            netns: ns.netns.map(&mut index),
            id_maps: ns.id_maps.clone(),
            mounts: ns.mounts.clone(),
            root: ns.root.map(&mut index),
            cwd: ns.cwd.clone(),
            direct: ns.direct,
            shared_pid: ns.shared_pid,
            exit: self.exit.as_ref().map(|page| index(page.raw_fd())),
        });
        let handoff = Handoff {
            rlimits: child.rlimits.as_ref().map(RlimitPlan::pairs),
            unshare: child.unshare.map(|flags| flags.bits()),
            namespaces,
            cgroup,
            drop_caps: child.drop_caps,
            landlock,
            keyring: child.keyring,
            seccomp: child.seccomp.is_some(),
        };
        (handoff, fds)
    }
}

impl Handoff {
    /// Whether the command is to start in the attempt's PID namespace.
    pub fn shares_pid(&self) -> bool {
        self.namespaces.as_ref().is_some_and(|ns| ns.shared_pid)
    }

    /// The setup again, in the receiving process, over the descriptors
    /// received (in the order [`Prepared::handoff`] listed them). The
    /// command's parent is to be `parent`, of which `parent_fd` is a pidfd;
    /// `attempt` is the attempt's PID namespace, for a setup that
    /// [`shares_pid`](Self::shares_pid).
    pub fn receive(
        self,
        fds: Vec<OwnedFd>,
        parent: Pid,
        parent_fd: Option<RawFd>,
        attempt: Option<RawFd>,
    ) -> std::io::Result<(ChildSetup, Held)> {
        let bad =
            || std::io::Error::new(std::io::ErrorKind::InvalidData, "a descriptor is missing");
        let raw = |at: u8| {
            fds.get(usize::from(at))
                .map(AsRawFd::as_raw_fd)
                .ok_or_else(bad)
        };
        let mut exit = None;
        let namespaces = match self.namespaces {
            None => None,
            Some(ns) => {
                let page = match ns.exit {
                    Some(at) => {
                        let fd = fds.get(usize::from(at)).ok_or_else(bad)?.try_clone()?;
                        Some(ExitPage::map(fd)?)
                    }
                    None => None,
                };
                let writer = page.as_ref().map(ExitPage::writer);
                // Only a command in the attempt's PID namespace has no
                // init to report its exit, and it needs that namespace.
                let pid_ns = if ns.shared_pid { attempt } else { None };
                // and it must be cloned into it, which needs the pidfd.
                if writer.is_none() != ns.shared_pid
                    || (ns.shared_pid && (pid_ns.is_none() || parent_fd.is_none() || !ns.direct))
                {
                    return Err(bad());
                }
                exit = page;
                Some(Namespaces {
                    flags: ns.flags,
                    netns: ns.netns.map(raw).transpose()?,
                    id_maps: ns.id_maps,
                    mounts: ns.mounts,
                    root: ns.root.map(raw).transpose()?,
                    cwd: ns.cwd,
                    // A direct init checks its parent through the pidfd.
                    direct: ns.direct && parent_fd.is_some(),
                    shared_pid: ns.shared_pid,
                    pid_ns,
                    exit: writer,
                    image: super::init_image::runner_image(),
                })
            }
        };
        let cgroup = if self.cgroup.is_empty() {
            None
        } else {
            let raws = self
                .cgroup
                .iter()
                .map(|at| raw(*at))
                .collect::<Result<Vec<_>, _>>()?;
            Some(EnterFds::new(raws.into_iter()))
        };
        let seccomp = if self.seccomp {
            Some(super::seccomp::filter().map_err(std::io::Error::other)?)
        } else {
            None
        };
        let setup = ChildSetup {
            parent,
            parent_fd,
            rlimits: self.rlimits.map(RlimitPlan::from_pairs),
            unshare: self.unshare.map(CloneFlags::from_bits_retain),
            namespaces,
            cgroup,
            drop_caps: self.drop_caps,
            landlock: self.landlock.map(raw).transpose()?,
            keyring: self.keyring,
            seccomp,
        };
        Ok((
            setup,
            Held {
                _fds: fds,
                _exit: exit,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsRawFd, BorrowedFd};
    use std::time::Duration;

    use super::super::grants::Grants;
    use super::super::policy::SandboxPolicy;
    use super::super::prepare::prepare;

    #[test]
    fn a_setup_in_the_attempts_pid_namespace_is_refused_without_that_namespace() {
        let ws = tempfile::tempdir().unwrap();
        let grants = Grants {
            write: vec![ws.path().to_path_buf()],
            scratch_in_root: super::super::prepare::private_root_available(
                &SandboxPolicy::default(),
            ),
            cwd: Some(ws.path().to_path_buf()),
            from_zygote: true,
            ..Grants::default()
        };
        let prepared = prepare(&SandboxPolicy::default(), &grants, Duration::from_secs(5)).unwrap();
        if !prepared.child.shares_pid() {
            let why = "commands here get no attempt's PID namespace (it needs root, \
                       cgroups, PID and mount namespaces and Landlock ABI 6+)";
            agent_runtime_test_support::skip(
                agent_runtime_test_support::Need::Layer,
                "a_setup_in_the_attempts_pid_namespace_is_refused_without_that_namespace",
                why,
            );
            return;
        }
        let receive = |attempt: Option<i32>| {
            let (handoff, raw) = prepared.handoff();
            let fds = raw
                .iter()
                .map(|fd| {
                    // SAFETY: the descriptors `prepared` holds open.
                    let fd = unsafe { BorrowedFd::borrow_raw(*fd) };
                    fd.try_clone_to_owned().unwrap()
                })
                .collect();
            let me = nix::unistd::getpid();
            let pidfd = crate::exec::pidfd(me).unwrap();
            handoff
                .receive(fds, me, Some(pidfd.as_raw_fd()), attempt)
                .map(|_| ())
        };
        // Without the namespace it would be cloned into the zygote's own,
        // and mount its /proc and scratch there: refused.
        let refused = receive(None).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidData, "{refused}");
        // With one (any namespace descriptor stands in for it here).
        let ns = std::fs::File::open("/proc/self/ns/pid").unwrap();
        receive(Some(ns.as_raw_fd())).unwrap();
    }
}
