//! Workspace content a patch cannot carry (here a FIFO a command left at an
//! editable path) ends the attempt cleanly: `patch_rejected` with the reason
//! in the log, the job failed, nothing hanging and no runner error.

use std::time::{Duration, Instant};

use crate::harness::{Sandbox, job_state, log_lines};

#[test]
fn a_fifo_at_an_editable_path_fails_the_attempt_patch_rejected() {
    let sb = Sandbox::new();
    let source = sb.path().join("source");
    std::fs::create_dir_all(source.join("src")).unwrap();
    std::fs::write(source.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let replies = [
        serde_json::json!({"kind": "write_file", "path": "src/lib.rs", "content": "pub fn f() -> u8 { 1 }\n"}),
        serde_json::json!({"kind": "run_tool", "program": "mkfifo", "args": ["src/pipe.rs"]}),
        serde_json::json!({"kind": "finish", "summary": "done"}),
    ];
    let script = write_script(&sb, "fifo.jsonl", &replies);
    let manifest = sb.path().join("fifo.toml");
    std::fs::write(
        &manifest,
        format!(
            "prompt = \"Change f.\"\nsource = {source:?}\neditable = [\"src/**\"]\n\
             allow = [\"mkfifo *\", \"true\"]\nverify = [\"true\"]\n\n\
             [limits]\nattempts = 1\n\n[sandbox]\nmode = \"off\"\n\n\
             [provider]\nkind = \"script\"\nscript = {script:?}\n",
            source = source.to_str().unwrap(),
            script = script.to_str().unwrap(),
        ),
    )
    .unwrap();
    sb.run(&["enqueue", "DATA", "--job", manifest.to_str().unwrap()])
        .ok();

    let started = Instant::now();
    sb.run(&["run", "DATA", "fifo"])
        .code(1)
        .stdout_has("outcome=failed failure_kind=patch_rejected");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(job_state(&sb, "fifo"), "failed");
    let log = log_lines(&sb);
    let rejected: Vec<_> = log
        .iter()
        .filter(|l| l["type"] == "patch_rejected")
        .collect();
    assert_eq!(rejected.len(), 1, "{log:#?}");
    assert_eq!(
        rejected[0]["reason"],
        "src/pipe.rs: is a FIFO, not a regular file"
    );
    assert!(!log.iter().any(|l| l["type"] == "patch"));
    let finished = log
        .iter()
        .rfind(|l| l["type"] == "attempt_finished")
        .unwrap();
    assert_eq!(finished["failure_kind"], "patch_rejected");
    // The report names the kind and the reason.
    let out = sb.path().join("report");
    sb.run(&["report", "DATA", "--out", out.to_str().unwrap()])
        .ok();
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(markdown.contains("patch_rejected"), "{markdown}");
}

/// Writes scripted replies, one JSON line each.
fn write_script(sb: &Sandbox, name: &str, replies: &[serde_json::Value]) -> std::path::PathBuf {
    let script = sb.path().join(name);
    let lines: Vec<String> = replies.iter().map(|r| r.to_string() + "\n").collect();
    std::fs::write(&script, lines.concat()).unwrap();
    script
}

/// Peak RSS (VmHWM, KiB) of a running process, sampled until it exits.
fn run_watching_rss(sb: &Sandbox, args: &[&str]) -> (i32, u64, Duration) {
    let started = Instant::now();
    let mut child = sb
        .command(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code().unwrap_or(-1), peak, started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_sparse_2_gib_file_and_a_fifo_end_the_job_cleanly_with_bounded_memory() {
    let sb = Sandbox::new();
    let source = sb.path().join("source");
    std::fs::create_dir_all(source.join("src")).unwrap();
    std::fs::write(source.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let replies = [
        serde_json::json!({"kind": "run_tool", "program": "truncate", "args": ["-s", "2G", "src/big.rs"]}),
        serde_json::json!({"kind": "read_file", "path": "src/big.rs"}),
        serde_json::json!({"kind": "replace_text", "path": "src/big.rs", "expected": "a", "replacement": "b"}),
        serde_json::json!({"kind": "write_file", "path": "src/big.rs", "content": "x"}),
        serde_json::json!({"kind": "run_tool", "program": "mkfifo", "args": ["src/pipe.rs"]}),
        serde_json::json!({"kind": "read_file", "path": "src/pipe.rs"}),
        serde_json::json!({"kind": "replace_text", "path": "src/pipe.rs", "expected": "a", "replacement": "b"}),
        serde_json::json!({"kind": "write_file", "path": "src/pipe.rs", "content": "x"}),
        serde_json::json!({"kind": "write_file", "path": "src/lib.rs", "content": "pub fn f() -> u8 { 1 }\n"}),
        serde_json::json!({"kind": "finish", "summary": "done"}),
    ];
    let script = write_script(&sb, "hostile.jsonl", &replies);
    let manifest = sb.path().join("big.toml");
    std::fs::write(
        &manifest,
        format!(
            "prompt = \"Change f.\"\nsource = {source:?}\neditable = [\"src/**\"]\n\
             allow = [\"mkfifo *\", \"truncate **\", \"true\"]\nverify = [\"true\"]\n\
             trace = \"full\"\n\n\
             [limits]\nattempts = 1\nmax_invalid = 20\nwall_time = \"60s\"\n\n\
             [provider]\nkind = \"script\"\nscript = {script:?}\n",
            source = source.to_str().unwrap(),
            script = script.to_str().unwrap(),
        ),
    )
    .unwrap();
    sb.run(&["enqueue", "DATA", "--job", manifest.to_str().unwrap()])
        .ok();
    let (code, peak_kib, took) = run_watching_rss(&sb, &["run", "DATA", "big"]);
    assert_eq!(code, 1);
    assert!(took < Duration::from_secs(60), "past wall_time: {took:?}");
    assert!(
        peak_kib > 0 && peak_kib < 100 * 1024,
        "runner peak RSS {peak_kib} KiB"
    );
    assert_eq!(job_state(&sb, "big"), "failed");
    let log = log_lines(&sb);
    let finished = log
        .iter()
        .rfind(|l| l["type"] == "attempt_finished")
        .unwrap();
    assert_eq!(finished["failure_kind"], "patch_rejected", "{log:#?}");
    // The model was told why each action on them failed, without blocking.
    let transcript =
        std::fs::read_to_string(sb.data().join("runs/big/1/transcript.jsonl")).unwrap();
    assert!(transcript.contains("2147483648 bytes, over the"));
    assert!(transcript.contains("is a FIFO, not a regular file"));
    eprintln!("sparse+FIFO job: {took:?}, runner peak RSS {peak_kib} KiB");
}
