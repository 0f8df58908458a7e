//! The attempt's zygote, attacked and killed, through the real binary.
//!
//! The zygote sits outside every command's Landlock domain and seccomp
//! filter, so a command must not be able to reach it. A scripted job runs
//! an attacker that looks for the zygote and every other process it can
//! see, and tries to signal (every pid up to `pid_max`, then each zygote it
//! sees with SIGKILL and SIGSTOP), trace (`PTRACE_ATTACH`, `PTRACE_SEIZE`),
//! read (`environ`, `mem`) and alter (`mem`, `oom_score_adj`) it; then it
//! leaves a daemon, files in its scratch and in `/tmp`, and asks the next
//! command to look for them. The properties, checked in and out of band:
//! the zygote was never reached (every later command still started from
//! it, and the attacker's tally of successes is empty), nothing the
//! attacker left was seen by the next command, and after the run no
//! process of the attacker or the zygote is alive. Once with every layer,
//! once without PID and mount namespaces (the test hook removes them), where
//! the zygote is in plain sight of the command.
//!
//! And the fallback: the zygote killed from outside in the middle of an
//! attempt; the attempt goes on with direct spawns and the log says so.
//! And the warm init: while a command runs, the next command's init waits,
//! made ahead in a command cgroup of its own, and the next command runs
//! in that cgroup; none is left after the run.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_runtime::sandbox::{TEST_HOOKS_ENV, probe, test_hooks};

use crate::harness::{Sandbox, alive_with, layer_missing, log_lines, observations};

const ZYGOTE_ARG: &str = "__agent-runtime-zygote";

/// The attacker, `attack MARKER` or `look MARKER`. Prints one line per
/// finding; `REACHED ...` lines are successes against a process that is
/// not the command's own.
const PROBE: &str = r#"
import ctypes, os, signal, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
mode, marker = sys.argv[1], sys.argv[2]
# "init": PID 1 is not the command's own (the attempt's PID namespace, or
# the command's init): attack it as hard as a zygote.
hard_init = sys.argv[3:] == ["init"]
me = os.getpid()
try:
    stat = open("/proc/1/stat").read()
    print("INIT", stat[stat.rfind(")") + 2:].split()[19], flush=True)
except (OSError, IndexError):
    print("INIT none", flush=True)

def visible():
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (me, 1):
            pids.append(int(name))
    return pids

def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""

def mine(pid):
    # Processes this command started itself (its own tree).
    try:
        stat = open(f"/proc/{pid}/stat").read()
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return False
    return ppid == me

