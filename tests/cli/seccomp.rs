//! The seccomp layer, the per-command session keyring and the blank
//! `/proc/1`, through the real binary: a probe calls every denied system
//! call under `--sandbox required` and gets `EPERM` (`ENOSYS` for
//! `clone3`) while threads, `cargo test` and pytest still work; a key one
//! attempt stores is gone for the next, a key the host holds is out of
//! reach; the namespace's init shows nothing of the runner. Without the
//! layers the tests skip with the reason (or fail under
//! `AGENT_RUNTIME_REQUIRE_LAYERS=1`).

use std::path::Path;
use std::process::{Command, Output};

use agent_runtime::sandbox::probe;
use nix::libc;

use crate::harness::{BIN, Sandbox, layer_missing, log_lines};

/// Whether `required` runs here with the seccomp layer; says why not.
fn seccomp_available(test: &str) -> bool {
    let probe = probe();
    let missing = [
        ("seccomp", probe.seccomp.as_ref().err()),
        ("landlock", probe.landlock_abi.as_ref().err()),
        ("pid and mount namespaces", probe.namespaces.as_ref().err()),
        ("network namespace", probe.network.as_ref().err()),
    ]
    .into_iter()
    .find_map(|(layer, err)| err.map(|e| format!("no {layer}: {e}")));
    match missing {
        Some(reason) => {
            layer_missing(test, &reason);
            false
        }
        None => true,
    }
}

fn python() -> Option<&'static str> {
    let found = Path::new("/usr/bin/python3").exists();
    if !found {
        eprintln!("skipping: /usr/bin/python3 is not installed");
    }
    found.then_some("python3")
}

fn exec(ws: &Path, argv: &[&str]) -> Output {
    Command::new(BIN)
        .args(["exec", "--sandbox", "required", "--timeout", "120s"])
        .arg("--workspace")
        .arg(ws)
        .arg("--")
        .args(argv)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A Python helper that calls system calls by number through ctypes:
/// `call(name, nr, *args)` prints `CALL name result errno`.
const CALLER: &str = r#"import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def arg(a):
    return ctypes.c_long(a) if isinstance(a, int) else a
def call(name, nr, *args):
    sys.stdout.flush()
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[arg(a) for a in args])
    e = ctypes.get_errno()
    if r == 0 and name.startswith("clone"):
        os._exit(0)
    if r > 0 and name.startswith("clone"):
        os.waitpid(r, 0)
    print("CALL", name, r, errno.errorcode.get(e, e) if r < 0 else "-", flush=True)
"#;

