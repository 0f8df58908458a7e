//! The init of an attempt's PID namespace: one per zygote, made the first
//! time a command is to start in it, that the attempt's commands are
//! cloned into instead of each getting a PID namespace (and an init) of
//! its own.
//!
//! A namespace per command is the costliest part of a sandboxed spawn on
//! a kernel like this one's (a second process forked, a fresh namespace
//! torn down after every command); what it buys is that nothing a command
//! starts outlives it, and that the command sees no other process. In the
//! attempt's namespace the first comes from the command's cgroup instead:
//! whatever is left in it when the command's leader exits is killed
//! (`cgroup.kill`, or freeze, kill, thaw) before the command is reported,
//! so before the next one starts, and the outcome says `leaked`. So the
//! runner uses it only where every command has a cgroup, and where
//! Landlock scopes signals (ABI 6+): the only other process a command sees
//! is this init, PID 1 of the namespace, outside the command's Landlock
//! domain, so the command cannot signal it; it is not dumpable and the
//! command keeps no capability, so it cannot trace it or open its
//! `/proc/1/{mem,environ,root}`; its `cmdline` and `environ` are blanked,
//! it keeps no capability, and its mount namespace holds only an empty
//! root (so its `mountinfo`, readable by the command, shows nothing of
//! the host's).
//!
//! It is the runner's child (cloned with `CLONE_PARENT`), so it outlives
//! a zygote that dies while a command runs in it; the runner kills and
//! reaps it when the attempt's zygote handle is dropped, and it dies with
//! the runner (parent-death signal). Its life is to reap the orphans the
//! commands leave (they are reparented to it) until then, every signal
//! blocked.

use std::os::fd::RawFd;

use super::init_image::Image;
use super::sys;

/// The init's life, in the child cloned into the new PID namespace:
/// never returns. `runner` is a pidfd of its parent, the runner, which it
/// cannot see by pid.
pub(crate) fn serve(runner: Option<RawFd>, image: Option<Image>) -> ! {
    if sys::set_mask(libc::SIG_SETMASK, true).is_err()
        || sys::set_parent_death_signal().is_err()
        // Out of the runner's group: a signal to it is not for the init.
        // SAFETY: setpgid with integers: a group of its own.
        || unsafe { libc::setpgid(0, 0) } != 0
    {
        sys::exit(1);
    }
    // The runner died before the death signal was set.
    if runner.is_none_or(sys::process_exited) {
        sys::exit(1);
    }
    if let Some(image) = image {
        image.blank();
    }
    sys::close_all_but(-1);
    // Nothing of the host to show or reach: an empty root of its own (its
    // `/proc/1/mountinfo` is readable in the namespace), and no capability.
    if empty_root().is_err()
        || super::caps::drop_all().is_err()
        || sys::set_dumpable(false).is_err()
    {
        sys::exit(1);
    }
    loop {
        sys::wait_any_signal();
        while let Ok((pid, _)) = sys::wait(-1, true) {
            if pid == 0 {
                break;
            }
        }
    }
}

/// A mount namespace of this process's own whose root is an empty,
/// read-only tmpfs (mounted on `/proc` of the copy, which always exists).
fn empty_root() -> std::io::Result<()> {
    sys::unshare(libc::CLONE_NEWNS)?;
    sys::mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    sys::mount(
        Some(c"tmpfs"),
        c"/proc",
        Some(c"tmpfs"),
        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        Some(c"size=4k,mode=0555"),
    )?;
    sys::pivot_into(c"/proc")
}

/// What the zygote holds of the attempt's PID namespace: its init (the
/// runner's child) and the namespace, to join before each clone.
#[derive(Debug)]
pub(crate) struct AttemptNamespace {
    pub(crate) pid: i32,
    /// `/proc/PID/ns/pid` of the init.
    pub(crate) ns: std::os::fd::OwnedFd,
    /// A pidfd of the init, to tell whether it is still there.
    pub(crate) alive: std::os::fd::OwnedFd,
}

impl AttemptNamespace {
    /// Whether the init has exited (then no process can be made in its
    /// namespace any more).
    pub(crate) fn gone(&self) -> bool {
        use std::os::fd::AsRawFd;
        sys::process_exited(self.alive.as_raw_fd())
    }
}

/// The zygote's side of making one: `clone` clones the init with the
/// flags given and runs [`serve`] in it, returning its pid (or -1 and the
/// error). The init's namespace is opened before anything else can
/// happen to it.
pub(crate) fn make(
    clone: impl FnOnce(libc::c_int) -> (libc::pid_t, std::io::Error),
) -> std::io::Result<AttemptNamespace> {
    let (pid, err) = clone(libc::CLONE_PARENT | libc::CLONE_NEWPID);
    if pid < 0 {
        return Err(err);
    }
    let alive = crate::exec::pidfd(nix::unistd::Pid::from_raw(pid))
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ESRCH))?;
    let ns = nix::fcntl::open(
        format!("/proc/{pid}/ns/pid").as_str(),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    let made = AttemptNamespace { pid, ns, alive };
    if made.gone() {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(made)
}
