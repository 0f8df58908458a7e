//! The bundled job whose crate depends on crates.io crates
//! (`jobs/wrong_comparator.toml`), through the real binary: from an empty
//! job cache its setup fetches them and the job is accepted; rerun with
//! the network gone for the whole run (a network namespace without any
//! interface up), setup is reused, nothing is fetched, and it is accepted
//! again. Skipped, with the reason, when the registry is unreachable.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use agent_runtime_test_support::{Need, require_tool, skip};
use serde_json::Value;

use crate::harness::{BIN, Run, Sandbox, log_lines};
use crate::setup::only_cache;

pub fn registry_reachable() -> Result<(), String> {
    let addr = "index.crates.io:443"
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve index.crates.io: {e}"))?
        .next()
        .ok_or("index.crates.io has no address")?;
    TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map(|_| ())
        .map_err(|e| format!("index.crates.io:443 is unreachable: {e}"))
}

/// Files of the job's registry (its own `CARGO_HOME`), by name.
fn registry_files(cache: &Path) -> Vec<String> {
    let mut out: Vec<String> = crate::setup::tree_bytes(&cache.join("setup/cargo/registry"))
        .into_keys()
        .map(|p| p.display().to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn the_dependency_job_fetches_once_then_runs_with_the_network_off() {
    let test = "the_dependency_job_fetches_once_then_runs_with_the_network_off";
    if require_tool(test, registry_reachable()).is_none() {
        return;
    }
    let job = concat!(env!("CARGO_MANIFEST_DIR"), "/jobs/wrong_comparator.toml");
    let sb = Sandbox::new();
    sb.run(&["batch", "DATA", job]).ok();
    let lines = log_lines(&sb);
    let setup: Vec<&Value> = lines.iter().filter(|l| l["type"] == "setup").collect();
    assert_eq!(setup.len(), 1);
    assert_eq!(setup[0]["result"], "passed", "{}", setup[0]);
    assert!(setup[0].get("reused").is_none());
    let fetched = registry_files(&only_cache(&sb.data()));
    for krate in [
        "itertools-0.14.0.crate",
        "regex-lite-0.1.9.crate",
        "pretty_assertions-1.4.1.crate",
    ] {
        assert!(
            fetched.iter().any(|f| f.ends_with(krate)),
            "{krate} in {fetched:?}"
        );
    }

    // Again, with no network for the whole run.
    let mut command = Command::new("unshare");
    command
        .args(["--net", BIN, "batch"])
        .arg(sb.data())
        .args([job, "--rerun", "all"])
        .current_dir(sb.path());
    let run = match command.output() {
        Ok(out) => Run::from(out),
        Err(e) => {
            skip(
                Need::Tool,
                &format!("{test} (offline half)"),
                &format!("cannot run unshare: {e}"),
            );
            return;
        }
    };
    if run.code != 0 && run.stderr.contains("unshare failed") {
        skip(
            Need::Tool,
            &format!("{test} (offline half)"),
            run.stderr.trim(),
        );
        return;
    }
    let run = run.ok();
    assert!(run.stdout.contains("succeeded"), "{run:#?}");
    let lines = log_lines(&sb);
    let replaced = lines.iter().position(|l| l["type"] == "replaced").unwrap();
    let after = &lines[replaced..];
    let setup: Vec<&Value> = after.iter().filter(|l| l["type"] == "setup").collect();
    assert_eq!(setup[0]["reused"], true, "{}", setup[0]);
    assert!(
        !after
            .iter()
            .any(|l| l["type"] == "command" && l["role"] == "setup"),
        "nothing ran for setup"
    );
    let acceptance = after.iter().find(|l| l["type"] == "acceptance").unwrap();
    assert_eq!(acceptance["result"], "passed", "{acceptance}");
    assert_eq!(
        registry_files(&only_cache(&sb.data())),
        fetched,
        "nothing fetched"
    );
}