/// Each denied call with harmless arguments (NULL pointers, bad
/// descriptors, paths that do not exist): without the filter most would
/// fail differently or succeed without effect.
fn denied_calls() -> Vec<(&'static str, libc::c_long, &'static str)> {
    vec![
        ("keyctl", libc::SYS_keyctl, "0, -4, 0"),
        (
            "add_key",
            libc::SYS_add_key,
            "b'user', b'probe', b'x', 1, -3",
        ),
        (
            "request_key",
            libc::SYS_request_key,
            "b'user', b'probe', None, 0",
        ),
        ("bpf", libc::SYS_bpf, "0, None, 0"),
        (
            "perf_event_open",
            libc::SYS_perf_event_open,
            "None, 0, -1, -1, 0",
        ),
        ("userfaultfd", libc::SYS_userfaultfd, "0"),
        ("io_uring_setup", libc::SYS_io_uring_setup, "0, None"),
        (
            "io_uring_enter",
            libc::SYS_io_uring_enter,
            "-1, 0, 0, 0, None, 0",
        ),
        (
            "io_uring_register",
            libc::SYS_io_uring_register,
            "-1, 0, None, 0",
        ),
        ("ptrace", libc::SYS_ptrace, "3, 1, 0, 0"),
        (
            "process_vm_readv",
            libc::SYS_process_vm_readv,
            "os.getpid(), None, 0, None, 0, 0",
        ),
        (
            "process_vm_writev",
            libc::SYS_process_vm_writev,
            "os.getpid(), None, 0, None, 0, 0",
        ),
        (
            "mount",
            libc::SYS_mount,
            "None, b'/nonexistent-probe', None, 0, None",
        ),
        ("umount2", libc::SYS_umount2, "b'/nonexistent-probe', 0"),
        (
            "pivot_root",
            libc::SYS_pivot_root,
            "b'/nonexistent-a', b'/nonexistent-b'",
        ),
        ("unshare", libc::SYS_unshare, "0"),
        ("setns", libc::SYS_setns, "-1, 0"),
        ("fsopen", libc::SYS_fsopen, "b'nonexistentfs', 0"),
        ("fsconfig", libc::SYS_fsconfig, "-1, 0, None, None, 0"),
        ("fsmount", libc::SYS_fsmount, "-1, 0, 0"),
        ("fspick", libc::SYS_fspick, "-1, b'', 0"),
        ("move_mount", libc::SYS_move_mount, "-1, b'', -1, b'', 0"),
        (
            "open_tree",
            libc::SYS_open_tree,
            "-1, b'/nonexistent-probe', 0",
        ),
        (
            "mount_setattr",
            libc::SYS_mount_setattr,
            "-1, b'', 0, None, 0",
        ),
        (
            "open_by_handle_at",
            libc::SYS_open_by_handle_at,
            "-1, None, 0",
        ),
        (
            "name_to_handle_at",
            libc::SYS_name_to_handle_at,
            "-100, b'.', None, None, 0",
        ),
        ("kexec_load", libc::SYS_kexec_load, "0, 0, None, 0xffffffff"),
        (
            "kexec_file_load",
            libc::SYS_kexec_file_load,
            "-1, -1, 0, None, 0xffffffff",
        ),
        ("init_module", libc::SYS_init_module, "None, 0, b''"),
        ("finit_module", libc::SYS_finit_module, "-1, b'', 0"),
        (
            "delete_module",
            libc::SYS_delete_module,
            "b'nonexistent_probe', 0",
        ),
        ("reboot", libc::SYS_reboot, "0, 0, 0, None"),
        ("swapon", libc::SYS_swapon, "b'/nonexistent-probe', 0"),
        ("swapoff", libc::SYS_swapoff, "b'/nonexistent-probe'"),
        ("acct", libc::SYS_acct, "b'/nonexistent-probe'"),
        ("syslog", libc::SYS_syslog, "10, None, 0"),
        ("settimeofday", libc::SYS_settimeofday, "None, None"),
        ("clock_settime", libc::SYS_clock_settime, "0, None"),
        ("clock_adjtime", libc::SYS_clock_adjtime, "0, None"),
        (
            "adjtimex",
            libc::SYS_adjtimex,
            "ctypes.create_string_buffer(512)",
        ),
        ("personality_no_aslr", libc::SYS_personality, "0x0040000"),
        (
            "clone_newuser",
            libc::SYS_clone,
            "0x10000000 | 17, 0, 0, 0, 0",
        ),
        (
            "clone_newns",
            libc::SYS_clone,
            "0x00020000 | 17, 0, 0, 0, 0",
        ),
        (
            "clone_newpid",
            libc::SYS_clone,
            "0x20000000 | 17, 0, 0, 0, 0",
        ),
        (
            "clone_newnet",
            libc::SYS_clone,
            "0x40000000 | 17, 0, 0, 0, 0",
        ),
    ]
}

/// Calls through another ABI: x32 numbers, and i386's `int 0x80` from
/// machine code in a forked child (which a kernel without i386 support
/// kills instead).
const OTHER_ABIS: &str = r#"
call("x32_getpid", 0x40000000 | 39)
import mmap
code = bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
i386 = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
sys.stdout.flush()
child = os.fork()
if child == 0:
    r = i386()
    print("CALL i386_getpid", r, errno.errorcode.get(-r, -r) if r < 0 else "-", flush=True)
    os._exit(0)
