//! The PID namespace's init shows nothing of the runner: it is not in the
//! command's `/proc` (`hidepid`), and where it would be, it is blank.

use super::*;

#[test]
fn proc_1_shows_nothing_of_the_runner() {
    let test = "proc_1_shows_nothing_of_the_runner";
    if !seccomp_available(test) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = format!("runner-marker-{}", std::process::id());
    let script = format!(
        "cat /proc/1/cmdline; echo; cat /proc/1/environ; echo; cat /proc/1/comm; \\
         test -e /proc/1 || echo HIDDEN; : {marker}"
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
    assert!(
        inside.contains("HIDDEN") || inside.contains("init"),
        "{text}"
    );
}
