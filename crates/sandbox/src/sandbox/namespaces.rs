//! The namespace layers: each command in its own PID namespace (with a
//! tiny init) and mount namespace, joining a network namespace without
//! any interface up.
//!
//! The chain, all between fork and exec of the runner's child:
//!
//! 1. The runner's child (the *waiter*, leader of the command's process
//!    group) unshares the PID and mount namespaces and forks. It blocks
//!    every signal, closes every descriptor, waits for its child and exits.
//! 2. That child is the namespace's *init* (PID 1). It blanks what its
//!    `/proc/1/cmdline` and `environ` would show of the runner
//!    ([`Image`]), builds the
//!    command's root file system ([`MountPlan`]), forks the command, closes
//!    every descriptor and reaps until the command ends; then it reports
//!    the command's status on the [`ExitPage`](super::ExitPage) and exits.
//!    When PID 1 of a namespace exits, the kernel kills everything left in
//!    it: `setsid` and double-fork daemons die with their command.
//! 3. The command (PID 2) unblocks signals and goes on with the other
//!    layers (capabilities, Landlock, its own session keyring, the
//!    seccomp filter), then exec.
//!
//! A timeout's SIGTERM to the group reaches the command itself (the waiter
//! and init have it blocked); the SIGKILL after the grace kills the waiter
//! and init, and with init the whole namespace. If the runner dies, the
//! waiter gets SIGKILL (parent-death signal), and so does init after it.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, OnceLock};

use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Uid};

use super::error::{ChildProbeError, USERNS_HINT};
use super::exit_page::PageWriter;
use super::init_image::Image;
use super::mounts::MountPlan;
use super::sys;

/// Tasks every command has at once with a PID namespace, all in its
/// cgroup: the waiter, the init and the command.
pub(crate) const TASKS: u64 = 3;
/// The same when init is cloned straight into the namespaces
/// ([`Namespaces::direct`]): the init and the command.
pub(crate) const TASKS_DIRECT: u64 = 2;

/// Namespaces a command enters, decided in the runner.
#[derive(Debug)]
pub(crate) struct Namespaces {
    /// CLONE_* flags for unshare(2) in the waiter.
    pub flags: libc::c_int,
    /// A network namespace to join instead of making one.
    pub netns: Option<RawFd>,
    /// `/proc/self/{setgroups,uid_map,gid_map}` contents for a user
    /// namespace (unprivileged runners).
    pub id_maps: Option<IdMaps>,
    pub mounts: Arc<MountPlan>,
    /// The mount namespace holding the plan's root, built once
    /// ([`MountPlan::prepared_root`]): joined before the unshare, so the
    /// command's namespace is a copy of it. Without one, init builds the
    /// whole root.
    pub root: Option<RawFd>,
    /// The command's working directory, entered inside its root.
    pub cwd: CString,
    /// The runner's child is the namespace's init itself: its parent, a
    /// single-threaded zygote, joins the network and root namespaces and
    /// clones it with the `CLONE_NEW*` flags ([`Namespaces::clone_in`]),
    /// so there is no waiter. Otherwise the child unshares and forks.
    pub direct: bool,
    /// The command joins the attempt's PID namespace, held by an init the
    /// zygote made (`attempt_init.rs`), instead of one of its own: it has
    /// no init, and finishes its root itself. Only with `direct`.
    pub shared_pid: bool,
    /// That namespace (`/proc/INIT/ns/pid` of its init), filled in by the
    /// zygote.
    pub pid_ns: Option<RawFd>,
    /// Where the init reports the command's exit; none in the attempt's
    /// namespace, where the command is the runner's child itself.
    pub exit: Option<PageWriter>,
    /// The runner's memory layout, blanked in the init.
    pub image: Option<Image>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct IdMaps {
    uid_map: CString,
    gid_map: CString,
}

impl IdMaps {
    /// Maps the runner's own ids to themselves.
    pub(crate) fn identity() -> IdMaps {
        let uid = nix::unistd::getuid().as_raw();
        let gid = nix::unistd::getgid().as_raw();
        IdMaps {
            uid_map: CString::new(format!("{uid} {uid} 1\n")).unwrap_or_default(),
            gid_map: CString::new(format!("{gid} {gid} 1\n")).unwrap_or_default(),
        }
    }