os.waitpid(child, 0)
"#;

/// What must keep working: the default and query personalities, a plain
/// fork through `clone`, threads, and starting programs.
const ALLOWED: &str = r#"
call("personality_query", __PERSONALITY__, 0xffffffff)
call("personality_default", __PERSONALITY__, 0)
call("clone_plain", __CLONE__, 17, 0, 0, 0, 0)
call("getpid", __GETPID__)
import threading, subprocess
done = []
threads = [threading.Thread(target=lambda: done.append(1)) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print("THREADS", len(done))
print("SUBPROCESS", subprocess.run(["true"]).returncode)
"#;

#[test]
fn every_denied_system_call_gets_eperm_and_clone3_enosys() {
    let test = "every_denied_system_call_gets_eperm_and_clone3_enosys";
    if !seccomp_available(test) {
        return;
    }
    let Some(python) = python() else { return };
    let ws = tempfile::tempdir().unwrap();
    let mut script = CALLER.to_string();
    for (name, nr, args) in denied_calls() {
        script.push_str(&format!("call({name:?}, {nr}, {args})\n"));
    }
    script.push_str(&format!(
        "call(\"clone3\", {}, None, 0)\n",
        libc::SYS_clone3
    ));
    if cfg!(target_arch = "x86_64") {
        script.push_str(OTHER_ABIS);
    }
    script.push_str(
        &ALLOWED
            .replace("__PERSONALITY__", &libc::SYS_personality.to_string())
            .replace("__CLONE__", &libc::SYS_clone.to_string())
            .replace("__GETPID__", &libc::SYS_getpid.to_string()),
    );
    std::fs::write(ws.path().join("probe.py"), script).unwrap();
    let out = exec(ws.path(), &[python, "probe.py"]);
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("sandbox=") && l.contains("seccomp")),
        "{text}"
    );
    assert!(text.contains("resolved=/usr/bin/python3"), "{text}");
    let result = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("CALL {name} ")))
            .unwrap_or_else(|| panic!("no result for {name}:\n{text}"))
            .to_string()
    };
    for (name, _, _) in denied_calls() {
        assert_eq!(result(name), "-1 EPERM", "{name}:\n{text}");
    }
    assert_eq!(result("clone3"), "-1 ENOSYS", "{text}");
    if cfg!(target_arch = "x86_64") {
        assert_eq!(result("x32_getpid"), "-1 EPERM", "{text}");
        assert_eq!(result("i386_getpid"), "-1 EPERM", "{text}");
    }
    for allowed in ["personality_query", "personality_default", "getpid"] {
        assert!(result(allowed).ends_with(" -"), "{allowed}:\n{text}");
    }
    assert!(!result("clone_plain").starts_with("-1"), "{text}");
    assert!(text.contains("THREADS 8"), "{text}");
    assert!(text.contains("SUBPROCESS 0"), "{text}");
}

#[test]
fn threads_cargo_test_and_pytest_still_work_under_the_filter() {
    let test = "threads_cargo_test_and_pytest_still_work_under_the_filter";
    if !seccomp_available(test) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        "[package]\nname = \"threads\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("src/lib.rs"),
        "#[test]\nfn threads_and_a_child() {\n\
         let handles: Vec<_> = (0..8).map(|i| std::thread::spawn(move || i * 2)).collect();\n\
         let sum: i32 = handles.into_iter().map(|h| h.join().unwrap()).sum();\n\
         assert_eq!(sum, 56);\n\
         assert!(std::process::Command::new(\"true\").status().unwrap().success());\n}\n",
    )
    .unwrap();
    let out = exec(ws.path(), &["cargo", "test", "--offline", "--quiet"]);
    let text = stdout(&out);
    assert!(
        text.contains("exit=0") && text.contains("1 passed"),
        "{text}"
    );
    assert!(text.contains("seccomp"), "{text}");

    if Command::new("/usr/bin/python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .map_or(true, |o| !o.status.success())
    {
        eprintln!("skipping the pytest half of {test}: no pytest for /usr/bin/python3");
        return;
    }
    std::fs::write(
        ws.path().join("test_threads.py"),
        "import subprocess, threading\n\
         def test_threads_and_a_child():\n\
         \x20   out = []\n\
         \x20   ts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]\n\
         \x20   [t.start() for t in ts]\n\
         \x20   [t.join() for t in ts]\n\
         \x20   assert sorted(out) == list(range(8))\n\
         \x20   assert subprocess.run(['true']).returncode == 0\n",
    )
    .unwrap();
    let out = exec(
        ws.path(),
        &[
            "python3",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_threads.py",
        ],
    );
    let text = stdout(&out);
    assert!(
        text.contains("exit=0") && text.contains("1 passed"),
        "{text}"
    );
}

