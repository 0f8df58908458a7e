//! The seed form `run DATA ID WORKSPACE` with the AGY command provider
//! (a stand-in script), and manifest enqueue rules.

use std::process::Command;

use crate::harness::{BIN, Run, Sandbox, log_lines};

const FAKE_AGY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/fixtures/fake-agy");
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/evaluation/fixtures/off_by_one"
);

fn copy_fixture(sb: &Sandbox) -> std::path::PathBuf {
    let ws = sb.path().join("ws");
    agent_runtime_test_support::copy_tree(std::path::Path::new(FIXTURE), &ws).unwrap();
    ws
}

#[test]
fn the_seed_form_runs_a_bare_task_with_agy_and_applies_the_patch() {
    let sb = Sandbox::new();
    let ws = copy_fixture(&sb);
    sb.run(&["enqueue", "DATA", "demo-task"]).ok();
    let run = Run::from(
        Command::new(BIN)
            .args([
                "run",
                sb.data().to_str().unwrap(),
                "demo-task",
                ws.to_str().unwrap(),
            ])
            .env("AGENT_TASK", "Make sum_up_to(n) include n.")
            .env("AGENT_ALLOWED", "cargo")
            .env("AGENT_VERIFY", "cargo;test;--offline;--quiet")
            .env("AGENT_MAX_STEPS", "6")
            .env("AGENT_TIMEOUT_SECS", "120")
            .env("AGY_BIN", FAKE_AGY)
            .output()
            .unwrap(),
    );
    run.ok()
        .stdout_has("outcome=succeeded")
        .stdout_has("applied the patch");
    let lib = std::fs::read_to_string(ws.join("src/lib.rs")).unwrap();
    assert!(lib.contains("1..=n"), "{lib}");
    let lines = log_lines(&sb);
    assert!(
        lines.iter().any(|l| l["type"] == "replaced"),
        "the seed manifest is recorded"
    );
    let decisions: Vec<_> = lines.iter().filter(|l| l["type"] == "decision").collect();
    assert_eq!(decisions.len(), 3);
    let calls: Vec<_> = lines.iter().filter(|l| l["type"] == "model_call").collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls[0]["input_tokens"], 100,
        "tokens come from the AGY envelope"
    );
}

#[test]
fn the_seed_form_names_a_missing_variable() {
    let sb = Sandbox::new();
    let ws = copy_fixture(&sb);
    sb.run(&["enqueue", "DATA", "t"]).ok();
    let before = sb.log_bytes();
    let run = Run::from(
        Command::new(BIN)
            .args([
                "run",
                sb.data().to_str().unwrap(),
                "t",
                ws.to_str().unwrap(),
            ])
            .env_remove("AGENT_TASK")
            .env("AGENT_VERIFY", "true")
            .output()
            .unwrap(),
    );
    run.code(2)
        .one_line_error()
        .stderr_has("AGENT_TASK is not set");
    assert_eq!(sb.log_bytes(), before);
}

