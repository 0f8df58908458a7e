//! Command cgroups on this machine's real layout (whatever
//! `cgroup_support()` finds): limits hold, kills reach everything, OOM
//! kills are reported, directories go away. Each test prints
//! `skipping TEST: ...` and passes where there is no cgroup support or
//! python3 (fails instead under `AGENT_RUNTIME_REQUIRE_LAYERS=1` or
//! `AGENT_RUNTIME_REQUIRE_TOOLS=1`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use agent_runtime_sandbox::sandbox::{
    CgroupLimits, CgroupSupport, CommandCgroup, cgroup_support, enter_from_child,
};
use agent_runtime_test_support::{Need, require_layer, skip};

const MIB: u64 = 1 << 20;

/// This machine's cgroup support, or `None` (`test` skips, saying why).
fn support(test: &str) -> Option<&'static CgroupSupport> {
    let support = require_layer(
        test,
        cgroup_support()
            .as_ref()
            .map_err(|reason| format!("no cgroup support: {reason}")),
    )?;
    eprintln!("{}", support.describe());
    Some(support)
}

/// The real Python interpreter (not a version-manager shim that would
/// spawn helpers inside the limited cgroup), or `None` (`test` skips,
/// saying why).
fn python(test: &str) -> Option<&'static str> {
    let found = real_python();
    if found.is_none() {
        skip(
            Need::Tool,
            test,
            "no python3 that reports its sys.executable",
        );
    }
    found
}

fn real_python() -> Option<&'static str> {
    static PYTHON: OnceLock<Option<String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()?;
            let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
            (out.status.success() && !path.is_empty()).then_some(path)
        })
        .as_deref()
}

/// `python -c code` inside `cgroup`, stdout piped.
fn spawn_in(cgroup: &CommandCgroup, python: &str, code: &str) -> Child {
    let fds = cgroup.enter_fds();
    let mut command = Command::new(python);
    command
        .args(["-c", code])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    // SAFETY: the closure only calls `enter_from_child`, which makes
    // write(2) calls on copied plain data and does not allocate.
    unsafe {
        command.pre_exec(move || enter_from_child(&fds));
    }
    command.spawn().unwrap()
}

fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    line
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, Some("Z" | "X") | None)
}

/// Forks until the first failure, prints its errno, and forks on; so does
/// every child, retrying each millisecond once forks fail.
const BOMB: &str = "
import os, time
def bomb():
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.001)
while True:
    try:
        if os.fork() == 0:
            bomb()
    except OSError as e:
        print(e.errno, flush=True)
        bomb()
";

