//! A provider that goes away while a batch runs is waited out, not charged
//! to the model: it refuses connections for a while, then answers, and the
//! job completes; the wait is in the log and the progress lines.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::harness::{Sandbox, log_lines};

/// Answers one chat-completions request with `content` as the reply.
fn answer(mut stream: TcpStream, content: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let response = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    })
    .to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
        response.len(),
        response
    );
}

#[test]
fn a_provider_down_for_a_while_is_waited_out_and_the_job_completes() {
    let sb = Sandbox::new();
    let source = sb.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("a.txt"), "old\n").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let down_for = Duration::from_secs(4);
    let server = std::thread::spawn(move || {
        // The preflight's connection, then the server goes away.
        let _ = listener.accept();
        drop(listener);
        std::thread::sleep(down_for);
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let replies = [
            r#"{"kind":"write_file","path":"a.txt","content":"new\n"}"#,
            r#"{"kind":"finish","summary":"done"}"#,
        ];
        for reply in replies {
            let (stream, _) = listener.accept().unwrap();
            answer(stream, reply);
        }
    });
    let provider = sb.path().join("local.toml");
    std::fs::write(
        &provider,
        format!(
            "name = \"local\"\n\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\nmode = \"json_object\"\nretry_for = \"60s\"\n"
        ),
    )
    .unwrap();
    let job = sb.path().join("job.toml");
    std::fs::write(
        &job,
        format!(
            "id = \"outage\"\nprompt = \"Write new.\"\nsource = {:?}\neditable = [\"*.txt\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n[limits]\nattempts = 1\n",
            source.to_str().unwrap()
        ),
    )
    .unwrap();
    let started = Instant::now();
    let run = sb.run(&[
        "batch",
        "DATA",
        job.to_str().unwrap(),
        "--provider",
        provider.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(started.elapsed() >= down_for);
    server.join().unwrap();
    let lines = log_lines(&sb);
    let retries: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "provider_retry")
        .collect();
    assert!(retries.len() >= 2, "the wait is not recorded: {lines:#?}");
    assert!(!lines.iter().any(|l| l["type"] == "attempt_interrupted"));
    assert!(run.stderr.contains("provider retry"), "{}", run.stderr);
    let finished: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "attempt_finished")
        .collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["outcome"], "succeeded");
}