    fn write(&self) -> std::io::Result<()> {
        // A non-dumpable process's /proc files belong to root, so the
        // runner's protection must be lifted for the three writes (the
        // command, in its own PID namespace, cannot see this process).
        sys::set_dumpable(true)?;
        let written = sys::write_file(c"/proc/self/setgroups", b"deny")
            .and_then(|()| sys::write_file(c"/proc/self/uid_map", self.uid_map.as_bytes()))
            .and_then(|()| sys::write_file(c"/proc/self/gid_map", self.gid_map.as_bytes()));
        sys::set_dumpable(false)?;
        written
    }
}

/// The namespaces a command makes of its own in the attempt's PID
/// namespace ([`Namespaces::shared_pid`]): a mount namespace, a copy of
/// its prepared root with its own `/proc` and scratch, and an IPC one, so
/// no System V object it leaves is there for the next command.
pub(crate) const SHARED_PID_FLAGS: libc::c_int = libc::CLONE_NEWNS | libc::CLONE_NEWIPC;

/// The flags a command's namespaces need on this machine (no network).
pub(crate) fn base_flags() -> libc::c_int {
    let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
    if !Uid::effective().is_root() {
        flags |= libc::CLONE_NEWUSER;
    }
    flags
}

/// Whether PID and mount namespaces can be made here, by trying in a
/// short-lived forked child.
pub(crate) fn probe() -> Result<(), ChildProbeError> {
    let flags = base_flags();
    // SAFETY: the child only makes system calls (unshare, mount, _exit),
    // all async-signal-safe, so forking a multi-threaded process is sound.
    match unsafe { nix::unistd::fork() } {
        Err(errno) => Err(ChildProbeError::Fork(errno)),
        Ok(ForkResult::Child) => {
            let code = match sys::unshare(flags)
                .and_then(|()| sys::mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None))
            {
                Ok(()) => 0,
                Err(e) => e.raw_os_error().unwrap_or(1),
            };
            sys::exit(code)
        }
        Ok(ForkResult::Parent { child }) => match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, 0)) => Ok(()),
            Ok(WaitStatus::Exited(_, code)) => Err(ChildProbeError::Unshare {
                what: "pid, mount",
                errno: nix::errno::Errno::from_raw(code),
                hint: if flags & libc::CLONE_NEWUSER != 0 {
                    USERNS_HINT
                } else {
                    ""
                },
            }),
            Ok(other) => Err(ChildProbeError::Ended(other)),
            Err(errno) => Err(ChildProbeError::Wait(errno)),
        },
    }
}

/// One network namespace, shared by the commands of this process: only a
/// loopback interface, down. Made once (a namespace costs about a
/// millisecond to create and more to tear down) on a short-lived thread, so
/// the runner itself never changes namespace. Root only: joining needs
/// CAP_SYS_ADMIN.
pub(crate) fn shared_netns() -> Option<RawFd> {
    static NETNS: OnceLock<Option<OwnedFd>> = OnceLock::new();
    NETNS
        .get_or_init(|| {
            if !Uid::effective().is_root() {
                return None;
            }
            std::thread::spawn(|| {
                nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).ok()?;
                nix::fcntl::open(
                    "/proc/thread-self/ns/net",
                    nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
                    nix::sys::stat::Mode::empty(),
                )
                .ok()
            })
            .join()
            .ok()
            .flatten()
        })
        .as_ref()
        .map(AsRawFd::as_raw_fd)
}