fn assert_removed(dirs: &[PathBuf]) {
    for dir in dirs {
        assert!(!dir.exists(), "{} still exists", dir.display());
    }
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit_and_dies_whole() {
    let test = "a_fork_bomb_stops_at_the_process_limit_and_dies_whole";
    let Some(support) = support(test) else { return };
    let Some(python) = python(test) else { return };
    let limits = CgroupLimits {
        memory: Some(512 * MIB),
        processes: Some(20),
    };
    let cgroup = CommandCgroup::create(support, &limits).unwrap();
    let mut child = spawn_in(&cgroup, python, BOMB);
    let line = first_line(&mut child);
    assert_eq!(line.trim(), libc::EAGAIN.to_string(), "{line}");
    let population = cgroup.population();
    assert!((2..=20).contains(&population), "{population}");

    // Every process keeps forking while the kill runs.
    assert!(cgroup.kill_all());
    assert_eq!(cgroup.population(), 0);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    assert!(!cgroup.oom_killed());
    let dirs = cgroup.dirs().to_vec();
    cgroup.remove().unwrap();
    assert_removed(&dirs);
}

#[test]
fn the_oom_killer_is_reported_only_where_it_fired() {
    let test = "the_oom_killer_is_reported_only_where_it_fired";
    let Some(support) = support(test) else { return };
    let Some(python) = python(test) else { return };
    let limits = CgroupLimits {
        memory: Some(64 * MIB),
        processes: Some(16),
    };
    // Bytes multiplied out are written, so every page is touched.
    let big = CommandCgroup::create(support, &limits).unwrap();
    let mut child = spawn_in(&big, python, "b = b'x' * (256 << 20)");
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    assert!(big.oom_killed());

    let small = CommandCgroup::create(support, &limits).unwrap();
    let mut child = spawn_in(&small, python, "b = b'x' * (8 << 20)");
    assert!(child.wait().unwrap().success());
    assert!(!small.oom_killed());

    let dirs: Vec<PathBuf> = big.dirs().iter().chain(small.dirs()).cloned().collect();
    big.remove().unwrap();
    small.remove().unwrap();
    assert_removed(&dirs);
}

#[test]
fn a_double_forked_session_leader_is_killed_too() {
    let test = "a_double_forked_session_leader_is_killed_too";
    let Some(support) = support(test) else { return };
    let Some(python) = python(test) else { return };
    let limits = CgroupLimits {
        memory: Some(256 * MIB),
        processes: Some(16),
    };
    let cgroup = CommandCgroup::create(support, &limits).unwrap();
    let escape = "
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        time.sleep(60)
    os._exit(0)
os.wait()
";
    let mut child = spawn_in(&cgroup, python, escape);
    let pid: i32 = first_line(&mut child).trim().parse().unwrap();
    // The leader and the middle process are gone; the grandchild is in
    // its own session, outside the command's process group.
    assert!(child.wait().unwrap().success());
    assert!(alive(pid));
    let name = cgroup.dirs()[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    assert!(own.contains(&name), "{own}");
    assert_eq!(cgroup.population(), 1);

    assert!(cgroup.kill_all());
    assert!(!alive(pid));
    assert_eq!(cgroup.population(), 0);
    let dirs = cgroup.dirs().to_vec();
    drop(cgroup);
    assert_removed(&dirs);
}

#[test]
fn an_exited_unreaped_leader_is_not_counted() {
    let Some(support) = support("an_exited_unreaped_leader_is_not_counted") else {
        return;
    };
    let cgroup = CommandCgroup::create(support, &CgroupLimits::default()).unwrap();
    let fds = cgroup.enter_fds();
    let mut command = Command::new("true");
    // SAFETY: the closure only calls `enter_from_child`, which makes
    // write(2) calls on copied plain data and does not allocate.
    unsafe {
        command.pre_exec(move || enter_from_child(&fds));
    }
    let mut child = command.spawn().unwrap();
    // Wait for the exit but leave the zombie, as the executor does.
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let flags = nix::sys::wait::WaitPidFlag::WEXITED | nix::sys::wait::WaitPidFlag::WNOWAIT;
    nix::sys::wait::waitid(nix::sys::wait::Id::Pid(pid), flags).unwrap();
    assert_eq!(cgroup.population(), 0);
    assert!(cgroup.kill_all());
    let dirs = cgroup.dirs().to_vec();
    cgroup.remove().unwrap();
    assert_removed(&dirs);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_command_in_a_removed_cgroup_does_not_start() {
    let Some(support) = support("a_command_in_a_removed_cgroup_does_not_start") else {
        return;
    };
    let cgroup = CommandCgroup::create(support, &CgroupLimits::default()).unwrap();
    let fds = cgroup.enter_fds();
    for dir in cgroup.dirs().iter().rev() {
        std::fs::remove_dir(dir).unwrap();
    }
    let mut command = Command::new("true");
    // SAFETY: as above; the descriptors are still open (the cgroup value
    // lives), only their directories are gone.
    unsafe {
        command.pre_exec(move || enter_from_child(&fds));
    }
    assert!(command.spawn().is_err());
    // Dropping it again is harmless.
    drop(cgroup);
}
