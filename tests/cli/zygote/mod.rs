//! The attempt's zygote through the real binary, one concept per file:
//! a command attacking it (`attack`), the next command's process showing
//! nothing of it (`blank`), the fallback when it or the
//! attempt's PID namespace is killed mid-attempt (`fallback`), the next
//! command made ahead while one runs (`warm`), the scheduling of the
//! zygote and what it makes ahead (`idle`), and commands still started
//! from it with the sandbox off (`sandbox_off`). This module holds the
//! scripted job and the helpers that find the runner's processes.

mod attack;
mod blank;
mod fallback;
mod idle;
mod sandbox_off;
mod start_failure;
mod warm;

use agent_runtime::sandbox::{TEST_HOOKS_ENV, probe};

use agent_runtime_test_support::{Need, skip};

use crate::harness::{Sandbox, log_lines};
use attack::PROBE;

const ZYGOTE_ARG: &str = "__agent-runtime-zygote";

/// Field `n` of `/proc/PID/stat` (numbered from 1, as `proc(5)` does).
fn stat_field(pid: i32, n: usize) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields 1 and 2 are the pid and the command, which may hold spaces.
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(n.checked_sub(3)?)?
        .parse()
        .ok()
}

/// The parent of `pid`.
fn parent_of(pid: i32) -> Option<i32> {
    stat_field(pid, 4).and_then(|p| i32::try_from(p).ok())
}

/// The runner's children.
fn children_of(runner: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid).is_some_and(|p| u32::try_from(p) == Ok(runner)))
        .collect()
}

/// The process group of `pid`.
fn process_group(pid: i32) -> Option<i32> {
    stat_field(pid, 5).and_then(|g| i32::try_from(g).ok())
}

/// A job of `steps` (scripted replies), its source holding the probe.
fn job(sb: &Sandbox, steps: &[serde_json::Value]) -> std::path::PathBuf {
    job_with(sb, steps, "", "")
}

/// [`job`], its `allow` list ending in `allow` (more quoted rules, each
/// after a comma) and its `[sandbox]` table ending in `sandbox` (lines).
fn job_with(
    sb: &Sandbox,
    steps: &[serde_json::Value],
    allow: &str,
    sandbox: &str,
) -> std::path::PathBuf {
    let source = sb.path().join("src-tree");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("probe.py"), PROBE).unwrap();
    let script: String = steps.iter().map(|s| format!("{s}\n")).collect();
    std::fs::write(sb.path().join("script.jsonl"), script).unwrap();
    let manifest = sb.path().join("zygote.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"prompt = "Create done.txt."
source = "src-tree"
editable = ["*.txt"]
allow = ["python3 **", "sh **"{allow}]
verify = ["python3", "-c", "pass"]
trace = "full"

[limits]
attempts = 1
command_timeout = "5m"

[sandbox]
mode = "auto"
{sandbox}
[provider]
kind = "script"
script = ["script.jsonl"]
"#
        ),
    )
    .unwrap();
    manifest
}

fn run_tool(program: &str, args: &[&str]) -> serde_json::Value {
    serde_json::json!({"kind": "run_tool", "program": program, "args": args})
}

fn finish_steps() -> [serde_json::Value; 2] {
    [
        serde_json::json!({"kind": "write_file", "path": "done.txt", "content": "ok\n"}),
        serde_json::json!({"kind": "finish", "summary": "done"}),
    ]
}

/// The `sandbox` list of every command event, in order.
fn command_layers(sb: &Sandbox) -> Vec<Vec<String>> {
    log_lines(sb)
        .into_iter()
        .filter(|l| l["type"] == "command")
        .map(|l| {
            l["sandbox"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{}.{}",
        800_000 + std::process::id() % 90_000,
        nanos % 1_000_000
    )
}

/// Whether this machine has PID and mount namespaces and Landlock that
/// scopes signals (ABI 6+); says which is missing when not.
fn namespaces_and_scoped_signals(test: &str) -> bool {
    if let Err(why) = &probe().namespaces {
        skip(
            Need::Layer,
            test,
            &format!("no PID and mount namespaces: {why}"),
        );
        return false;
    }
    if probe().landlock_abi.as_ref().map_or(true, |abi| *abi < 6) {
        skip(
            Need::Layer,
            test,
            "Landlock below ABI 6 cannot scope signals",
        );
        return false;
    }
    true
}

/// Whether commands here get the attempt's PID namespace: namespaces,
/// scoped signals, a runner that is root, and cgroups; says why not.
fn attempt_namespace_here(test: &str) -> bool {
    if !namespaces_and_scoped_signals(test) {
        return false;
    }
    if !nix::unistd::Uid::effective().is_root() || agent_runtime::sandbox::cgroup_support().is_err()
    {
        skip(
            Need::Layer,
            test,
            "the attempt's namespace needs a runner that is root and cgroups",
        );
        return false;
    }
    true
}

/// Starts `batch` on a job whose first command sleeps 2 s (a sleep only
/// this test runs, returned) and prints `first`, then runs `later`, then
/// finishes; with the test hooks removing `hooks` (a list of layers).
fn batch_that_sleeps_first(
    sb: &Sandbox,
    later: &[serde_json::Value],
    hooks: &str,
) -> (std::process::Child, String) {
    let nanos = marker().replace('.', "");
    let sleep = format!("sleep 2.{nanos}");
    let mut steps = vec![run_tool("sh", &["-c", &format!("{sleep}; echo first")])];
    steps.extend(later.iter().cloned());
    steps.extend(finish_steps());
    let manifest = job(sb, &steps);
    let child = sb
        .command(&["batch", "DATA", manifest.to_str().unwrap()])
        .env(TEST_HOOKS_ENV, hooks)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, sleep)
}

/// The runner's children that are the init of a PID namespace of their
/// own (`NSpid` ends in 1), each with whether it has a child.
fn inits_of(runner: u32) -> Vec<(i32, bool)> {
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let is_init = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|status| {
                let nspid = status
                    .lines()
                    .find(|l| l.starts_with("NSpid:"))?
                    .to_string();
                let ids: Vec<&str> = nspid.split_whitespace().skip(1).collect();
                Some(ids.len() >= 2 && ids.last() == Some(&"1"))
            })
            .unwrap_or(false)
    };
    pids.iter()
        .copied()
        .filter(|pid| parent_of(*pid) == Some(runner as i32) && is_init(*pid))
        .map(|init| (init, pids.iter().any(|p| parent_of(*p) == Some(init))))
        .collect()
}
