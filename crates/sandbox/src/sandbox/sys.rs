//! Raw system calls the child makes between fork and exec. Each is
//! async-signal-safe: it takes prepared C strings and plain numbers, and
//! never allocates or locks.

use std::ffi::CStr;
use std::io::{Error, Result};

fn check(rc: libc::c_long) -> Result<()> {
    if rc < 0 {
        Err(Error::last_os_error())
    } else {
        Ok(())
    }
}

fn ptr(s: Option<&CStr>) -> *const libc::c_char {
    s.map_or(std::ptr::null(), CStr::as_ptr)
}

pub(crate) fn mount(
    source: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> Result<()> {
    // SAFETY: every pointer is null or a NUL-terminated string that
    // outlives the call.
    let rc = unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast(),
        )
    };
    check(rc.into())
}

pub(crate) fn mkdir(path: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated path that outlives the call.
    let rc = unsafe { libc::mkdir(path.as_ptr(), 0o755) };
    match check(rc.into()) {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        other => other,
    }
}

pub(crate) fn chdir(path: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated path that outlives the call.
    check(unsafe { libc::chdir(path.as_ptr()) }.into())
}

/// `struct mount_attr` of mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// Makes the mount at `target`, and every mount below it, read-only (and
/// `nosuid`, and `nodev` when `nodev`).
pub(crate) fn make_read_only(target: &CStr, nodev: bool) -> Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | if nodev { MOUNT_ATTR_NODEV } else { 0 },
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a NUL-terminated path and a mount_attr that live on this
    // frame for the whole call; the size passed is the struct's.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            target.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    match check(rc) {
        // Kernels before 5.12: the top mount only.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            let mut flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID;
            if nodev {
                flags |= libc::MS_NODEV;
            }
            mount(None, target, None, flags, None)
        }
        other => other,
    }
}

/// Makes `root` (a mount point) the root directory and detaches the old
/// root, so nothing of the host stays reachable.
pub(crate) fn pivot_into(root: &CStr) -> Result<()> {
    chdir(root)?;
    // SAFETY: two NUL-terminated static strings.
    check(unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) })?;
    // The old root is now stacked on the new one: detach it.
    // SAFETY: a NUL-terminated static string.
    check(unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) }.into())?;
    chdir(c"/")
}

/// Marks every descriptor from `first` up close-on-exec, so nothing the
/// runner inherited or opened reaches the command.
pub(crate) fn cloexec_from(first: libc::c_uint) -> Result<()> {
    // SAFETY: close_range takes plain integers.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    match check(rc) {
        Err(e)
            if e.raw_os_error() == Some(libc::ENOSYS) || e.raw_os_error() == Some(libc::EINVAL) =>
        {
            // Kernels before 5.11: one fcntl per possible descriptor.
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes into the struct on this frame.
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
            let top = limit.rlim_cur.min(1 << 20) as libc::c_int;
            for fd in first as libc::c_int..top {
                // SAFETY: fcntl on a descriptor that may not exist only
                // fails with EBADF.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
            Ok(())
        }
        other => other,
    }
}

/// Closes every descriptor but `keep` (which may be -1).
pub(crate) fn close_all_but(keep: libc::c_int) {
    let close = |from: libc::c_int, to: libc::c_int| {
        if from <= to {
            // SAFETY: close_range takes plain integers.
            unsafe {
                libc::syscall(
                    libc::SYS_close_range,
                    from as libc::c_uint,
                    to as libc::c_uint,
                    0,
                )
            };
        }
    };
    if keep < 0 {
        close(0, libc::c_int::MAX);
    } else {
        close(0, keep - 1);
        close(keep + 1, libc::c_int::MAX);
    }
}

/// Every signal back to its default action and none blocked, as a fresh
/// process expects (the runner ignores SIGPIPE and may block others).
pub(crate) fn reset_signals() -> Result<()> {
    for signal in 1..libc::SIGRTMAX() {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        // SAFETY: resetting a disposition to SIG_DFL; invalid numbers only
        // fail with EINVAL, which is ignored.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
    set_mask(libc::SIG_SETMASK, false)
}

/// Blocks every signal (`block`) or sets the mask with `how` to the full
/// or empty set.
pub(crate) fn set_mask(how: libc::c_int, full: bool) -> Result<()> {
    // SAFETY: the sets live on this frame; sigfillset/sigemptyset only
    // write into them.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        if full {
            libc::sigfillset(&mut set);
        } else {
            libc::sigemptyset(&mut set);
        }
        check(libc::sigprocmask(how, &set, std::ptr::null_mut()).into())
    }
}

