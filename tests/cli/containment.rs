//! Nothing outlives its command, and limits hold: tried as an attacker
//! would, through the real binary. Daemons are looked for in `/proc` after
//! the fact; a fork bomb and a huge allocation hit their limits for real.
//! Each test needs the PID and mount namespaces and a cgroup, which
//! `required` checks; where they are missing the test says why and skips.

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use agent_runtime_test_support::{Need, skip};

use crate::harness::{BIN, Sandbox, alive_with};

/// Whether `exec --sandbox required` works here; prints why not.
fn required_available(test: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let out = exec(dir.path(), &["--", "true"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let ok = out.status.success() && text.contains("pidns") && text.contains("cgroup-v");
    if !ok {
        skip(
            Need::Layer,
            test,
            &format!(
                "the sandbox's required layers are not all available here: {}{}",
                text,
                String::from_utf8_lossy(&out.stderr)
            ),
        );
    }
    ok
}

fn exec(ws: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command
        .args(["exec", "--sandbox", "required", "--workspace"])
        .arg(ws);
    if !args.contains(&"--timeout") {
        command.args(["--timeout", "60s"]);
    }
    command.args(args).output().unwrap()
}

fn field(out: &Output, key: &str) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("{key}=");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("no {key}= in:\n{text}"))
}

/// A `sleep` argument nobody else uses, so its processes can be found.
fn marker() -> String {
    format!(
        "{}.{}",
        900_000 + std::process::id() % 90_000,
        rand_digits()
    )
}

fn rand_digits() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(7, |d| d.subsec_nanos() % 1_000_000)
}

/// A shell line that leaves a `setsid` daemon and a double-forked one
/// behind, both sleeping `marker` seconds, and exits at once.
fn daemons(marker: &str) -> String {
    format!("setsid sleep {marker} & (sh -c 'sleep {marker} &' &) ; exit 0")
}

#[test]
fn daemons_die_with_the_command_that_started_them() {
    if !required_available("daemons_die_with_the_command_that_started_them") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = marker();
    let out = exec(
        ws.path(),
        &["--allow", "sh **", "--", "sh", "-c", &daemons(&marker)],
    );
    assert_eq!(field(&out, "exit"), "0", "{out:?}");
    assert_eq!(
        field(&out, "leaked"),
        "true",
        "the daemons existed: {out:?}"
    );
    assert_eq!(alive_with(&marker), Vec::<i32>::new(), "a daemon survived");
}

#[test]
fn daemons_started_by_verify_and_acceptance_do_not_survive_the_job() {
    if !required_available("daemons_started_by_verify_and_acceptance_do_not_survive_the_job") {
        return;
    }
    let sb = Sandbox::new();
    let (verify_marker, accept_marker) = (marker(), format!("{}1", marker()));
    let source = sb.path().join("src-tree");
    let acceptance = sb.path().join("acceptance");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::create_dir_all(&acceptance).unwrap();
    std::fs::write(source.join("README"), "fix me\n").unwrap();
    let spawn = |marker: &str| daemons(marker).replace("exit 0", "true");
    std::fs::write(
        source.join("verify.sh"),
        format!("{}\ntrue\n", spawn(&verify_marker)),
    )
    .unwrap();
    std::fs::write(
        acceptance.join("check.sh"),
        format!("{}\ntest -f fixed.txt\n", spawn(&accept_marker)),
    )
    .unwrap();
    let script = sb.path().join("script.jsonl");
    std::fs::write(
        &script,
        "{\"kind\":\"write_file\",\"path\":\"fixed.txt\",\"content\":\"ok\\n\"}\n\
         {\"kind\":\"finish\",\"summary\":\"done\"}\n",
    )
    .unwrap();
    let manifest = sb.path().join("daemon.toml");
    std::fs::write(
        &manifest,
        r#"prompt = "Create fixed.txt."
source = "src-tree"
editable = ["*.txt"]
allow = ["sh **"]
verify = ["sh", "verify.sh"]

[acceptance]
dir = "acceptance"
command = ["sh", "check.sh"]

[limits]
attempts = 1

[sandbox]
mode = "required"

[provider]
kind = "script"
script = "script.jsonl"
"#,
    )
    .unwrap();
    let run = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        alive_with(&verify_marker),
        Vec::<i32>::new(),
        "verify's daemon survived"
    );
    assert_eq!(
        alive_with(&accept_marker),
        Vec::<i32>::new(),
        "acceptance's daemon survived"
    );
}