#[test]
fn proc_1_shows_nothing_of_the_runner() {
    let test = "proc_1_shows_nothing_of_the_runner";
    if !seccomp_available(test) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = format!("runner-marker-{}", std::process::id());
    let script = format!(
        "cat /proc/1/cmdline; echo; cat /proc/1/environ; echo; cat /proc/1/comm; : {marker}"
    );
    let out = Command::new(BIN)
        .args(["exec", "--sandbox", "required", "--workspace"])
        .arg(ws.path())
        .args(["--", "sh", "-c", &script])
        .env("AGENT_RUNTIME_TEST_MARKER", &marker)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("pidns"), "{text}");
    let inside = text.split("--- stdout ---").nth(1).unwrap_or_default();
    for leak in [
        marker.as_str(),
        "AGENT_RUNTIME_TEST_MARKER",
        "agent-runtime",
        "--sandbox",
        "PATH=",
    ] {
        assert!(!inside.contains(leak), "/proc/1 shows {leak:?}:\n{text}");
    }
    // The runner's own command line did hold the marker, so the check
    // above means something.
    assert!(script.contains(&marker));
    assert!(inside.contains("init"), "{text}");
}

/// Host-side key operations through ctypes: `add DESC PAYLOAD RING`
/// prints the key's id, `find DESC RING` prints it or `none`, `drop ID`
/// invalidates it.
const HOST_KEYS: &str = r#"import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
op = sys.argv[1]
if op == "add":
    payload = sys.argv[3].encode()
    r = libc.syscall(L(__ADD_KEY__), b"user", sys.argv[2].encode(), payload, L(len(payload)), L(int(sys.argv[4])))
    print(r if r > 0 else "error %d" % ctypes.get_errno())
elif op == "find":
    r = libc.syscall(L(__KEYCTL__), L(10), L(int(sys.argv[3])), b"user", sys.argv[2].encode(), L(0))
    print(r if r > 0 else "none")
elif op == "drop":
    libc.syscall(L(__KEYCTL__), L(21), L(int(sys.argv[2])))
"#;

fn host_keys_script() -> String {
    HOST_KEYS
        .replace("__ADD_KEY__", &libc::SYS_add_key.to_string())
        .replace("__KEYCTL__", &libc::SYS_keyctl.to_string())
}

