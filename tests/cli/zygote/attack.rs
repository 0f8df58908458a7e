//! A command attacking the attempt's zygote, with the `PROBE` script.
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

use std::path::Path;
use std::time::{Duration, Instant};

use agent_runtime::sandbox::{TEST_HOOKS_ENV, test_hooks};

use super::{
    ZYGOTE_ARG, command_layers, finish_steps, job, marker, namespaces_and_scoped_signals, run_tool,
};
use agent_runtime_test_support::{Need, skip};

use crate::harness::{Sandbox, alive_with, log_lines, observations};

/// The attacker, `attack MARKER` or `look MARKER`. Prints one line per
/// finding; `REACHED ...` lines are successes against a process that is
/// not the command's own.
pub(super) const PROBE: &str = r#"
import ctypes, os, signal, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
mode, marker = sys.argv[1], sys.argv[2]
# "init": PID 1 is not the command's own (the attempt's PID namespace, or
# the command's init): attack it as hard as a zygote.
hard_init = sys.argv[3:] == ["init"]
me = os.getpid()
# The PID namespace it runs in (its init is not even in its /proc).
try:
    print("INIT", os.readlink("/proc/self/ns/pid"), flush=True)
except OSError:
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

fn python() -> bool {
    Path::new("/usr/bin/python3").exists()
}

fn runner_pid(sb: &Sandbox) -> i64 {
    log_lines(sb)
        .into_iter()
        .find(|l| l["type"] == "attempt_started")
        .and_then(|l| l["pid"].as_i64())
        .expect("an attempt started")
}

fn attack(test: &str, without_namespaces: bool) {
    if !python() {
        skip(
            Need::Tool,
            test,
            "python3 is not installed at /usr/bin/python3",
        );
        return;
    }
    if !namespaces_and_scoped_signals(test) {
        return;
    }
    if without_namespaces && test_hooks().is_none() {
        skip(
            Need::Layer,
            test,
            "the test hooks are compiled out of this build",
        );
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
    // one PID namespace (its init, attacked, still there for the next
    // command); elsewhere each has its own.
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
