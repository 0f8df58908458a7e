//! The sandbox under `--sandbox required`: what must fail, and that cargo
//! still works. Tests that need a kernel feature skip with the reason when
//! this machine lacks it.

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use agent_runtime::cancel::CancelToken;
use agent_runtime::exec::{AllowList, ExecError, ExecRequest, run};
use agent_runtime::sandbox::{SandboxMode, probe};
use agent_runtime_test_support::{Need, skip};

/// Whether `required` can run here; prints why not otherwise.
fn required_available(test: &str) -> bool {
    let probe = probe();
    let reason = match (&probe.landlock_abi, &probe.network) {
        (Err(reason), _) => format!("no Landlock: {reason}"),
        (Ok(abi), _) if *abi < 3 => format!("Landlock ABI {abi} is below 3"),
        (_, Err(reason)) => format!("no network namespace: {reason}"),
        _ => return true,
    };
    skip(Need::Layer, test, &reason);
    false
}

fn exec(ws: &Path, mode: &str, argv: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .args(["exec", "--sandbox", mode, "--timeout", "60s", "--workspace"])
        .arg(ws)
        .arg("--")
        .args(argv)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A workspace with a sibling directory holding a secret.
struct Layout {
    _root: tempfile::TempDir,
    ws: std::path::PathBuf,
    sibling: std::path::PathBuf,
}

fn layout() -> Layout {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let sibling = root.path().join("sibling");
    std::fs::create_dir(&ws).unwrap();
    std::fs::create_dir(&sibling).unwrap();
    std::fs::write(sibling.join("secret.txt"), "top secret").unwrap();
    Layout {
        _root: root,
        ws,
        sibling,
    }
}

#[test]
fn required_reports_its_layers() {
    if !required_available("required_reports_its_layers") {
        return;
    }
    let l = layout();
    let out = exec(&l.ws, "required", &["true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let layers = text(&out);
    assert!(layers.contains("landlock-abi"), "{layers}");
    assert!(
        layers.contains("netns") && layers.contains("rlimits"),
        "{layers}"
    );
}

#[test]
fn writes_outside_the_workspace_fail() {
    if !required_available("writes_outside_the_workspace_fail") {
        return;
    }
    let l = layout();
    let outside = l.sibling.join("written");
    let script = format!(
        "echo a > {abs}; echo b > ../sibling/written; \
         ln -s ../sibling link && echo c > link/written; \
         echo d > inside; exit 0",
        abs = outside.display()
    );
    let out = exec(&l.ws, "required", &["sh", "-c", &script]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(!outside.exists(), "a write escaped the workspace: {report}");
    // Refused by Landlock, or not there at all in the command's own root.
    let refused = ["Permission denied", "No such file", "Directory nonexistent"]
        .iter()
        .map(|why| report.matches(why).count())
        .sum::<usize>();
    assert_eq!(refused, 3, "{report}");
    assert!(l.ws.join("inside").exists());
    assert!(l.ws.join("link").is_symlink());
}

#[test]
fn a_sibling_directory_is_not_readable() {
    if !required_available("a_sibling_directory_is_not_readable") {
        return;
    }
    let l = layout();
    let secret = l.sibling.join("secret.txt");
    let by_path = secret.display().to_string();
    for argv in [
        &["cat", by_path.as_str()][..],
        &["cat", "../sibling/secret.txt"],
        &["ls", "../sibling"],
    ] {
        let out = exec(&l.ws, "required", argv);
        let report = text(&out);
        assert_eq!(out.status.code(), Some(1), "{argv:?}: {report}");
        assert!(!report.contains("top secret"), "{report}");
        assert!(
            report.contains("Permission denied") || report.contains("No such file"),
            "{report}"
        );
    }
    // The same read works without the sandbox, so the test is meaningful.
    let out = exec(&l.ws, "off", &["cat", "../sibling/secret.txt"]);
    assert!(text(&out).contains("top secret"));
}

#[test]
fn tcp_and_udp_to_loopback_fail_without_network() {
    if !required_available("tcp_and_udp_to_loopback_fail_without_network") {
        return;
    }
    if !Path::new("/usr/bin/bash").exists() && !Path::new("/bin/bash").exists() {
        skip(
            Need::Tool,
            "tcp_and_udp_to_loopback_fail_without_network",
            "no bash for /dev/tcp",
        );
        return;
    }
    let l = layout();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tcp_port = tcp.local_addr().unwrap().port();
    let udp_port = udp.local_addr().unwrap().port();
    let script = format!(
        "echo hi > /dev/tcp/127.0.0.1/{tcp_port} && echo TCP-CONNECTED; \
         echo hi > /dev/udp/127.0.0.1/{udp_port} && echo UDP-SENT; exit 0"
    );
    let out = exec(&l.ws, "required", &["bash", "-c", &script]);
    let report = text(&out);
    assert!(!report.contains("TCP-CONNECTED"), "{report}");
    assert!(!report.contains("UDP-SENT"), "{report}");

    // Control: without the sandbox both reach the listeners.
    let out = exec(&l.ws, "off", &["bash", "-c", &script]);
    let report = text(&out);
    assert!(report.contains("TCP-CONNECTED"), "{report}");
    assert!(report.contains("UDP-SENT"), "{report}");
    let (mut conn, _) = tcp.accept().unwrap();
    let mut got = String::new();
    conn.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hi\n");
    udp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(udp.recv(&mut buf).unwrap(), 3);
}

#[test]
fn cargo_builds_and_tests_a_small_crate_inside_the_sandbox() {
    if !required_available("cargo_builds_and_tests_a_small_crate_inside_the_sandbox") {
        return;
    }
    let l = layout();
    std::fs::create_dir(l.ws.join("src")).unwrap();
    std::fs::write(
        l.ws.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        l.ws.join("src/lib.rs"),
        "pub fn add(a: u32, b: u32) -> u32 { a + b }\n\
         #[test]\nfn adds() { assert_eq!(add(2, 2), 4); }\n",
    )
    .unwrap();
    let out = exec(&l.ws, "required", &["cargo", "build", "--offline"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(l.ws.join("target/debug/libtiny.rlib").exists());
    let out = exec(
        &l.ws,
        "required",
        &["cargo", "test", "--offline", "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("1 passed"));
}

#[test]
fn core_dumps_are_off_and_file_size_is_capped() {
    if !required_available("core_dumps_are_off_and_file_size_is_capped") {
        return;
    }
    let l = layout();
    let out = exec(&l.ws, "required", &["sh", "-c", "ulimit -c; ulimit -n"]);
    assert!(
        text(&out).contains("--- stdout ---\n0\n4096\n"),
        "{}",
        text(&out)
    );

    let argv: Vec<String> = ["dd", "if=/dev/zero", "of=big", "bs=1M", "count=4"]
        .map(String::from)
        .to_vec();
    let allow = AllowList::program_any_args("dd").unwrap();
    let mut req = ExecRequest::new(argv, allow, l.ws.clone());
    req.sandbox.mode = SandboxMode::Required;
    req.sandbox.limits.file_size = Some(1 << 20);
    let outcome = run(&req, &CancelToken::new()).unwrap();
    assert!(!outcome.success());
    let size = std::fs::metadata(l.ws.join("big")).unwrap().len();
    assert!(size <= 1 << 20, "wrote {size} bytes");
}

#[test]
fn signals_to_processes_outside_the_sandbox_are_denied() {
    if !required_available("signals_to_processes_outside_the_sandbox_are_denied") {
        return;
    }
    if !matches!(probe().landlock_abi, Ok(abi) if abi >= 6) {
        skip(
            Need::Layer,
            "signals_to_processes_outside_the_sandbox_are_denied",
            "Landlock ABI < 6",
        );
        return;
    }
    let l = layout();
    let pid = std::process::id().to_string();
    let out = exec(&l.ws, "required", &["kill", "-0", &pid]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn a_denied_path_inside_a_grant_is_refused() {
    let l = layout();
    let allow = AllowList::program_any_args("true").unwrap();
    let mut req = ExecRequest::new(vec!["true".into()], allow, l.ws.clone());
    req.sandbox.mode = SandboxMode::Auto;
    req.sandbox.deny = vec![l.ws.join("acceptance")];
    if probe().landlock_abi.is_err() {
        skip(
            Need::Layer,
            "a_denied_path_inside_a_grant_is_refused",
            "no Landlock",
        );
        return;
    }
    let err = run(&req, &CancelToken::new()).unwrap_err();
    assert!(matches!(err, ExecError::Sandbox(_)), "{err}");
    // Denying a directory that merely contains the workspace is fine.
    req.sandbox.deny = vec![l.sibling.clone()];
    assert!(run(&req, &CancelToken::new()).unwrap().success());
}

#[test]
fn doctor_reports_every_layer_and_what_auto_uses() {
    let out = Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = text(&out);
    for prefix in [
        "landlock: ",
        "network: ",
        "rlimits: ",
        "pidns: ",
        "mntns: ",
        "cgroup: ",
        "seccomp: ",
        "auto=",
        "required=",
    ] {
        assert!(
            report.lines().any(|l| l.starts_with(prefix)),
            "no {prefix} in:\n{report}"
        );
    }
}
