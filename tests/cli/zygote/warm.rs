//! The warm init: while a command runs, the next command's init (in the
//! attempt's PID namespace, its very process) waits, made ahead in a
//! command cgroup of its own, and the next command runs in that cgroup;
//! none is left after the run.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_runtime::sandbox::{probe, test_hooks};

use super::{
    ZYGOTE_ARG, attempt_namespace_here, batch_that_sleeps_first, children_of, command_layers,
    inits_of, process_group, run_tool,
};
use agent_runtime_test_support::{Need, skip};

use crate::harness::{Sandbox, alive_with, observations};

/// The `pids` line of `/proc/PID/cgroup` (v1), or the unified line.
fn pids_cgroup(pid: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    text.lines()
        .find(|l| l.split(':').nth(1) == Some("pids"))
        .or_else(|| text.lines().find(|l| l.starts_with("0::")))
        .unwrap_or_default()
        .to_string()
}

/// [`batch_that_sleeps_first`], then a command that prints `AFTER` and
/// its cgroups, with the test hooks removing `hooks`.
fn sleep_then_print_cgroup(sb: &Sandbox, hooks: &str) -> (std::process::Child, String) {
    batch_that_sleeps_first(
        sb,
        &[run_tool("sh", &["-c", "echo AFTER; cat /proc/self/cgroup"])],
        hooks,
    )
}

/// What was made ahead (`warm`) while `busy` ran: it leads a group of its
/// own and is already in a command cgroup, not the running command's; the
/// batch `child` succeeds and the next command ran there, in that cgroup,
/// every command from the zygote, which was never lost.
fn ran_where_made_ahead(sb: &Sandbox, child: std::process::Child, busy: i32, warm: i32) {
    assert_eq!(process_group(warm), Some(warm));
    let warm_cgroup = pids_cgroup(&warm.to_string());
    assert!(warm_cgroup.contains("agent-runtime-"), "{warm_cgroup}");
    assert_ne!(warm_cgroup, pids_cgroup(&busy.to_string()));
    let run = crate::harness::Run::from(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:#?}");
    let seen = observations(sb, "zygote", 1);
    assert!(seen.contains("first"), "{seen}");
    assert!(seen.contains("AFTER"), "{seen}");
    assert!(seen.contains(&warm_cgroup), "{warm_cgroup} not in {seen}");
    for command in command_layers(sb) {
        assert!(command.contains(&"zygote".to_string()), "{command:?}");
        assert!(!command.contains(&"zygote-lost".to_string()), "{command:?}");
    }
}

/// Where a command gets a PID namespace of its own (here: with Landlock
/// removed, so its signals are not scoped and the attempt's namespace is
/// not used), the next command's init is made ahead.
#[test]
fn the_next_command_starts_in_an_init_made_ahead_in_its_own_cgroup() {
    let test = "the_next_command_starts_in_an_init_made_ahead_in_its_own_cgroup";
    if let Err(why) = &probe().namespaces {
        skip(
            Need::Layer,
            test,
            &format!("no PID and mount namespaces: {why}"),
        );
        return;
    }
    if !nix::unistd::Uid::effective().is_root() {
        skip(
            Need::Layer,
            test,
            "inits are made ahead only by a runner that is root",
        );
        return;
    }
    if test_hooks().is_none() {
        skip(
            Need::Layer,
            test,
            "the test hooks are compiled out of this build",
        );
        return;
    }
    let sb = Sandbox::new();
    let (child, sleep) = sleep_then_print_cgroup(&sb, "landlock");
    let runner = child.id();
    // While the first command sleeps: its init, with the command under
    // it, and the next command's, made ahead, with nothing under it yet.
    let deadline = Instant::now() + Duration::from_secs(120);
    let (busy, warm) = loop {
        let inits = inits_of(runner);
        let busy: Vec<i32> = inits.iter().filter(|i| i.1).map(|i| i.0).collect();
        let warm: Vec<i32> = inits.iter().filter(|i| !i.1).map(|i| i.0).collect();
        if let ([busy], [warm], false) = (&busy[..], &warm[..], alive_with(&sleep).is_empty()) {
            break (*busy, *warm);
        }
        assert!(
            Instant::now() < deadline,
            "no warm init of runner {runner}: {inits:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    ran_where_made_ahead(&sb, child, busy, warm);
    // None is left once the runner is done.
    assert!(inits_of(runner).is_empty());
    assert!(!Path::new(&format!("/proc/{warm}")).exists() || process_group(warm) != Some(warm));
}

/// In the attempt's PID namespace, while a command runs, the next
/// command's very process waits, made ahead in a command cgroup of its
/// own (not the running command's), leading its own group, showing
/// nothing of the zygote it was cloned from; the next command runs there.
#[test]
fn in_the_attempts_namespace_the_next_command_is_made_ahead_in_its_own_cgroup() {
    let test = "in_the_attempts_namespace_the_next_command_is_made_ahead_in_its_own_cgroup";
    if !attempt_namespace_here(test) {
        return;
    }
    let sb = Sandbox::new();
    let (child, sleep) = sleep_then_print_cgroup(&sb, "");
    let runner = child.id();
    let ns = |pid: i32| std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok();
    let deadline = Instant::now() + Duration::from_secs(120);
    let (busy, warm) = loop {
        let sleeping = alive_with(&sleep);
        let inits = inits_of(runner);
        if let ([(init, false)], Some(busy)) = (&inits[..], sleeping.first()) {
            let waiting: Vec<i32> = children_of(runner)
                .into_iter()
                .filter(|pid| pid != init && !sleeping.contains(pid) && ns(*pid) == ns(*init))
                .collect();
            // Made: it leads its group and is in its cgroup (caught
            // mid-clone, it is not yet; on a busy machine that moment can
            // be seen).
            if let [warm] = waiting[..]
                && process_group(warm) == Some(warm)
                && pids_cgroup(&warm.to_string()).contains("agent-runtime-")
            {
                break (*busy, warm);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no warm command of runner {runner}: {inits:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let cmdline = std::fs::read(format!("/proc/{warm}/cmdline")).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&cmdline).contains(ZYGOTE_ARG),
        "{cmdline:?}"
    );
    ran_where_made_ahead(&sb, child, busy, warm);
}
