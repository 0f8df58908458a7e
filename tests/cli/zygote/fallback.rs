//! The fallback: the zygote, or the attempt's PID namespace it serves,
//! killed from outside in the middle of an attempt; the attempt goes on
//! with direct spawns and the log says so (`zygote-lost`).

use std::time::{Duration, Instant};

use agent_runtime::sandbox::probe;

use super::{
    ZYGOTE_ARG, attempt_namespace_here, batch_that_sleeps_first, command_layers, inits_of,
    process_group, run_tool,
};
use agent_runtime_test_support::{Need, skip};

use crate::harness::{Sandbox, alive_with, log_lines, observations};

/// Kills `pid` with SIGKILL, waits for the batch `child` to succeed, and
/// returns its commands' layers.
fn kill_and_finish(sb: &Sandbox, child: std::process::Child, pid: i32) -> Vec<Vec<String>> {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let run = crate::harness::Run::from(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:#?}");
    command_layers(sb)
}

/// [`batch_that_sleeps_first`], then `echo after` and `echo later`.
fn sleep_then_after_and_later(sb: &Sandbox) -> (std::process::Child, String) {
    batch_that_sleeps_first(
        sb,
        &[
            run_tool("sh", &["-c", "echo after"]),
            run_tool("sh", &["-c", "echo later"]),
        ],
        "",
    )
}

#[test]
fn a_zygote_killed_mid_attempt_is_recorded_and_the_attempt_goes_on() {
    let test = "a_zygote_killed_mid_attempt_is_recorded_and_the_attempt_goes_on";
    if let Err(why) = &probe().namespaces {
        skip(
            Need::Layer,
            test,
            &format!("no PID and mount namespaces: {why}"),
        );
        return;
    }
    let sb = Sandbox::new();
    let (child, sleep) = sleep_then_after_and_later(&sb);
    let runner = child.id();
    // Once the first command sleeps, kill the zygote it started from.
    let needle = format!("{ZYGOTE_ARG} {runner}");
    let deadline = Instant::now() + Duration::from_secs(120);
    let zygote = loop {
        // The command's init is a copy of the zygote (it never execs): it
        // leads the command's group, the zygote does not.
        let zygotes: Vec<i32> = alive_with(&needle)
            .into_iter()
            .filter(|pid| process_group(*pid) != Some(*pid))
            .collect();
        if let ([one], false) = (&zygotes[..], alive_with(&sleep).is_empty()) {
            break *one;
        }
        assert!(Instant::now() < deadline, "no zygote of runner {runner}");
        std::thread::sleep(Duration::from_millis(5));
    };
    // It cloned the command (or its init) into the command's namespaces
    // and comes back to its own (the runner's), where the next clone
    // starts from: at once after a clone that waits for the command's
    // exec.
    for ns in ["mnt", "net", "pid_for_children"] {
        let of = |pid: u32| std::fs::read_link(format!("/proc/{pid}/ns/{ns}")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while of(zygote as u32) != of(runner) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(of(zygote as u32), of(runner), "the zygote's {ns} namespace");
    }
    let layers = kill_and_finish(&sb, child, zygote);
    let how: Vec<&str> = layers
        .iter()
        .map(|l| {
            if l.contains(&"zygote-lost".to_string()) {
                "lost"
            } else if l.contains(&"zygote".to_string()) {
                "zygote"
            } else {
                "direct"
            }
        })
        .collect();
    // The first started from the zygote and, running when it died,
    // finished as it would have; the next found it gone; the rest started
    // directly, every layer still on.
    assert_eq!(&how[..2], ["zygote", "lost"], "{layers:?}");
    assert!(how[2..].iter().all(|h| *h == "direct"), "{layers:?}");
    let first = log_lines(&sb)
        .into_iter()
        .find(|l| l["type"] == "command")
        .unwrap();
    assert_eq!(first["exit_code"], 0, "{first}");
    assert!(first["duration_ms"].as_u64().unwrap() >= 1900, "{first}");
    for command in &layers {
        assert!(command.contains(&"pidns".to_string()), "{layers:?}");
        assert!(command.contains(&"seccomp".to_string()) || probe().seccomp.is_err());
    }
    let seen = observations(&sb, "zygote", 1);
    assert!(seen.contains("first"), "{seen}");
    assert!(seen.contains("after"), "{seen}");
    assert!(seen.contains("later"), "{seen}");
    assert_eq!(
        log_lines(&sb)
            .iter()
            .filter(|l| l["type"] == "verify")
            .count(),
        1
    );
    assert!(alive_with(&needle).is_empty());
}

/// The one PID namespace of the attempt: while the first command sleeps,
/// it and the namespace's init are the runner's children in the same
/// namespace, the init without a child of its own. Killed from outside,
/// the init takes the sleeping command with it; the next command finds
/// the zygote unusable (`zygote-lost`) and the rest start directly, each
/// in a namespace of its own.
#[test]
fn the_attempts_pid_namespace_killed_mid_attempt_is_a_lost_zygote() {
    let test = "the_attempts_pid_namespace_killed_mid_attempt_is_a_lost_zygote";
    if !attempt_namespace_here(test) {
        return;
    }
    let sb = Sandbox::new();
    let (child, sleep) = sleep_then_after_and_later(&sb);
    let runner = child.id();
    let deadline = Instant::now() + Duration::from_secs(120);
    let (init, sleeping) = loop {
        let inits = inits_of(runner);
        let sleeping = alive_with(&sleep);
        if let ([(init, false)], [sleeping, ..]) = (&inits[..], &sleeping[..]) {
            break (*init, *sleeping);
        }
        assert!(
            Instant::now() < deadline,
            "no attempt namespace of runner {runner}: {inits:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let ns = |pid: i32| std::fs::read_link(format!("/proc/{pid}/ns/pid")).unwrap();
    assert_eq!(
        ns(init),
        ns(sleeping),
        "the command is in the attempt's namespace"
    );
    assert_ne!(ns(init), ns(runner as i32));
    let layers = kill_and_finish(&sb, child, init);
    assert!(layers.len() >= 3, "{layers:?}");
    assert!(layers[0].contains(&"zygote".to_string()), "{layers:?}");
    assert!(layers[1].contains(&"zygote-lost".to_string()), "{layers:?}");
    for command in &layers[2..] {
        assert!(
            !command.iter().any(|l| l.starts_with("zygote")),
            "{layers:?}"
        );
    }
    for command in &layers {
        assert!(command.contains(&"pidns".to_string()), "{layers:?}");
    }
    let first = log_lines(&sb)
        .into_iter()
        .find(|l| l["type"] == "command")
        .unwrap();
    assert_ne!(first["exit_code"], 0, "killed with its namespace: {first}");
    let seen = observations(&sb, "zygote", 1);
    assert!(seen.contains("killed by signal 9"), "{seen}");
    assert!(!seen.contains("--- stdout ---\nfirst"), "{seen}");
    assert!(seen.contains("after"), "{seen}");
    assert!(seen.contains("later"), "{seen}");
    assert!(alive_with(&sleep).is_empty());
}