impl Namespaces {
    /// Runs in the runner's child. Returns only in the command (PID 2 of
    /// the new namespace); the waiter and init never return.
    pub(crate) fn enter(&self) -> std::io::Result<()> {
        if self.shared_pid {
            // The command itself, cloned into the attempt's PID namespace
            // and a copy of its root: only the root's own mounts are left.
            self.attempt_namespace()?;
            return self.finish_root(Some(&self.cwd));
        }
        if self.direct {
            // Already PID 1 of the namespaces, with the parent-death signal
            // of the runner's child; only the init's own steps are left.
            sys::set_mask(libc::SIG_SETMASK, true)?;
            return self.init(None);
        }
        if let Some(fd) = self.netns {
            sys::setns(fd, libc::CLONE_NEWNET)?;
        }
        if let Some(fd) = self.root {
            sys::setns(fd, libc::CLONE_NEWNS)?;
        }
        sys::unshare(self.flags)?;
        if let Some(maps) = &self.id_maps {
            maps.write()?;
        }
        // Init learns through this pipe whether the waiter is still there.
        let mut alive = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        if unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        sys::set_mask(libc::SIG_SETMASK, true)?;
        let init = sys::fork()?;
        if init > 0 {
            // The waiter: keep only the write end, so init sees it go.
            sys::close_all_but(alive[1]);
            let _ = sys::wait(init, false);
            sys::exit(0);
        }
        // Init (PID 1).
        sys::set_parent_death_signal()?;
        // SAFETY: closing this process's copy of the pipe's write end.
        unsafe { libc::close(alive[1]) };
        if sys::pipe_hung_up(alive[0]) {
            sys::exit(1); // the waiter died before the death signal was set
        }
        self.init(Some(alive[0]))
    }

    /// The init's steps, all signals blocked: blank what `/proc/1` shows,
    /// finish the root, fork the command (which returns) and reap until it
    /// ends. `alive` is the waiter's pipe, closed in the command.
    fn init(&self, alive: Option<RawFd>) -> std::io::Result<()> {
        // Nothing of the runner in /proc/1 (the command is forked below).
        if let Some(image) = &self.image {
            image.blank();
        }
        self.finish_root(Some(&self.cwd))?;
        let command = sys::fork()?;
        if command == 0 {
            if let Some(fd) = alive {
                // SAFETY: closing this process's copy of the pipe's read end.
                unsafe { libc::close(fd) };
            }
            sys::set_mask(libc::SIG_SETMASK, false)?;
            return Ok(());
        }
        sys::close_all_but(-1);
        init_loop(command, self.exit)
    }
}

impl Namespaces {
    /// The command's root: finished (a copy of the prepared root) or built
    /// whole, then `cwd` entered.
    fn finish_root(&self, cwd: Option<&CString>) -> std::io::Result<()> {
        if self.root.is_some() {
            self.mounts.finish(cwd)
        } else {
            self.mounts.apply(cwd)
        }
    }

    /// A setup in the attempt's PID namespace is only ever cloned into it
    /// by the zygote, which names it: never anywhere else (its mounts would
    /// be the zygote's).
    fn attempt_namespace(&self) -> std::io::Result<()> {
        if self.direct && self.pid_ns.is_some() {
            Ok(())
        } else {
            Err(std::io::Error::from_raw_os_error(libc::EINVAL))
        }
    }

