//! `cargo bench --bench steps`: what one step of the agent loop costs, with
//! every sandbox layer the machine has on.
//!
//! A scripted job of 202 steps (write a file, `true` run 200 times, then
//! verify and finish; `max_steps` lets it) runs through `batch` on a fresh
//! data dir, RUNS times. A step's cost is the time between the first and
//! the last `command` event of the attempt over the commands between them,
//! from the log's timestamps: the scripted provider's reply, the decision's
//! checks, the sandboxed `true`, the events appended. The sandbox layers
//! are the ones the commands recorded.
//!
//! When `AGENT_RUNTIME_BENCH_MINI=PYTHON` names a Python with
//! mini-swe-agent 2.x installed, its loop runs the same 200 `true`
//! commands in the same run (`DefaultAgent` with `DeterministicModel` and
//! `LocalEnvironment`, no sandbox and no log) and its per-step figure is
//! printed beside ours; without it, the line says `mini=none`.
//!
//! Prints one line to stdout:
//! `BENCH steps per_step_us=<n> sandbox=<layers> mini_per_step_us=<n|none> ratio=<r|none>`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const RUNS: usize = 3;
const COMMANDS: usize = 200;
const BIN: &str = env!("CARGO_BIN_EXE_agent-runtime");

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn write_job(dir: &Path) -> std::path::PathBuf {
    let mut script =
        String::from("{\"kind\":\"write_file\",\"path\":\"out.txt\",\"content\":\"done\\n\"}\n");
    for _ in 0..COMMANDS {
        script.push_str("{\"kind\":\"run_tool\",\"program\":\"true\",\"args\":[]}\n");
    }
    script.push_str(
        "{\"kind\":\"verify\"}\n{\"kind\":\"finish\",\"summary\":\"ran true 200 times\"}\n",
    );
    let script_path = dir.join("steps.jsonl");
    std::fs::write(&script_path, script).unwrap();
    let source = format!("{}/evaluation/bench/source", env!("CARGO_MANIFEST_DIR"));
    let manifest = format!(
        "id = \"steps\"\nprompt = \"Run true 200 times.\"\nsource = {source:?}\n\
         editable = [\"**\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n\
         [limits]\nmax_steps = {steps}\ntoken_budget = 100000000\nattempts = 1\n\n\
         [provider]\nkind = \"script\"\nscript = {script:?}\n",
        steps = COMMANDS + 10,
        script = script_path,
    );
    let jobs = dir.join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    std::fs::write(jobs.join("steps.toml"), manifest).unwrap();
    jobs
}

/// One run of the job: the per-step time and the sandbox layers.
fn run_once(jobs: &Path, data: &Path) -> (Duration, String) {
    let out = Command::new(BIN)
        .args(["batch", data.to_str().unwrap(), jobs.to_str().unwrap()])
        .args(["-j", "1"])
        .env("CI", "1")
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(data.join("events.log")).unwrap();
    let commands: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "command" && r["role"] == "tool")
        .collect();
    assert_eq!(
        commands.len(),
        COMMANDS,
        "every `true` ran as a tool command"
    );
    let ts = |r: &serde_json::Value| r["ts"].as_u64().unwrap();
    let span = ts(&commands[COMMANDS - 1]) - ts(&commands[0]);
    let layers = commands[0]["sandbox"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect::<Vec<_>>()
        .join(",");
    (
        Duration::from_micros(span * 1000 / (COMMANDS as u64 - 1)),
        layers,
    )
}

/// mini-swe-agent's per-step time, running `true` COMMANDS times.
fn mini(python: &str) -> Option<Duration> {
    let program = format!(
        r#"
import time
from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import DeterministicModel, make_output
n = {COMMANDS}
outputs = [make_output("run it", [{{"command": "true"}}]) for _ in range(n)]
outputs.append(make_output("done", [{{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}]))
model = DeterministicModel(outputs=outputs, cost_per_call=0.0)
agent = DefaultAgent(
    model,
    LocalEnvironment(),
    system_template="You run commands.",
    instance_template="{{{{task}}}}",
    step_limit=n + 5,
    cost_limit=0,
)
start = time.perf_counter()
result = agent.run("run true")
elapsed = time.perf_counter() - start
assert result.get("exit_status") == "Submitted", result
print(int(elapsed * 1e6 / (n + 1)))
"#
    );
    let out = Command::new(python).args(["-c", &program]).output().ok()?;
    if !out.status.success() {
        eprintln!(
            "mini-swe-agent did not run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    // It prints a banner first; the figure is the last line.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let us: u64 = stdout.lines().last()?.trim().parse().ok()?;
    Some(Duration::from_micros(us))
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = write_job(dir.path());
    let python = std::env::var("AGENT_RUNTIME_BENCH_MINI").ok();
    let (mut ours, mut theirs, mut layers) = (Vec::new(), Vec::new(), String::new());
    for run in 0..RUNS {
        let (step, sandbox) = run_once(&jobs, &dir.path().join(format!("data-{run}")));
        ours.push(step);
        layers = sandbox;
        if let Some(python) = &python {
            theirs.extend(mini(python));
        }
    }
    let ours = median(ours);
    let mini = (!theirs.is_empty()).then(|| median(theirs));
    println!(
        "BENCH steps per_step_us={} sandbox={} mini_per_step_us={} ratio={}",
        ours.as_micros(),
        if layers.is_empty() { "none" } else { &layers },
        mini.map_or("none".to_string(), |m| m.as_micros().to_string()),
        mini.map_or("none".to_string(), |m| format!(
            "{:.2}",
            ours.as_secs_f64() / m.as_secs_f64()
        )),
    );
}
