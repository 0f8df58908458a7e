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
use agent_runtime_test_support::{Need, skip};
use nix::libc;

use crate::harness::{BIN, Sandbox, log_lines};

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
            skip(Need::Layer, test, &reason);
            false
        }
        None => true,
    }
}

fn python(test: &str) -> Option<&'static str> {
    let found = Path::new("/usr/bin/python3").exists();
    if !found {
        skip(Need::Tool, test, "/usr/bin/python3 is not installed");
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

mod doctor;
mod filter;
mod keyring;
mod proc_one;