if mode == "attack":
    targets = [p for p in visible() if not mine(p)]
    # The zygote of this command's runner (its parent), named with the
    # runner's pid; never another runner's.
    runner = str(os.getppid())
    zygotes = [p for p in targets if cmdline(p).split()[1:] == ["__agent-runtime-zygote", runner]]
    print("SEES", len(targets), "ZYGOTES", zygotes, flush=True)
    # In the attempt's PID namespace every process that is not the
    # command's own is the runtime's: its init, the next command's process
    # made ahead.
    outside = sorted(set(targets + [1])) if hard_init else zygotes
    # Every pid there is: which answer a signal?
    answered = []
    limit = int(open("/proc/sys/kernel/pid_max").read())
    for pid in range(1 if hard_init else 2, limit + 1):
        if pid == me:
            continue
        if libc.kill(pid, 0) == 0:
            answered.append(pid)
    for pid in answered:
        print("REACHED signal0", pid, cmdline(pid), flush=True)
    # Signals, tracing and writes only at zygotes (and a PID 1 of the
    # runtime's): were a layer to fail, the test must not take the machine
    # down with it.
    for pid in outside:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            if libc.kill(pid, sig) == 0:
                print("REACHED kill", sig, pid, flush=True)
        for request in (16, 0x4206):  # PTRACE_ATTACH, PTRACE_SEIZE
            if libc.ptrace(request, pid, None, None) == 0:
                print("REACHED ptrace", request, pid, flush=True)
    for pid in sorted(set(targets + ([1] if hard_init else []))):
        for name, flags in (("environ", os.O_RDONLY), ("mem", os.O_RDWR), ("oom_score_adj", os.O_WRONLY)):
            if name != "environ" and pid not in outside:
                continue
            try:
                fd = os.open(f"/proc/{pid}/{name}", flags)
            except OSError:
                continue
            try:
                if name == "environ":
                    data = os.read(fd, 4096)
                    if data or pid in outside:
                        print("REACHED read", name, pid, flush=True)
                elif name == "oom_score_adj":
                    os.write(fd, b"1000")
                    print("REACHED write", name, pid, flush=True)
                else:
                    print("REACHED open", name, pid, flush=True)
            except OSError:
                pass
            finally:
                os.close(fd)
    # What PID 1's mount table shows (readable without ptrace) must be no
    # more than the command's own: nothing of the host's mounts.
    if hard_init:
        def points(pid):
            try:
                return {line.split()[4] for line in open(f"/proc/{pid}/mountinfo")}
            except OSError:
                return set()
        for point in sorted(points(1) - points("self")):
            print("REACHED mountinfo", point, flush=True)
    # Leave things behind for the next command.
    subprocess.Popen(["sh", "-c", f"sleep {marker} & sleep {marker}"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for where in (os.environ.get("HOME", "/nonexistent"), os.environ.get("TMPDIR", "/nonexistent"), "/tmp", "/dev/shm"):
        try:
            open(os.path.join(where, f"planted-{marker}"), "w").write("x")
            print("PLANTED", where, flush=True)
        except OSError:
            pass
    os.environ["PLANTED"] = marker
    print("ATTACKED", flush=True)
else:
    for pid in visible():
        line = cmdline(pid)
        if marker in line:
            print("SAW process", pid, line, flush=True)
    for where in (os.environ.get("HOME", "/nonexistent"), os.environ.get("TMPDIR", "/nonexistent"), "/tmp", "/dev/shm"):
        if os.path.exists(os.path.join(where, f"planted-{marker}")):
            print("SAW file", where, flush=True)
    if os.environ.get("PLANTED"):
        print("SAW environment", flush=True)
    print("LOOKED", flush=True)
"#;

/// The process group of `pid`.
fn process_group(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

fn python() -> bool {
    Path::new("/usr/bin/python3").exists()
}

/// A job of `steps` (scripted replies), its source holding the probe.
fn job(sb: &Sandbox, steps: &[serde_json::Value]) -> std::path::PathBuf {
    let source = sb.path().join("src-tree");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("probe.py"), PROBE).unwrap();
    let script: String = steps.iter().map(|s| format!("{s}\n")).collect();
    std::fs::write(sb.path().join("script.jsonl"), script).unwrap();
    let manifest = sb.path().join("zygote.toml");
    std::fs::write(
        &manifest,
        r#"prompt = "Create done.txt."
source = "src-tree"
editable = ["*.txt"]
allow = ["python3 **", "sh **"]
verify = ["python3", "-c", "pass"]
trace = "full"

[limits]
attempts = 1
command_timeout = "5m"

[sandbox]
mode = "auto"

[provider]
kind = "script"
script = ["script.jsonl"]
"#,
    )
    .unwrap();
    manifest
}

fn run_tool(program: &str, args: &[&str]) -> serde_json::Value {
    serde_json::json!({"kind": "run_tool", "program": program, "args": args})
}

fn finish_steps() -> [serde_json::Value; 2] {
    [
        serde_json::json!({"kind": "write_file", "path": "done.txt", "content": "ok\n"}),
        serde_json::json!({"kind": "finish", "summary": "done"}),
    ]
}

/// The `sandbox` list of every command event, in order.
fn command_layers(sb: &Sandbox) -> Vec<Vec<String>> {
    log_lines(sb)
        .into_iter()
        .filter(|l| l["type"] == "command")
        .map(|l| {
            l["sandbox"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

fn runner_pid(sb: &Sandbox) -> i64 {
    log_lines(sb)
        .into_iter()
        .find(|l| l["type"] == "attempt_started")
        .and_then(|l| l["pid"].as_i64())
        .expect("an attempt started")
}

fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{}.{}",
        800_000 + std::process::id() % 90_000,
        nanos % 1_000_000
    )
}

/// Whether this machine has PID and mount namespaces and Landlock that
/// scopes signals (ABI 6+); says which is missing when not.
fn namespaces_and_scoped_signals(test: &str) -> bool {
    if let Err(why) = &probe().namespaces {
        layer_missing(test, &format!("no PID and mount namespaces: {why}"));
        return false;
    }
    if probe().landlock_abi.as_ref().map_or(true, |abi| *abi < 6) {
        layer_missing(test, "Landlock below ABI 6 cannot scope signals");
        return false;
    }
    true
}

/// Whether commands here get the attempt's PID namespace: namespaces,
/// scoped signals, a runner that is root, and cgroups; says why not.
fn attempt_namespace_here(test: &str) -> bool {
    if !namespaces_and_scoped_signals(test) {
        return false;
    }
    if !nix::unistd::Uid::effective().is_root() || agent_runtime::sandbox::cgroup_support().is_err()
    {
        eprintln!(
            "skipping {test}: the attempt's namespace needs a runner that is root and cgroups"
        );
        return false;
    }
    true
}

fn attack(test: &str, without_namespaces: bool) {
    if !python() {
        layer_missing(test, "python3 is not installed at /usr/bin/python3");
        return;
    }
    if !namespaces_and_scoped_signals(test) {
        return;
    }
    if without_namespaces && test_hooks().is_none() {
        eprintln!("skipping {test}: the test hooks are compiled out of this build");
        return;
    }
    let sb = Sandbox::new();
    let marker = marker();
    let attack = if without_namespaces {
        vec!["probe.py", "attack", &marker]
    } else {
        vec!["probe.py", "attack", &marker, "init"]
    };
    let mut steps = vec![
        run_tool("python3", &attack),
        run_tool("python3", &["probe.py", "look", &marker]),
    ];
    steps.extend(finish_steps());
    let manifest = job(&sb, &steps);
    let mut command = sb.command(&["batch", "DATA", manifest.to_str().unwrap()]);
    if without_namespaces {
        command.env(TEST_HOOKS_ENV, "namespaces");
    } else {
        command.env_remove(TEST_HOOKS_ENV);
    }
    let run = crate::harness::Run::from(command.output().unwrap());
    assert_eq!(run.code, 0, "{run:#?}");

    let seen = observations(&sb, "zygote", 1);
    assert!(seen.contains("ATTACKED"), "{seen}");
    assert!(seen.contains("LOOKED"), "{seen}");
    let reached: Vec<&str> = seen.lines().filter(|l| l.contains("REACHED")).collect();
    assert!(
        reached.is_empty(),
        "the command reached a process: {reached:#?}"
    );
    let saw: Vec<&str> = seen.lines().filter(|l| l.starts_with("SAW")).collect();
    assert!(
        saw.is_empty(),
        "the next command saw what the last left: {saw:#?}"
    );
    // Where every command has a cgroup, the commands of the attempt share
    // one PID namespace: both saw the same init (the one attacked, still
    // there for the next command); elsewhere each has its own.
    let inits: Vec<&str> = seen.lines().filter(|l| l.starts_with("INIT")).collect();
    assert_eq!(inits.len(), 2, "{seen}");
    let shared = !without_namespaces
        && nix::unistd::Uid::effective().is_root()
        && agent_runtime::sandbox::cgroup_support().is_ok();
    if shared {
        assert_eq!(inits[0], inits[1], "{seen}");
    }
    if without_namespaces {
        // The zygote was in plain sight: the attack had its target.
        let zygotes = seen
            .lines()
            .find(|l| l.starts_with("SEES"))
            .unwrap_or_default();
        assert!(!zygotes.ends_with("ZYGOTES []"), "{seen}");
    }
    // Every command started from the same zygote, which the attack did
    // not stop, kill or take over: none was started another way.
    let layers = command_layers(&sb);
    assert!(layers.len() >= 3, "{layers:?}");
    for command in &layers {
        assert!(command.contains(&"zygote".to_string()), "{layers:?}");
        assert!(!command.contains(&"zygote-lost".to_string()), "{layers:?}");
        assert_eq!(
            command.contains(&"pidns".to_string()),
            !without_namespaces,
            "{layers:?}"
        );
    }
    // Out of band, after the run: nothing of the attacker and no zygote of
    // this runner is alive.
    let runner = runner_pid(&sb);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let daemons = alive_with(&format!("sleep {marker}"));
        let zygotes = alive_with(&format!("{ZYGOTE_ARG} {runner}"));
        if daemons.is_empty() && zygotes.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "alive after the run: daemons {daemons:?}, zygotes {zygotes:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for dir in ["/tmp", "/dev/shm"] {
        let planted = Path::new(dir).join(format!("planted-{marker}"));
        assert!(!planted.exists(), "{} was written", planted.display());
    }
}

#[test]
fn a_command_cannot_reach_the_zygote_and_leaves_nothing_for_the_next() {
    attack(
        "a_command_cannot_reach_the_zygote_and_leaves_nothing_for_the_next",
        false,
    );
}

#[test]
fn without_namespaces_the_zygote_is_in_sight_and_still_out_of_reach() {
    attack(
        "without_namespaces_the_zygote_is_in_sight_and_still_out_of_reach",
        true,
    );
}

/// Starts `batch` on a job whose first command sleeps 2 s (a sleep only
/// this test runs, returned) and prints `first`, then runs `later`, then
/// finishes; with the test hooks removing `hooks` (a list of layers).
fn batch_that_sleeps_first(
    sb: &Sandbox,
    later: &[serde_json::Value],
    hooks: &str,
) -> (std::process::Child, String) {
    let nanos = marker().replace('.', "");
    let sleep = format!("sleep 2.{nanos}");
    let mut steps = vec![run_tool("sh", &["-c", &format!("{sleep}; echo first")])];
    steps.extend(later.iter().cloned());
    steps.extend(finish_steps());
    let manifest = job(sb, &steps);
    let child = sb
        .command(&["batch", "DATA", manifest.to_str().unwrap()])
        .env(TEST_HOOKS_ENV, hooks)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, sleep)
}

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
        layer_missing(test, &format!("no PID and mount namespaces: {why}"));
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

#[test]
fn with_the_sandbox_off_commands_still_start_from_the_zygote() {
    // No layer is needed: the binary always serves as a zygote.
    let sb = Sandbox::new();
    let mut steps = vec![run_tool("sh", &["-c", "echo off"])];
    steps.extend(finish_steps());
    let manifest = job(&sb, &steps);
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("mode = \"auto\"", "mode = \"off\"")).unwrap();
    let run = crate::harness::Run::from(
        sb.command(&["batch", "DATA", manifest.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    // The command and the verify: from the zygote, with no layer around
    // them (the zygote forks; it adds no sandbox of its own).
    let layers = command_layers(&sb);
    assert!(layers.len() >= 2, "{layers:?}");
    for command in &layers {
        assert_eq!(command, &["zygote".to_string()], "{layers:?}");
    }
}

/// The runner's children that are the init of a PID namespace of their
/// own (`NSpid` ends in 1), each with whether it has a child.
fn inits_of(runner: u32) -> Vec<(i32, bool)> {
    let parent_of = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat[stat.rfind(')')? + 1..]
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let is_init = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|status| {
                let nspid = status
                    .lines()
                    .find(|l| l.starts_with("NSpid:"))?
                    .to_string();
                let ids: Vec<&str> = nspid.split_whitespace().skip(1).collect();
                Some(ids.len() >= 2 && ids.last() == Some(&"1"))
            })
            .unwrap_or(false)
    };
    pids.iter()
        .copied()
        .filter(|pid| parent_of(*pid) == Some(runner as i32) && is_init(*pid))
        .map(|init| (init, pids.iter().any(|p| parent_of(*p) == Some(init))))
        .collect()
}

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
        layer_missing(test, &format!("no PID and mount namespaces: {why}"));
        return;
    }
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("skipping {test}: inits are made ahead only by a runner that is root");
        return;
    }
    if test_hooks().is_none() {
        eprintln!("skipping {test}: the test hooks are compiled out of this build");
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

/// The runner's children.
fn children_of(runner: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    stat[stat.rfind(')')? + 1..]
                        .split_whitespace()
                        .nth(1)?
                        .parse::<u32>()
                        .ok()
                })
                == Some(runner)
        })
        .collect()
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
            if let [warm] = waiting[..] {
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
