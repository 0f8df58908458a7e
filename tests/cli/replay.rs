//! `replay` turns a recorded attempt into a job that reproduces it with no
//! model: the same decisions, refusals and outcome, with the server gone.

use std::net::{TcpListener, TcpStream};

use crate::harness::Sandbox;
use crate::mock_model::{read_request, reply};

/// Reads one HTTP request and answers it with `content` as the model's reply.
fn answer(stream: TcpStream, content: &str) {
    if read_request(&stream).is_some() {
        reply(stream, content, (100, 20));
    }
}

/// The decisions of a data dir's log: (kind, refusal reason), in order.
fn decisions(data: &std::path::Path) -> Vec<(String, Option<String>)> {
    std::fs::read_to_string(data.join("events.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "decision")
        .map(|l| {
            (
                l["kind"].as_str().unwrap().to_string(),
                l["reason"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn outcome(data: &std::path::Path) -> (String, String) {
    let last = std::fs::read_to_string(data.join("events.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .rfind(|l| l["type"] == "attempt_finished")
        .unwrap();
    (
        last["outcome"].as_str().unwrap().to_string(),
        last["failure_kind"].as_str().unwrap_or("").to_string(),
    )
}

fn job(sb: &Sandbox, trace: &str) -> std::path::PathBuf {
    let source = sb.path().join("source");
    let tests = sb.path().join("tests");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(source.join("a.txt"), "old\n").unwrap();
    let job = sb.path().join(format!("{trace}.toml"));
    std::fs::write(
        &job,
        format!(
            r#"id = "{trace}"
prompt = "Make a.txt say new."
source = "source"
editable = ["*.txt"]
allow = ["true", "grep **"]
verify = ["grep", "-qx", "new", "a.txt"]
trace = "{trace}"

[acceptance]
dir = "tests"
command = ["grep", "-qx", "new", "a.txt"]
results = "exit"

[limits]
attempts = 1
"#
        ),
    )
    .unwrap();
    job
}

#[test]
fn a_recorded_attempt_replays_with_the_server_gone() {
    let sb = Sandbox::new();
    let replies = [
        "Sure! I will now fix the file.",
        r#"{"kind":"run_tool","program":"touch","args":["pwned"]}"#,
        r#"{"kind":"write_file","path":"a.txt","content":"new\n"}"#,
        r#"{"kind":"verify"}"#,
        r#"{"kind":"finish","summary":"a.txt says new"}"#,
    ];
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        // The preflight's connection first, then one request per reply.
        let _ = listener.accept();
        for reply in replies {
            let (stream, _) = listener.accept().unwrap();
            answer(stream, reply);
        }
    });
    let provider = sb.path().join("local.toml");
    std::fs::write(
        &provider,
        format!(
            "name = \"local\"\n\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\nmode = \"json_object\"\n"
        ),
    )
    .unwrap();
    let job = job(&sb, "full");
    let recorded = sb.path().join("recorded");
    let run = sb.run(&[
        "batch",
        recorded.to_str().unwrap(),
        job.to_str().unwrap(),
        "--provider",
        provider.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    server.join().unwrap();
    let original = decisions(&recorded);
    assert_eq!(original.len(), 5, "{original:?}");
    assert_eq!(original[0].0, "invalid");
    assert!(
        original[1].1.is_some(),
        "the command was not refused: {original:?}"
    );

    // The server is gone: the replay needs no model.
    let out = sb.path().join("replay");
    sb.run(&[
        "replay",
        recorded.to_str().unwrap(),
        "full@local",
        "--out",
        out.to_str().unwrap(),
    ])
    .ok()
    .stdout_has("5 replies of attempt 1 of full@local");
    let manifest = std::fs::read_to_string(out.join("job.toml")).unwrap();
    assert!(
        manifest.contains("full@local (provider local)"),
        "{manifest}"
    );
    assert!(manifest.contains("Transcript sha256 "), "{manifest}");
    let replayed = sb.path().join("replayed");
    let run = sb.run(&[
        "batch",
        replayed.to_str().unwrap(),
        out.join("job.toml").to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(decisions(&replayed), original);
    assert_eq!(outcome(&replayed), outcome(&recorded));
    // The raw replies are byte for byte those the server sent.
    let script = std::fs::read_to_string(out.join("replies.jsonl")).unwrap();
    let sent: Vec<String> = script
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| serde_json::from_str::<String>(l).unwrap())
        .collect();
    assert_eq!(sent, replies);
}

#[test]
fn a_metadata_trace_cannot_be_replayed() {
    let sb = Sandbox::new();
    let job = job(&sb, "metadata");
    let script = sb.path().join("s.jsonl");
    std::fs::write(&script, "{\"kind\":\"finish\",\"summary\":\"x\"}\n").unwrap();
    let text = std::fs::read_to_string(&job).unwrap()
        + &format!(
            "\n[provider]\nkind = \"script\"\nscript = {:?}\n",
            script.to_str().unwrap()
        );
    std::fs::write(&job, text).unwrap();
    sb.run(&["batch", "DATA", job.to_str().unwrap()]);
    let out = sb.path().join("replay");
    let run = sb.run(&["replay", "DATA", "metadata", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(
        run.stderr.contains("trace = \"metadata\"") && run.stderr.contains("trace = \"full\""),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
}
