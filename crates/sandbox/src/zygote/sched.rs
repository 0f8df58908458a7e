//! How the zygote and the warm commands it makes are scheduled.
//!
//! The zygote makes the next command's warm process (`warm.rs`) while the
//! current command execs and runs. On a machine with few CPUs that work —
//! the clone into a copy of the mount namespace, then the warm command's
//! own mounts, cgroup and layers, some 0.4 ms of CPU — ran beside the
//! command and the runner and took the CPU from them: in one step in three
//! the runner waited behind it to reap the command. So the zygote rests as
//! `SCHED_IDLE` and so does every warm command it makes: they run on what
//! the runner and the commands leave, and any of those that wakes takes
//! the CPU from them at once.
//!
//! Nothing else runs idle. The zygote leaves `SCHED_IDLE` before it makes
//! anything else (a command started directly, the attempt's init, a warm
//! init), so those inherit the usual policy; and the runner lifts a warm
//! command before it sends it anything to run (a warm command it cannot
//! lift is killed unused). Where the runner would wait on the zygote
//! (a request of its own, or a warm command not made yet), it lifts the
//! zygote first, so a busy machine cannot starve it. All of this only
//! where a process can leave `SCHED_IDLE` again (`CAP_SYS_NICE`, or an
//! `RLIMIT_NICE` that allows its nice value); elsewhere nothing changes.
//!
//! A warm command sent its image wakes where its waker runs: on some
//! machines (virtual ones that pack their tasks onto few CPUs) always on
//! the runner's CPU, where it waited for the runner to ask for the next
//! warm command before it could exec. So just before the runner sends it
//! the image, it keeps the warm command off its own CPU
//! ([`keep_off_this_cpu`]), and the warm command, which noted its CPUs
//! before it said it was ready ([`own_cpus`]), takes them all back
//! ([`take_back`]) just before exec: the command itself runs where it
//! would have.

use nix::sched::CpuSet;
use nix::unistd::Pid;

use crate::sandbox::sys;

/// `CAP_SYS_NICE` (linux/capability.h).
const CAP_SYS_NICE: u32 = 23;

/// Whether a process of these credentials can return from `SCHED_IDLE`
/// to `SCHED_OTHER` at its nice value (the kernel's `can_nice`): only then
/// may the zygote and its warm commands rest.
pub(super) fn can_leave_idle() -> bool {
    if crate::sandbox::has_capability(CAP_SYS_NICE) {
        return true;
    }
    let Ok((soft, _)) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NICE)
    else {
        return false;
    };
    // SAFETY: getpriority takes plain integers; -1 with errno set is an
    // error, which the check below treats as no.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let needed = 20 - i64::from(nice);
    needed > 0 && i64::try_from(soft).is_ok_and(|soft| soft >= needed)
}

/// Makes `pid` (0: this process) `SCHED_IDLE`.
pub(super) fn rest(pid: libc::pid_t) -> std::io::Result<()> {
    sys::set_policy(pid, libc::SCHED_IDLE)
}

/// Makes `pid` (0: this process) `SCHED_OTHER` again.
pub(super) fn lift(pid: libc::pid_t) -> std::io::Result<()> {
    sys::set_policy(pid, libc::SCHED_OTHER)
}

/// The CPUs this process may run on.
pub(super) fn own_cpus() -> Option<CpuSet> {
    nix::sched::sched_getaffinity(Pid::from_raw(0)).ok()
}

/// Gives this process back the CPUs it noted with [`own_cpus`]. A set the
/// kernel refuses now (a cpuset changed meanwhile) leaves it where it is.
pub(super) fn take_back(cpus: &CpuSet) {
    let _ = nix::sched::sched_setaffinity(Pid::from_raw(0), cpus);
}

/// Keeps `pid` off the CPU the calling thread runs on, where it may run
/// elsewhere: it then wakes beside the caller, not behind it.
pub(super) fn keep_off_this_cpu(pid: Pid) {
    // SAFETY: no arguments; -1 on failure, handled below.
    let here = unsafe { libc::sched_getcpu() };
    let (Ok(here), Some(mut cpus)) = (usize::try_from(here), own_cpus()) else {
        return;
    };
    let elsewhere =
        (0..CpuSet::count()).any(|cpu| cpu != here && cpus.is_set(cpu).unwrap_or(false));
    if elsewhere && cpus.unset(here).is_ok() {
        let _ = nix::sched::sched_setaffinity(pid, &cpus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policy of `pid` as the kernel reports it.
    fn policy(pid: libc::pid_t) -> libc::c_int {
        // SAFETY: plain integer argument.
        unsafe { libc::sched_getscheduler(pid) }
    }

    #[test]
    fn a_process_that_can_leave_idle_rests_and_is_lifted() {
        if !can_leave_idle() {
            agent_runtime_test_support::skip(
                agent_runtime_test_support::Need::Layer,
                "a_process_that_can_leave_idle_rests_and_is_lifted",
                "this process could not leave SCHED_IDLE again (needs CAP_SYS_NICE or RLIMIT_NICE)",
            );
            return;
        }
        // A child of its own, so the test's thread keeps its policy.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep starts");
        let pid = i32::try_from(child.id()).expect("a pid fits");
        rest(pid).expect("rests");
        assert_eq!(policy(pid), libc::SCHED_IDLE);
        lift(pid).expect("is lifted");
        assert_eq!(policy(pid), libc::SCHED_OTHER);
        let _ = child.kill();
        let _ = child.wait();
    }
}
