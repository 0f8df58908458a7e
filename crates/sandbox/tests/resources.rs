//! What a command cost the machine, through the executor on this
//! machine's real layers: CPU time from the reaped tree's rusage, memory
//! and task peaks from its cgroup, each command's own even when a cgroup
//! serves one command after another. Skips, saying why, without a cgroup
//! and PID namespace (fails instead under AGENT_RUNTIME_REQUIRE_LAYERS=1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use agent_runtime_sandbox::cancel::CancelToken;
use agent_runtime_sandbox::exec::{AllowList, ExecOutcome, ExecRequest, run};
use agent_runtime_sandbox::sandbox::{SandboxMode, cgroup_support, probe};
use agent_runtime_test_support::{Need, skip};

const MIB: u64 = 1 << 20;

/// Whether cgroups and PID namespaces are here; prints why not.
fn layers_here(test: &str) -> bool {
    let reason = match (cgroup_support(), &probe().namespaces) {
        (Err(reason), _) => format!("no cgroup: {reason}"),
        (_, Err(reason)) => format!("no PID namespace: {reason}"),
        _ => return true,
    };
    skip(Need::Layer, test, &reason);
    false
}

/// Whether the executor's fixed search path has a `python3`.
fn python_here(ws: &Path) -> bool {
    let req = ExecRequest::new(
        vec!["python3".into(), "-V".into()],
        AllowList::program_any_args("python3").unwrap(),
        ws.to_path_buf(),
    );
    req.search_path.resolve("python3").is_ok()
}

fn run_in(ws: &Path, argv: &[&str]) -> ExecOutcome {
    let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
    let allow = AllowList::program_any_args(&argv[0]).unwrap();
    let mut req = ExecRequest::new(argv, allow, ws.to_path_buf());
    req.sandbox.mode = SandboxMode::Required;
    req.timeout = std::time::Duration::from_secs(120);
    let out = run(&req, &CancelToken::new()).unwrap();
    assert!(out.success(), "{out:?}\n{}", out.stderr.to_text());
    out
}

/// Allocates 200 MiB touching every page, then burns 1 s of CPU.
const HOG: &str = "import time\n\
b = b'\\x01' * (200 << 20)\n\
t = time.process_time()\n\
while time.process_time() - t < 1.0: pass\n\
print(len(b))";

/// Eight threads alive at once.
const THREADS: &str = "import threading, time\n\
ts = [threading.Thread(target=time.sleep, args=(0.3,)) for _ in range(8)]\n\
[t.start() for t in ts]\n\
[t.join() for t in ts]";

#[test]
fn each_command_is_told_its_own_cpu_memory_and_tasks() {
    let test = "each_command_is_told_its_own_cpu_memory_and_tasks";
    if !layers_here(test) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    if !python_here(ws.path()) {
        return skip(
            Need::Tool,
            test,
            "python3 is not on the executor's search path",
        );
    }
    let hog = run_in(ws.path(), &["python3", "-c", HOG]).resources;
    let cpu = hog.cpu_ms.unwrap();
    // 1 s of burning, plus the interpreter's start and 200 MiB of page
    // faults, which a busy host makes slow (1.3 s measured under load).
    assert!((750..=2500).contains(&cpu), "cpu {cpu} ms: {hog:?}");
    let memory = hog.peak_memory_bytes.unwrap();
    assert!(
        (150 * MIB..=250 * MIB).contains(&memory),
        "memory {} MiB: {hog:?}",
        memory / MIB
    );
    // The waiter, the init and the single-threaded interpreter.
    assert_eq!(hog.pids_peak, Some(3), "{hog:?}");

    // The next command may get the same cgroup: its figures are its own.
    let small = run_in(ws.path(), &["true"]).resources;
    assert!(small.cpu_ms.unwrap() < 200, "{small:?}");
    assert!(small.peak_memory_bytes.unwrap() < 20 * MIB, "{small:?}");
    assert_eq!(small.pids_peak, Some(3), "{small:?}");

    let threads = run_in(ws.path(), &["python3", "-c", THREADS]).resources;
    assert!(threads.pids_peak.unwrap() >= 3 + 8, "{threads:?}");
    // A cgroup whose task peak cannot be reset is not given to another
    // command, which sees its own peak.
    let after = run_in(ws.path(), &["true"]).resources;
    assert_eq!(after.pids_peak, Some(3), "{after:?}");
}