    /// In a warm command of the attempt's PID namespace (see
    /// `zygote/warm.rs`): the root's own mounts, ahead of its command (the
    /// working directory is entered once the command is known).
    pub(crate) fn finish_warm_root(&self) -> std::io::Result<()> {
        if !self.shared_pid {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        self.attempt_namespace()?;
        // Seen by the command running meanwhile: nothing of the zygote
        // (its exec replaces all of it).
        if let Some(image) = &self.image {
            image.blank();
        }
        self.finish_root(None)
    }

    /// The life of a *warm* init (a direct init cloned before its command
    /// is known; see `crate::zygote`): its own steps, but the working
    /// directory and the fork; then `start` starts the command (its pid,
    /// once it has exec'd, or `None`: then the init exits) and it reaps
    /// until the command ends. Every signal stays blocked.
    pub(crate) fn serve_warm(&self, start: impl FnOnce() -> Option<libc::pid_t>) -> ! {
        if sys::set_mask(libc::SIG_SETMASK, true).is_err() {
            sys::exit(1);
        }
        if let Some(image) = &self.image {
            image.blank();
        }
        if self.finish_root(None).is_err() {
            sys::exit(1);
        }
        match start() {
            Some(command) => {
                sys::close_all_but(-1);
                init_loop(command, self.exit)
            }
            None => sys::exit(1),
        }
    }
}

/// A zygote's own network and mount namespaces, opened the first time it
/// clones an init into others (it is in its own until then, and back in
/// them after each clone).
#[derive(Debug)]
struct Home {
    net: OwnedFd,
    mnt: OwnedFd,
    pid: OwnedFd,
}

fn home() -> std::io::Result<&'static Home> {
    static HOME: OnceLock<Result<Home, i32>> = OnceLock::new();
    let open = |path: &str| {
        nix::fcntl::open(
            path,
            nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(|errno| errno as i32)
    };
    HOME.get_or_init(|| {
        Ok(Home {
            net: open("/proc/self/ns/net")?,
            mnt: open("/proc/self/ns/mnt")?,
            pid: open("/proc/self/ns/pid")?,
        })
    })
    .as_ref()
    .map_err(|errno| std::io::Error::from_raw_os_error(*errno))
}

impl Namespaces {
    /// In the single-threaded parent of a [`direct`](Self::direct) init
    /// (or of a command in the attempt's PID namespace): joins the network
    /// namespace, the prepared root the child's is copied from and the
    /// attempt's PID namespace for its children, runs `clone` with the
    /// `CLONE_NEW*` flags to add, and comes back to its own namespaces. A
    /// parent that cannot come back exits: it would start the next command
    /// from the wrong ones.
    pub(crate) fn clone_in<T>(&self, clone: impl FnOnce(libc::c_int) -> T) -> std::io::Result<T> {
        let home = home()?;
        if self.shared_pid {
            self.attempt_namespace()?;
        }
        if let Some(fd) = self.netns {
            sys::setns(fd, libc::CLONE_NEWNET)?;
        }
        let joined = match self.root {
            Some(fd) => sys::setns(fd, libc::CLONE_NEWNS),
            None => Ok(()),
        }
        .and_then(|()| match self.pid_ns.filter(|_| self.shared_pid) {
            Some(fd) => sys::setns(fd, libc::CLONE_NEWPID),
            None => Ok(()),
        });
        let cloned = joined.map(|()| clone(self.flags));
        let back = (!self.shared_pid
            || sys::setns(home.pid.as_raw_fd(), libc::CLONE_NEWPID).is_ok())
            && (self.root.is_none() || sys::setns(home.mnt.as_raw_fd(), libc::CLONE_NEWNS).is_ok())
            && (self.netns.is_none()
                || sys::setns(home.net.as_raw_fd(), libc::CLONE_NEWNET).is_ok());
        if !back {
            sys::exit(1);
        }
        cloned
    }
}

/// PID 1's life: reap every child; when the command ends, report its
/// status and whether anything else was still alive, and exit (which kills
/// the rest of the namespace). Signals are all blocked and only wake it.
fn init_loop(command: libc::pid_t, exit: Option<PageWriter>) -> ! {
    let Some(exit) = exit else { sys::exit(1) };
    loop {
        sys::wait_any_signal();
        loop {
            match sys::wait(-1, true) {
                Ok((0, _)) => break,
                Ok((pid, status)) if pid == command => {
                    let leaked = loop {
                        match sys::wait(-1, true) {
                            Ok((0, _)) => break true,
                            Ok(_) => continue,
                            Err(_) => break false,
                        }
                    };
                    exit.store(status, leaked);
                    sys::exit(0);
                }
                Ok(_) => continue,
                Err(_) => break,
            }
        }
    }
}
