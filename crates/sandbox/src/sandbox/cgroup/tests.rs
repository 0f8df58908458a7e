//! The v2 kill paths (`cgroup.kill`, freeze + kill + thaw, waiting on
//! `cgroup.events`) on a real v2 hierarchy without controllers, such as the
//! `unified` one of a hybrid host. Limits are not tested here (there are no
//! controllers); the v1 and whole-API tests are in `tests/cgroup.rs`.

use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use agent_runtime_test_support::{Need, require_layer, skip};

use super::support::{CgroupSupport, Kind, V1Dirs};
use super::{CgroupLimits, CommandCgroup, enter_from_child};

/// A throwaway v2 parent directory, removed on drop.
struct Parent(PathBuf);

impl Drop for Parent {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Why there is no v2 parent for these tests.
#[derive(Debug, thiserror::Error)]
enum NoParent {
    #[error("not root")]
    NotRoot,
    #[error(transparent)]
    Mountinfo(std::io::Error),
    #[error("no cgroup2 mount")]
    NoMount,
    #[error("cannot create {}: {source}", .dir.display())]
    Create {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A fresh parent on the v2 hierarchy (the unified one on a hybrid host),
/// or why there is none.
fn v2_parent(tag: &str) -> Result<Parent, NoParent> {
    if !nix::unistd::geteuid().is_root() {
        return Err(NoParent::NotRoot);
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").map_err(NoParent::Mountinfo)?;
    let mount = mountinfo
        .lines()
        .filter_map(|line| line.split_once(" - "))
        .find(|(_, right)| right.starts_with("cgroup2 "))
        .and_then(|(left, _)| left.split(' ').nth(4))
        .ok_or(NoParent::NoMount)?;
    let dir = PathBuf::from(mount).join(format!("agent-runtime-test-{}-{tag}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|source| NoParent::Create {
        dir: dir.clone(),
        source,
    })?;
    Ok(Parent(dir))
}

/// `sh -c script` inside `cgroup`, stdout piped; returns once the script
/// printed its first line.
fn spawn_in(cgroup: &CommandCgroup, script: &str) -> Child {
    let fds = cgroup.enter_fds();
    let mut command = Command::new("sh");
    command.args(["-c", script]).stdout(Stdio::piped());
    // SAFETY: the closure only calls `enter_from_child`, which makes
    // write(2) calls on copied plain data and does not allocate.
    unsafe {
        command.pre_exec(move || enter_from_child(&fds));
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    child
}

const FORKS: &str = "sleep 30 & setsid sleep 30 & (sleep 30 &) ; echo ready; wait";

#[test]
fn v2_kill_file_reaches_every_process() {
    let Some(parent) = require_layer("v2_kill_file_reaches_every_process", v2_parent("kill"))
    else {
        return;
    };
    let support = CgroupSupport::v2_for_tests(parent.0.clone());
    let cgroup = CommandCgroup::create(&support, &CgroupLimits::default()).unwrap();
    let mut child = spawn_in(&cgroup, FORKS);
    assert_eq!(cgroup.population(), 4);
    assert!(cgroup.kill_all());
    assert_eq!(cgroup.population(), 0);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    let dirs = cgroup.dirs().to_vec();
    cgroup.remove().unwrap();
    assert!(dirs.iter().all(|dir| !dir.exists()));
}

#[test]
fn v2_freeze_path_reaches_every_process() {
    let Some(parent) = require_layer("v2_freeze_path_reaches_every_process", v2_parent("freeze"))
    else {
        return;
    };
    let support = CgroupSupport::v2_for_tests(parent.0.clone());
    let cgroup = CommandCgroup::create(&support, &CgroupLimits::default()).unwrap();
    let mut child = spawn_in(&cgroup, FORKS);
    assert!(cgroup.kill_by_freezing());
    assert_eq!(cgroup.population(), 0);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    // Thawed again, so a later command in a reused directory would run.
    let freeze = std::fs::read_to_string(cgroup.dirs()[0].join("cgroup.freeze")).unwrap();
    assert_eq!(freeze.trim(), "0");
}

#[test]
fn v2_an_exited_command_is_removed_at_once() {
    let Some(parent) = require_layer(
        "v2_an_exited_command_is_removed_at_once",
        v2_parent("exited"),
    ) else {
        return;
    };
    let support = CgroupSupport::v2_for_tests(parent.0.clone());
    let cgroup = CommandCgroup::create(&support, &CgroupLimits::default()).unwrap();
    let mut child = spawn_in(&cgroup, "echo done");
    assert!(child.wait().unwrap().success());
    assert_eq!(cgroup.population(), 0);
    assert!(cgroup.kill_all());
    cgroup.remove().unwrap();
}

/// The real Python interpreter (not a version-manager shim), or `None`.
fn python() -> Option<String> {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !path.is_empty()).then_some(path)
}

#[test]
fn v1_without_a_freezer_repeats_the_kill_until_empty() {
    let test = "v1_without_a_freezer_repeats_the_kill_until_empty";
    let v1 = match super::cgroup_support() {
        Ok(CgroupSupport {
            kind: Kind::V1(v1), ..
        }) => v1.clone(),
        Ok(_) => return skip(Need::Layer, test, "not cgroup v1"),
        Err(reason) => return skip(Need::Layer, test, &reason.to_string()),
    };
    let Some(python) = python() else {
        return skip(Need::Tool, test, "no python3");
    };
    let support = CgroupSupport {
        kind: Kind::V1(V1Dirs {
            freezer: None,
            ..v1
        }),
        note: None,
    };
    let limits = CgroupLimits {
        memory: Some(512 << 20),
        processes: Some(20),
    };
    let cgroup = CommandCgroup::create(&support, &limits).unwrap();
    assert_eq!(cgroup.dirs().len(), 2);
    let fds = cgroup.enter_fds();
    // Every process forks on and on; the first failure is reported.
    let bomb = "
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
    let mut command = Command::new(python);
    command.args(["-c", bomb]).stdout(Stdio::piped());
    // SAFETY: the closure only calls `enter_from_child`, which makes
    // write(2) calls on copied plain data and does not allocate.
    unsafe {
        command.pre_exec(move || enter_from_child(&fds));
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), libc::EAGAIN.to_string());
    assert!(cgroup.kill_all());
    assert_eq!(cgroup.population(), 0);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    cgroup.remove().unwrap();
}
