//! The deny list: every denied system call gets `EPERM` (`ENOSYS` for
//! `clone3`), on every ABI; threads, `cargo test` and pytest still work.

use super::*;

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
    let Some(python) = python(test) else { return };
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
        skip(
            Need::Tool,
            &format!("{test} (pytest half)"),
            "no pytest for /usr/bin/python3",
        );
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