/// Runs the host helper; its one line of output.
fn host_keys(args: &[&str]) -> String {
    let out = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(host_keys_script())
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Invalidates the host keys a test added, however it ends.
struct HostKeys(Vec<String>);

impl Drop for HostKeys {
    fn drop(&mut self) {
        for id in &self.0 {
            host_keys(&["drop", id]);
        }
    }
}

const KEY_SPEC_SESSION: &str = "-3";
const KEY_SPEC_USER: &str = "-4";
const KEY_SPEC_USER_SESSION: &str = "-5";

/// In the job: `store TAG` adds a key holding a stand-in for the hidden
/// test file to every keyring it can name; `read DESC...` looks for each
/// description in them, prints any payload found, and `/proc/keys`.
const KEY_PROBE: &str = r#"import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
rings = {"session": -3, "user": -4, "user-session": -5}
def err():
    return errno.errorcode.get(ctypes.get_errno(), "?")
if sys.argv[1] == "store":
    payload = ("HIDDEN-TEST-FILE-" + sys.argv[2]).encode()
    for name, ring in rings.items():
        r = libc.syscall(L(__ADD_KEY__), b"user", (sys.argv[2] + "-attempt1").encode(), payload, L(len(payload)), L(ring))
        print("STORE", name, r, err() if r < 0 else "-")
else:
    for desc in sys.argv[2:]:
        for name, ring in rings.items():
            r = libc.syscall(L(__KEYCTL__), L(10), L(ring), b"user", desc.encode(), L(0))
            print("SEARCH", name, r, err() if r < 0 else "-")
            if r > 0:
                buf = ctypes.create_string_buffer(4096)
                n = libc.syscall(L(__KEYCTL__), L(11), L(r), buf, L(4096))
                print("PAYLOAD", buf.raw[:max(n, 0)])
    try:
        print("PROCKEYS", open("/proc/keys").read().replace("\n", "|"))
    except OSError as e:
        print("PROCKEYS unreadable", e)
"#;

#[test]
fn keys_of_an_earlier_attempt_and_of_the_host_are_out_of_reach() {
    let test = "keys_of_an_earlier_attempt_and_of_the_host_are_out_of_reach";
    if !seccomp_available(test) {
        return;
    }
    if !probe().keyrings {
        layer_missing(test, "the kernel has no keyrings");
        return;
    }
    if python().is_none() {
        return;
    }
    let sb = Sandbox::new();
    let tag = format!(
        "agent-runtime-probe-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let (user_desc, session_desc) = (format!("{tag}-host-user"), format!("{tag}-host-session"));
    let (user_secret, session_secret) = (
        format!("{tag}-USER-SECRET"),
        format!("{tag}-SESSION-SECRET"),
    );
    // A key in uid's user keyring, as a host shell would leave one.
    let id = host_keys(&["add", &user_desc, &user_secret, KEY_SPEC_USER]);
    assert!(id.parse::<i64>().is_ok(), "the host cannot add a key: {id}");
    let mut cleanup = HostKeys(vec![id]);

    let source = sb.path().join("src-tree");
    std::fs::create_dir_all(&source).unwrap();
    let probe_text = KEY_PROBE
        .replace("__ADD_KEY__", &libc::SYS_add_key.to_string())
        .replace("__KEYCTL__", &libc::SYS_keyctl.to_string());
    std::fs::write(source.join("keyprobe.py"), probe_text).unwrap();
    let reply = |args: &[&str]| {
        serde_json::json!({"kind": "run_tool", "program": "python3", "args": args}).to_string()
    };
    std::fs::write(
        sb.path().join("attempt1.jsonl"),
        format!(
            "{}\n{{\"kind\":\"finish\",\"summary\":\"stored\"}}\n",
            reply(&["keyprobe.py", "store", &tag])
        ),
    )
    .unwrap();
    let attempt1_desc = format!("{tag}-attempt1");
    std::fs::write(
        sb.path().join("attempt2.jsonl"),
        format!(
            "{}\n{{\"kind\":\"write_file\",\"path\":\"done.txt\",\"content\":\"ok\\n\"}}\n\
             {{\"kind\":\"finish\",\"summary\":\"read\"}}\n",
            reply(&[
                "keyprobe.py",
                "read",
                &attempt1_desc,
                &user_desc,
                &session_desc
            ])
        ),
    )
    .unwrap();
    let manifest = sb.path().join("keys.toml");
    std::fs::write(
        &manifest,
        r#"prompt = "Create done.txt."
source = "src-tree"
editable = ["*.txt"]
allow = ["python3 **"]
verify = ["python3", "-c", "pass"]
trace = "full"

[limits]
attempts = 2

[sandbox]
mode = "required"

[provider]
kind = "script"
script = ["attempt1.jsonl", "attempt2.jsonl"]
"#,
    )
    .unwrap();
    // The runner itself starts in a session keyring holding a key, as a
    // root shell that ran `keyctl add user ... @s` would leave it.
    let wrapper = format!(
        "{}\nimport os\n\
         libc.syscall(L(__KEYCTL__), L(1), None)\n\
         r = libc.syscall(L(__ADD_KEY__), b'user', {session_desc:?}.encode(), {session_secret:?}.encode(), L({}), L(-3))\n\
         assert r > 0, 'no session key'\n\
         os.execv({BIN:?}, [{BIN:?}, 'batch', {:?}, {:?}])\n",
        HOST_KEYS.lines().take(3).collect::<Vec<_>>().join("\n") + "\nL = ctypes.c_long",
        session_secret.len(),
        sb.data().to_str().unwrap(),
        manifest.to_str().unwrap(),
    )
    .replace("__ADD_KEY__", &libc::SYS_add_key.to_string())
    .replace("__KEYCTL__", &libc::SYS_keyctl.to_string());
    let run = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(wrapper)
        .current_dir(sb.path())
        .output()
        .unwrap();
    let run = crate::harness::Run::from(run);
    assert_eq!(run.code, 0, "the second attempt must succeed: {run:#?}");

    // Nothing was written: the host's keyrings hold no key of attempt 1.
    for ring in [KEY_SPEC_USER, KEY_SPEC_USER_SESSION, KEY_SPEC_SESSION] {
        let found = host_keys(&["find", &attempt1_desc, ring]);
        if found != "none" {
            cleanup.0.push(found.clone());
        }
        assert_eq!(found, "none", "attempt 1 stored a key in {ring}");
    }
    let attempts: Vec<_> = log_lines(&sb)
        .into_iter()
        .filter(|l| l["type"] == "attempt_finished")
        .collect();
    assert_eq!(attempts.len(), 2, "{attempts:?}");

    let observations = |attempt: u32| crate::harness::observations(&sb, "keys", attempt);
    let first = observations(1);
    assert_eq!(first.matches("STORE").count(), 3, "{first}");
    assert!(!first.contains("STORE session 1"), "{first}");
    assert_eq!(first.matches(" -1 EPERM").count(), 3, "{first}");
    let second = observations(2);
    assert_eq!(second.matches("SEARCH").count(), 9, "{second}");
    assert_eq!(second.matches(" -1 EPERM").count(), 9, "{second}");
    assert!(!second.contains("PAYLOAD"), "{second}");
    for secret in [
        format!("HIDDEN-TEST-FILE-{tag}"),
        user_secret.clone(),
        session_secret.clone(),
    ] {
        assert!(
            !second.contains(&secret),
            "attempt 2 read {secret}: {second}"
        );
    }
    // `/proc/keys` may name the host's keys (never their contents), but
    // no key of attempt 1 exists to be named.
    let proc_keys = second
        .lines()
        .find(|l| l.starts_with("PROCKEYS"))
        .unwrap_or_default();
    assert!(!proc_keys.contains(&attempt1_desc), "{proc_keys}");
}

#[test]
fn doctor_lists_seccomp_and_the_programs_commands_would_run() {
    let out = Command::new(BIN).arg("doctor").output().unwrap();
    let text = stdout(&out);
    let seccomp = text
        .lines()
        .find(|l| l.starts_with("seccomp: "))
        .unwrap_or_else(|| panic!("no seccomp line:\n{text}"));
    if probe().seccomp.is_ok() {
        assert!(seccomp.starts_with("seccomp: available"), "{seccomp}");
        assert!(seccomp.contains("clone3 ENOSYS"), "{seccomp}");
        let auto = text.lines().find(|l| l.starts_with("auto=")).unwrap();
        assert!(auto.contains("seccomp"), "{auto}");
    } else {
        layer_missing("doctor_lists_seccomp", seccomp);
    }
    assert!(
        text.lines().any(|l| l.starts_with("search path: /")),
        "{text}"
    );
    for program in ["cargo", "python3", "node"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("program {program}: "))),
            "{text}"
        );
    }
}