#[test]
fn manifest_enqueue_is_idempotent_and_a_changed_manifest_needs_replace() {
    let sb = Sandbox::new();
    let dir = sb.path().join("jobs");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = |prompt: &str| {
        format!(
            "prompt = \"{prompt}\"\nsource = \"{FIXTURE}\"\neditable = [\"src/**\"]\nallow = [\"true\"]\nverify = [\"true\"]\n[provider]\nkind = \"script\"\nscript = \"{}/evaluation/controls/scripts/success.jsonl\"\n",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    let file = dir.join("j.toml");
    std::fs::write(&file, manifest("one")).unwrap();
    let f = file.to_str().unwrap();
    sb.run(&["enqueue", "DATA", "--job", f])
        .ok()
        .stdout_has("enqueued=true id=j");
    sb.run(&["enqueue", "DATA", "--job", f])
        .ok()
        .stdout_has("enqueued=false id=j");
    std::fs::write(&file, manifest("two")).unwrap();
    let before = sb.log_bytes();
    sb.run(&["enqueue", "DATA", "--job", f])
        .code(2)
        .stderr_has("--replace");
    assert_eq!(sb.log_bytes(), before);
    sb.run(&["enqueue", "DATA", "--job", f, "--replace"])
        .ok()
        .stdout_has("replaced=true");
    let lines = log_lines(&sb);
    assert_eq!(lines.last().unwrap()["type"], "replaced");
    assert_eq!(
        lines[0]["manifest"]["manifest"]["prompt"], "one",
        "the snapshot is in the log"
    );
}

#[test]
fn a_bad_manifest_names_file_line_and_field_and_enqueues_nothing() {
    let sb = Sandbox::new();
    let file = sb.path().join("bad.toml");
    std::fs::write(&file, format!("prompt = \"x\"\nsource = \"{FIXTURE}\"\neditable = [\"src/**\"]\nallow = [\"cargo test **\"]\nverify = [\"make\"]\n")).unwrap();
    sb.run(&["enqueue", "DATA", "--job", file.to_str().unwrap()])
        .code(2)
        .one_line_error()
        .stderr_has("bad.toml:5:")
        .stderr_has("verify");
    assert!(!sb.log().exists());
}

#[test]
fn full_trace_writes_a_redacted_transcript_beside_the_log() {
    let sb = Sandbox::new();
    let file = sb.path().join("traced.toml");
    let control = std::fs::read_to_string(format!(
        "{}/evaluation/controls/success.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let control = control
        .replace(
            "../fixtures",
            &format!("{}/evaluation/fixtures", env!("CARGO_MANIFEST_DIR")),
        )
        .replace(
            "../acceptance",
            &format!("{}/evaluation/acceptance", env!("CARGO_MANIFEST_DIR")),
        )
        .replace(
            "scripts/",
            &format!(
                "{}/evaluation/controls/scripts/",
                env!("CARGO_MANIFEST_DIR")
            ),
        )
        .replacen(
            "family = \"controls\"",
            "family = \"controls\"\ntrace = \"full\"",
            1,
        );
    std::fs::write(&file, control).unwrap();
    sb.run(&["enqueue", "DATA", "--job", file.to_str().unwrap()])
        .ok();
    let run = Run::from(
        Command::new(BIN)
            .args(["run", sb.data().to_str().unwrap(), "traced"])
            .env("SOME_API_TOKEN", "sum_up_to")
            .output()
            .unwrap(),
    );
    run.ok();
    let transcript =
        std::fs::read_to_string(sb.data().join("runs/traced/1/transcript.jsonl")).unwrap();
    assert_eq!(transcript.lines().count(), 4);
    assert!(
        transcript.contains("[REDACTED]"),
        "a runner secret's value is redacted"
    );
    assert!(!transcript.contains("sum_up_to"));
    let log = String::from_utf8(sb.log_bytes()).unwrap();
    assert!(
        !log.contains("[REDACTED]") && !log.contains("verification is now required"),
        "the transcript stays out of the log"
    );
}

#[test]
fn a_job_that_cannot_run_does_not_stop_the_batch() {
    let sb = Sandbox::new();
    let jobs = sb.path().join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    for id in ["broken", "fine"] {
        std::fs::write(
            jobs.join(format!("{id}.toml")),
            format!(
                "prompt = \"x\"\nsource = \"{FIXTURE}\"\neditable = [\"src/**\"]\nallow = [\"true\"]\nverify = [\"true\"]\n[provider]\nkind = \"script\"\nscript = \"{root}/evaluation/controls/scripts/success.jsonl\"\n"
            ),
        )
        .unwrap();
    }
    // The broken job's artifact directory cannot be created.
    std::fs::create_dir_all(sb.data().join("runs")).unwrap();
    std::fs::write(sb.data().join("runs/broken"), "not a directory").unwrap();
    let run = sb.run(&["batch", "DATA", jobs.to_str().unwrap(), "-j", "1"]);
    // A runtime I/O error is the machine's fault: restarted, then
    // infra_error with its cause, while the other job runs.
    let run = run
        .code(1)
        .stderr_has("job broken: infra_error")
        .stderr_has("runs/broken");
    assert!(run.stdout.contains("succeeded 1/2"), "{run:#?}");
}
