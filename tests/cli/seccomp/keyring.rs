//! The per-command session keyring: a key one attempt stores is gone
//! for the next, and a key the host holds is out of reach.

use super::*;

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
        skip(Need::Layer, test, "the kernel has no keyrings");
        return;
    }
    if python(test).is_none() {
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
