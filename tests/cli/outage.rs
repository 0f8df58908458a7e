//! A provider that goes away while a batch runs is waited out, not charged
//! to the model: it refuses connections for a while, then answers, and the
//! job completes; the wait is in the log and the progress lines.

use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::harness::{Run, Sandbox, log_lines, wait_until};
use crate::mock_model::{assistant_turns, read_request, reply};

/// Answers one chat-completions request: a write first, then (once the
/// conversation holds a reply) a finish.
fn answer(stream: TcpStream) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    let content = if assistant_turns(&request) > 0 {
        r#"{"kind":"finish","summary":"done"}"#
    } else {
        r#"{"kind":"write_file","path":"a.txt","content":"new\n"}"#
    };
    reply(stream, content, (10, 5));
}

#[test]
fn a_provider_down_for_20_s_is_waited_out_and_every_job_completes() {
    let sb = Sandbox::new();
    let source = sb.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("a.txt"), "old\n").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let down_for = Duration::from_secs(20);
    let jobs = 4;
    let (back_tx, back_rx) = std::sync::mpsc::channel();
    let server = std::thread::spawn(move || {
        // The preflight's connection, then the server goes away.
        let _ = listener.accept();
        drop(listener);
        std::thread::sleep(down_for);
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let _ = back_tx.send(Instant::now());
        for _ in 0..jobs * 2 {
            let (stream, _) = listener.accept().unwrap();
            answer(stream);
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
    let mut files = Vec::new();
    for n in 0..jobs {
        let job = sb.path().join(format!("job{n}.toml"));
        std::fs::write(
            &job,
            format!(
                "id = \"outage{n}\"\nprompt = \"Write new.\"\nsource = {:?}\neditable = [\"*.txt\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n[limits]\nattempts = 1\n",
                source.to_str().unwrap()
            ),
        )
        .unwrap();
        files.push(job.to_str().unwrap().to_string());
    }
    let started = Instant::now();
    let mut args = vec![
        "batch",
        "DATA",
        "-j",
        "2",
        "--provider",
        provider.to_str().unwrap(),
    ];
    args.extend(files.iter().map(String::as_str));
    let batch = sb
        .command(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // While the provider is down, the wait is on record and `status` says
    // so: as soon as the first retry is in the log, well before the
    // provider is back.
    wait_until(down_for / 2, "a provider retry in the log", || {
        log_lines(&sb).iter().any(|l| l["type"] == "provider_retry")
    });
    let waiting = sb.run(&["status", "DATA"]).ok();
    assert!(
        waiting
            .stdout
            .contains("waiting for provider: connection refused"),
        "{}",
        waiting.stdout
    );
    let during: Vec<_> = log_lines(&sb)
        .into_iter()
        .filter(|l| l["type"] == "provider_retry")
        .collect();
    assert!(!during.is_empty(), "no retry on record during the outage");

    let run = Run::from(batch.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:#?}");
    let back = back_rx.recv().unwrap();
    assert!(back.duration_since(started) >= down_for - Duration::from_secs(1));
    server.join().unwrap();
    let lines = log_lines(&sb);
    assert!(!lines.iter().any(|l| l["type"] == "attempt_interrupted"));
    assert!(!lines.iter().any(|l| l["type"] == "provider_failed"));
    assert!(
        run.stderr.contains("waiting for local: connection refused"),
        "{}",
        run.stderr
    );
    let finished: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "attempt_finished")
        .collect();
    assert_eq!(finished.len(), jobs);
    assert!(
        finished.iter().all(|l| l["outcome"] == "succeeded"),
        "{finished:#?}"
    );
    let mut started_per_job: std::collections::HashMap<&str, usize> = Default::default();
    for l in lines.iter().filter(|l| l["type"] == "attempt_started") {
        *started_per_job
            .entry(l["job"].as_str().unwrap())
            .or_default() += 1;
    }
    assert_eq!(started_per_job.len(), jobs, "{started_per_job:?}");
    assert!(
        started_per_job.values().all(|&n| n == 1),
        "a job used more than its one attempt: {started_per_job:?}"
    );
}
