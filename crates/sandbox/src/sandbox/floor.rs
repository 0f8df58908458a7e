//! The kernel's own price of a command in namespaces of its own, for
//! benchmarks: what no sandboxed spawn can go below on a machine.

use std::ffi::CStr;

use super::sys;

/// Runs `program` (no arguments, empty environment) the cheapest way a
/// command gets PID, mount and IPC namespaces of its own: an init cloned
/// straight into them from this process mounts a fresh `/proc`, forks and
/// execs it, reaps it and exits. No Landlock, cgroup, seccomp, root or
/// executor. Whether it ran and exited 0; an error where such namespaces
/// cannot be made (not root).
pub fn run_in_fresh_namespaces(program: &CStr) -> std::io::Result<bool> {
    let flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::SIGCHLD;
    // SAFETY: a fork-like clone (no CLONE_VM, no new stack): the child has
    // its own copy of this process and only makes system calls on data
    // made before the clone, then exits.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0, 0, 0, 0) };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        sys::exit(init(program));
    }
    let (_, status) = sys::wait(pid as libc::pid_t, false)?;
    match status {
        0 => Ok(true),
        // The init's exit code 2: the namespace could not be set up.
        _ if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 2 => {
            Err(std::io::Error::from_raw_os_error(libc::EPERM))
        }
        _ => Ok(false),
    }
}

/// The init's part: its exit code.
fn init(program: &CStr) -> libc::c_int {
    let private = libc::MS_REC | libc::MS_PRIVATE;
    if sys::mount(None, c"/", None, private, None).is_err()
        || sys::mount(Some(c"proc"), c"/proc", Some(c"proc"), 0, None).is_err()
    {
        return 2;
    }
    let Ok(command) = sys::fork() else { return 2 };
    if command == 0 {
        let argv = [program.as_ptr(), std::ptr::null()];
        let env = [std::ptr::null()];
        // SAFETY: NUL-terminated strings and NULL-terminated arrays that
        // outlive the call.
        unsafe { libc::execve(program.as_ptr(), argv.as_ptr(), env.as_ptr()) };
        sys::exit(127);
    }
    match sys::wait(command, false) {
        Ok((_, 0)) => 0,
        _ => 1,
    }
}
