//! The kernel's own price of a command in namespaces of its own, for
//! benchmarks: what no sandboxed spawn can go below on a machine. Two
//! prices: PID, mount and IPC namespaces of the command's own (as `exec`
//! and commands outside the attempt's PID namespace get them), and only
//! the mount and IPC namespaces with `/proc` and a scratch tmpfs mounted
//! (what a command in the attempt's PID namespace gets of its own).

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
    exit_of(status)
}

/// Runs `program` (no arguments, empty environment) in a copy of this
/// process's mount namespace and an IPC namespace of its own, with a fresh
/// `/proc` and a tmpfs on `/tmp` mounted in the copy (the host's are left
/// alone): a fork-like child makes them and execs it. No Landlock, cgroup,
/// seccomp or executor. Whether it ran and exited 0; an error where such
/// namespaces cannot be made (not root).
pub fn run_in_fresh_mount_namespace(program: &CStr) -> std::io::Result<bool> {
    let flags = libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::SIGCHLD;
    // SAFETY: as in `run_in_fresh_namespaces`.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0, 0, 0, 0) };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        if !own_proc() || sys::mount(Some(c"tmpfs"), c"/tmp", Some(c"tmpfs"), 0, None).is_err() {
            sys::exit(2);
        }
        exec(program);
    }
    let (_, status) = sys::wait(pid as libc::pid_t, false)?;
    exit_of(status)
}

/// What a floor's child's wait status says: ran and exited 0, ran and
/// failed, or (exit code 2) its namespaces could not be set up.
fn exit_of(status: libc::c_int) -> std::io::Result<bool> {
    match status {
        0 => Ok(true),
        _ if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 2 => {
            Err(std::io::Error::from_raw_os_error(libc::EPERM))
        }
        _ => Ok(false),
    }
}

/// In a new mount namespace: its mounts made private, and a fresh
/// `/proc` mounted; whether both worked.
fn own_proc() -> bool {
    let private = libc::MS_REC | libc::MS_PRIVATE;
    sys::mount(None, c"/", None, private, None).is_ok()
        && sys::mount(Some(c"proc"), c"/proc", Some(c"proc"), 0, None).is_ok()
}

/// Execs `program` with no arguments and an empty environment; exits 127
/// if it cannot.
fn exec(program: &CStr) -> ! {
    let argv = [program.as_ptr(), std::ptr::null()];
    let env = [std::ptr::null()];
    // SAFETY: NUL-terminated strings and NULL-terminated arrays that
    // outlive the call.
    unsafe { libc::execve(program.as_ptr(), argv.as_ptr(), env.as_ptr()) };
    sys::exit(127)
}

/// The init's part: its exit code.
fn init(program: &CStr) -> libc::c_int {
    if !own_proc() {
        return 2;
    }
    let Ok(command) = sys::fork() else { return 2 };
    if command == 0 {
        exec(program);
    }
    match sys::wait(command, false) {
        Ok((_, 0)) => 0,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_floor_runs_a_program_and_leaves_this_process_s_mounts_alone() {
        let mounts = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let before = mounts();
        match run_in_fresh_mount_namespace(c"/bin/true") {
            Ok(ran) => assert!(ran),
            Err(err) => {
                agent_runtime_test_support::skip(
                    agent_runtime_test_support::Need::Layer,
                    "the_mount_floor_runs_a_program_and_leaves_this_process_s_mounts_alone",
                    &format!("no mount namespace can be made here: {err}"),
                );
                return;
            }
        }
        assert!(!run_in_fresh_mount_namespace(c"/bin/false").unwrap());
        // The `/proc` and `/tmp` it mounted were in its own copy.
        assert_eq!(mounts(), before);
    }
}