#[test]
fn unix_sockets_of_earlier_commands_and_of_the_host_cannot_be_reached() {
    let test = "unix_sockets_of_earlier_commands_and_of_the_host_cannot_be_reached";
    if !required_available(test) {
        return;
    }
    if Command::new("python3").arg("-V").output().is_err() {
        skip(Need::Tool, test, "python3 is not installed");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    // A server on the host, outside the workspace, answering a secret.
    let host = tempfile::tempdir().unwrap();
    let host_socket = host.path().join("host.sock");
    let listener = UnixListener::bind(&host_socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let served = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut served = 0;
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    let _ = stream.write_all(b"host-secret");
                    served += 1;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        served
    });
    // A server left behind in the workspace by a first command.
    let server = "import os, socket\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.bind('left.sock'); s.listen(5)\n\
        if os.fork() == 0:\n    os.setsid()\n    while True:\n        c, _ = s.accept(); c.sendall(b'left-secret'); c.close()\n";
    let out = exec(
        ws.path(),
        &["--allow", "python3 **", "--", "python3", "-c", server],
    );
    assert_eq!(field(&out, "exit"), "0", "{out:?}");
    assert!(ws.path().join("left.sock").exists());
    let client = format!(
        "import socket\n\
         for path in ['left.sock', {:?}]:\n\
         \x20   try:\n\
         \x20       s = socket.socket(socket.AF_UNIX); s.connect(path); print('READ', s.recv(64))\n\
         \x20   except OSError as e:\n\
         \x20       print('blocked', path, e)\n",
        host_socket.to_str().unwrap()
    );
    let out = exec(
        ws.path(),
        &["--allow", "python3 **", "--", "python3", "-c", &client],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("READ"), "a socket answered: {text}");
    assert_eq!(text.matches("blocked").count(), 2, "{text}");
    // The host server is still there and works from outside the sandbox.
    let mut stream = std::os::unix::net::UnixStream::connect(&host_socket).unwrap();
    let mut got = String::new();
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "host-secret");
    drop(served);
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit() {
    if !required_available("a_fork_bomb_stops_at_the_process_limit") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = marker();
    let bomb = format!("b() {{ sleep {marker} & b | b; }}; b");
    let start = Instant::now();
    let out = exec(
        ws.path(),
        &[
            "--processes",
            "64",
            "--timeout",
            "20s",
            "--allow",
            "sh **",
            "--",
            "sh",
            "-c",
            &bomb,
        ],
    );
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "the runner was not responsive: {:?}",
        start.elapsed()
    );
    assert!(out.status.code().is_some(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("sandbox=") && text.contains("cgroup-v"),
        "{text}"
    );
    assert_eq!(
        alive_with(&marker),
        Vec::<i32>::new(),
        "bomb processes survived"
    );
}

#[test]
fn a_huge_allocation_is_killed_at_the_memory_limit() {
    let test = "a_huge_allocation_is_killed_at_the_memory_limit";
    if !required_available(test) {
        return;
    }
    if Command::new("python3").arg("-V").output().is_err() {
        skip(Need::Tool, test, "python3 is not installed");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let hog =
        "x = bytearray(8 << 30)\nfor i in range(0, len(x), 4096): x[i] = 1\nprint('survived')";
    let out = exec(
        ws.path(),
        &[
            "--memory",
            "512MiB",
            "--allow",
            "python3 **",
            "--",
            "python3",
            "-c",
            hog,
        ],
    );
    assert_eq!(field(&out, "oom"), "true", "{out:?}");
    assert_eq!(field(&out, "signal"), "9", "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("survived"));
}

#[test]
fn an_inherited_descriptor_does_not_reach_the_command() {
    if !required_available("an_inherited_descriptor_does_not_reach_the_command") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "fd-secret").unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // The shell opens fd 7 without close-on-exec and execs the runtime
    // with it; the command tries to read it.
    let line = format!(
        "exec 7<{secret}; exec {BIN} exec --sandbox required --workspace {ws} --allow 'sh **' -- sh -c 'cat <&7; ls /proc/self/fd'",
        secret = secret.display(),
        ws = ws.display()
    );
    let out = Command::new("sh").args(["-c", &line]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("fd-secret"), "{text}");
    let stdout = text.split("--- stdout ---").nth(1).unwrap_or_default();
    let fds: Vec<&str> = stdout
        .split("--- stderr ---")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert!(!fds.contains(&"7"), "fd 7 reached the command: {text}");
}

#[test]
fn a_timed_out_command_gets_sigterm_first_and_its_handler_runs() {
    if !required_available("a_timed_out_command_gets_sigterm_first_and_its_handler_runs") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out = exec(
        ws.path(),
        &[
            "--timeout",
            "1s",
            "--allow",
            "sh **",
            "--",
            "sh",
            "-c",
            "trap 'echo handled-term; exit 7' TERM; sleep 30 & wait",
        ],
    );
    assert_eq!(field(&out, "timed_out"), "true", "{out:?}");
    assert_eq!(field(&out, "exit"), "7", "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("handled-term"));
}

#[test]
fn other_processes_are_hidden_and_the_host_root_is_not_there() {
    if !required_available("other_processes_are_hidden_and_the_host_root_is_not_there") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out = exec(
        ws.path(),
        &[
            "--allow",
            "sh **",
            "--",
            "sh",
            "-c",
            "ls /proc | grep -c '^[0-9]'; ls /run /var /home 2>&1; echo $HOME",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stdout = text.split("--- stdout ---").nth(1).unwrap_or_default();
    let mut lines = stdout.lines().filter(|l| !l.is_empty());
    let pids: u32 = lines.next().unwrap_or("0").trim().parse().unwrap_or(99);
    // sh, ls and grep at most (sh may exec the last one).
    assert!(pids <= 4, "saw {pids} processes: {text}");
    assert_eq!(
        stdout.matches("No such file or directory").count(),
        3,
        "{text}"
    );
    assert!(stdout.contains("/tmp/scratch/home"), "{text}");
}
