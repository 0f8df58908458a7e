//! Replies shaped to be expensive to read, through the real binary: each is
//! refused as an invalid decision in good time and the job goes on.

use std::time::{Duration, Instant};

use crate::harness::{Sandbox, job_state, log_lines};

/// A job whose scripted model first sends `reply` (verbatim), then edits,
/// verifies and finishes.
fn job_after(sb: &Sandbox, reply: &str) -> std::path::PathBuf {
    let source = sb.path().join("src-tree");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("README"), "fix me\n").unwrap();
    let lines = [
        // A JSON string line is sent as the reply, byte for byte.
        serde_json::Value::String(reply.to_string()).to_string(),
        r#"{"kind":"write_file","path":"out.txt","content":"done\n"}"#.to_string(),
        r#"{"kind":"verify"}"#.to_string(),
        r#"{"kind":"finish","summary":"wrote out.txt"}"#.to_string(),
    ];
    std::fs::write(sb.path().join("script.jsonl"), lines.join("\n") + "\n").unwrap();
    let manifest = sb.path().join("braces.toml");
    std::fs::write(
        &manifest,
        r#"prompt = "Write out.txt."
source = "src-tree"
editable = ["*.txt"]
allow = ["true"]
verify = ["true"]

[limits]
attempts = 1
wall_time = "60s"

[provider]
kind = "script"
script = "script.jsonl"
"#,
    )
    .unwrap();
    manifest
}

#[test]
fn an_80_kb_reply_of_nested_braces_is_refused_quickly_and_the_job_goes_on() {
    let n = 40_000;
    for reply in [
        "{".repeat(n) + &"}".repeat(n),
        "{".repeat(2 * n),
        "{\"kind\":".repeat(n / 4) + "1" + &"}".repeat(n / 4),
    ] {
        let sb = Sandbox::new();
        let manifest = job_after(&sb, &reply);
        let started = Instant::now();
        let run = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
        let took = started.elapsed();
        assert_eq!(run.code, 0, "{run:#?}");
        assert_eq!(job_state(&sb, "braces"), "succeeded");
        // The job's own work takes well under a second; the quadratic
        // parser spent 12 s and more on the first reply alone.
        assert!(took < Duration::from_secs(10), "took {took:?}");
        let decisions: Vec<_> = log_lines(&sb)
            .into_iter()
            .filter(|e| e["type"] == "decision")
            .collect();
        let first = &decisions[0];
        assert_eq!(first["kind"], "invalid", "{first}");
        let call = log_lines(&sb)
            .into_iter()
            .find(|e| e["type"] == "model_call")
            .unwrap();
        assert_eq!(call["reply_bytes"], reply.len() as u64, "{call}");
        let reason = first["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("invalid JSON") || reason.starts_with("decision: field `kind`"),
            "{reason}"
        );
        let kinds: Vec<_> = decisions.iter().map(|e| e["kind"].clone()).collect();
        assert_eq!(kinds, ["invalid", "write_file", "verify", "finish"]);
    }
}