/// Waits for any signal while all are blocked; returns its number.
pub(crate) fn wait_any_signal() -> libc::c_int {
    // SAFETY: the set lives on this frame; sigwaitinfo accepts a null info.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::sigwaitinfo(&set, std::ptr::null_mut())
    }
}

pub(crate) fn fork() -> Result<libc::pid_t> {
    // SAFETY: called in a single-threaded child between fork and exec;
    // both sides only make system calls afterwards.
    let pid = unsafe { libc::fork() };
    check(pid.into())?;
    Ok(pid)
}

/// `waitpid` that retries on EINTR; returns (pid, raw status), pid 0 when
/// `nohang` and nothing changed, or the error (ECHILD: no children).
pub(crate) fn wait(pid: libc::pid_t, nohang: bool) -> Result<(libc::pid_t, libc::c_int)> {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into a local.
        let rc = unsafe { libc::waitpid(pid, &mut status, if nohang { libc::WNOHANG } else { 0 }) };
        if rc >= 0 {
            return Ok((rc, status));
        }
        let err = Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

pub(crate) fn exit(code: libc::c_int) -> ! {
    // SAFETY: _exit ends the process without running destructors or
    // atexit handlers of the runner copied by fork.
    unsafe { libc::_exit(code) }
}

pub(crate) fn unshare(flags: libc::c_int) -> Result<()> {
    // SAFETY: unshare takes plain flags.
    check(unsafe { libc::unshare(flags) }.into())
}

pub(crate) fn setns(fd: libc::c_int, kind: libc::c_int) -> Result<()> {
    // SAFETY: setns takes a descriptor and flags by value.
    check(unsafe { libc::setns(fd, kind) }.into())
}

pub(crate) fn set_dumpable(dumpable: bool) -> Result<()> {
    // SAFETY: prctl with integer arguments.
    check(
        unsafe {
            libc::prctl(
                libc::PR_SET_DUMPABLE,
                libc::c_ulong::from(dumpable),
                0,
                0,
                0,
            )
        }
        .into(),
    )
}

pub(crate) fn set_parent_death_signal() -> Result<()> {
    // SAFETY: prctl with integer arguments.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) }.into())
}

/// Writes all of `bytes` to a path opened write-only (for `/proc/self/*_map`).
pub(crate) fn write_file(path: &CStr, bytes: &[u8]) -> Result<()> {
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd.into())?;
    // SAFETY: `bytes` is valid for its length.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    // SAFETY: `fd` was opened above.
    unsafe { libc::close(fd) };
    if written < 0 {
        return Err(Error::last_os_error());
    }
    Ok(())
}

/// Whether the peer of a pipe's read end `fd` has gone (all writers closed).
pub(crate) fn pipe_hung_up(fd: libc::c_int) -> bool {
    poll_now(fd).is_some_and(|revents| revents & libc::POLLHUP != 0)
}

/// Whether the process of pidfd `fd` has exited (its pidfd is readable),
/// or `fd` cannot be polled.
pub(crate) fn process_exited(fd: libc::c_int) -> bool {
    poll_now(fd).is_none_or(|revents| revents != 0)
}

/// The events `fd` has for reading now (0 when none), or `None` when it
/// cannot be polled.
fn poll_now(fd: libc::c_int) -> Option<libc::c_short> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd on this frame, zero timeout.
    let rc = unsafe { libc::poll(&mut pfd, 1, 0) };
    (rc >= 0).then_some(pfd.revents)
}

/// Sets the scheduling policy of `pid` (0: this process) to `policy`
/// (`SCHED_IDLE` or `SCHED_OTHER`); its nice value is left as it is.
pub(crate) fn set_policy(pid: libc::pid_t, policy: libc::c_int) -> Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is valid for the call.
    check(unsafe { libc::sched_setscheduler(pid, policy, &raw const param) }.into())
}
