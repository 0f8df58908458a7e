//! The zygote rests as `SCHED_IDLE` and so does the next command's
//! process it makes ahead, so neither takes a CPU from a running command
//! or the runner; every command itself runs at the usual policy, on every
//! CPU the runner may use (a warm command kept off the runner's CPU while
//! it starts takes them back before exec).

use std::time::{Duration, Instant};

use super::{
    ZYGOTE_ARG, attempt_namespace_here, batch_that_sleeps_first, children_of, inits_of, run_tool,
    stat_field,
};
use crate::harness::{Sandbox, alive_with, observations};

/// `SCHED_IDLE` (linux/sched.h).
const SCHED_IDLE: u32 = 5;

/// The scheduling policy of `pid`.
fn policy_of(pid: i32) -> Option<u32> {
    stat_field(pid, 41).and_then(|p| u32::try_from(p).ok())
}

/// The runner's zygote.
fn zygote_of(runner: u32) -> Option<i32> {
    children_of(runner).into_iter().find(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(ZYGOTE_ARG))
    })
}

/// A command that prints its own scheduling policy and CPUs.
fn print_policy() -> serde_json::Value {
    run_tool(
        "python3",
        &[
            "-c",
            "import os; print('POLICY', os.sched_getscheduler(0)); \
             print('CPUS', ','.join(map(str, sorted(os.sched_getaffinity(0)))))",
        ],
    )
}

/// This process's CPUs (the runner's, which it starts), as the command
/// above prints them.
fn own_cpus() -> String {
    let cpus = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    let listed: Vec<String> = (0..nix::sched::CpuSet::count())
        .filter(|cpu| cpus.is_set(*cpu).unwrap_or(false))
        .map(|cpu| cpu.to_string())
        .collect();
    format!("CPUS {}", listed.join(","))
}

#[test]
fn the_zygote_and_the_next_command_rest_idle_and_every_command_runs_as_usual() {
    let test = "the_zygote_and_the_next_command_rest_idle_and_every_command_runs_as_usual";
    if !attempt_namespace_here(test) {
        return;
    }
    let sb = Sandbox::new();
    let (child, sleep) = batch_that_sleeps_first(&sb, &[print_policy(), print_policy()], "");
    let runner = child.id();
    // While the first command sleeps: the zygote and the next command's
    // process, made ahead, rest; the command itself does not.
    let deadline = Instant::now() + Duration::from_secs(120);
    let (zygote, warm, busy) = loop {
        let sleeping = alive_with(&sleep);
        let inits: Vec<i32> = inits_of(runner).into_iter().map(|i| i.0).collect();
        let zygote = zygote_of(runner);
        let waiting: Vec<i32> = children_of(runner)
            .into_iter()
            .filter(|pid| !inits.contains(pid) && !sleeping.contains(pid) && Some(*pid) != zygote)
            .collect();
        if let (Some(zygote), [warm], Some(busy)) = (zygote, &waiting[..], sleeping.first()) {
            // Made, and past its set-up (it rests from its clone on).
            if policy_of(*warm) == Some(SCHED_IDLE) {
                break (zygote, *warm, *busy);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no warm command of runner {runner}: {waiting:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(policy_of(zygote), Some(SCHED_IDLE), "the zygote {zygote}");
    assert_eq!(policy_of(busy), Some(0), "the running command {busy}");
    assert_eq!(policy_of(warm), Some(SCHED_IDLE), "the warm command {warm}");
    let run = crate::harness::Run::from(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:#?}");
    // Both later commands started from processes made ahead, lifted
    // before they ran anything.
    let seen = observations(&sb, "zygote", 1);
    assert_eq!(seen.matches("POLICY 0").count(), 2, "{seen}");
    assert!(!seen.contains("POLICY 5"), "{seen}");
    let cpus = own_cpus();
    assert_eq!(
        seen.matches(&format!("{cpus}\n")).count(),
        2,
        "{cpus} in {seen}"
    );
}
