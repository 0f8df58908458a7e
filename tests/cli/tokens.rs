//! Provider numbers are checked: a reply claiming 2^64-1 prompt tokens (or
//! a negative count) is a provider error naming the number, totals never
//! wrap, and the token budget still trips on honest counts.

use std::net::{TcpListener, TcpStream};
use std::path::Path;

use crate::harness::Sandbox;
use crate::mock_model::read_request;

/// A chat-completions server whose every reply is a `write_file` decision
/// reporting `usage` as raw JSON.
fn serve(usage: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            answer(stream, usage);
        }
    });
    port
}

fn answer(mut stream: TcpStream, usage: &str) {
    use std::io::Write;
    if read_request(&stream).is_none() {
        return;
    }
    let content =
        serde_json::to_string(r#"{"kind":"write_file","path":"a.txt","content":"new\n"}"#).unwrap();
    let body = format!(
        r#"{{"choices":[{{"message":{{"role":"assistant","content":{content}}}}}],"usage":{usage}}}"#
    );
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A priced provider file for the server on `port` and a job with
/// `token_budget`; returns the job's path.
fn setup(sb: &Sandbox, port: u16, token_budget: u64) -> String {
    let source = sb.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("a.txt"), "old\n").unwrap();
    std::fs::write(
        sb.path().join("local.toml"),
        format!(
            "name = \"local\"\n\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\nmode = \"json_object\"\n\n[price]\ninput_per_mtok = 10.0\noutput_per_mtok = 30.0\n"
        ),
    )
    .unwrap();
    let job = sb.path().join("j.toml");
    std::fs::write(
        &job,
        format!(
            "id = \"j\"\nprompt = \"Make a.txt say new.\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"grep **\"]\nverify = [\"grep\", \"-qx\", \"new\", \"a.txt\"]\n\n[limits]\nattempts = 1\nmax_steps = 5\ntoken_budget = {token_budget}\n"
        ),
    )
    .unwrap();
    job.to_str().unwrap().to_string()
}

fn results(data: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(data.join("report/results.json")).unwrap()).unwrap()
}

/// A batch of the job against a server reporting `usage`, failed (exit 1);
/// the summary line of the job's `kind`.
fn failed_batch(usage: &'static str, kind: &str) -> (Sandbox, String) {
    let sb = Sandbox::new();
    let job = setup(&sb, serve(usage), 1000);
    let batch = sb
        .run(&["batch", "DATA", "--provider", "local.toml", &job])
        .code(1);
    let prefix = format!("j@local: {kind}: ");
    let line = batch
        .stderr
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {kind}: {batch:#?}"))
        .to_string();
    (sb, line)
}

#[test]
fn a_reply_claiming_2_pow_64_minus_1_tokens_is_a_provider_error_naming_the_number() {
    let (sb, line) = failed_batch(
        r#"{"prompt_tokens":18446744073709551615,"completion_tokens":1}"#,
        "provider_error",
    );
    assert!(line.contains("18446744073709551615"), "{line}");
    let doc = results(&sb.data());
    let job = &doc["jobs"][0];
    assert_eq!(job["failure_kind"], "provider_error", "{job:#}");
    assert!(
        job["cause"]
            .as_str()
            .unwrap()
            .contains("18446744073709551615")
    );
    // Nothing of the claim was counted: no total wrapped or grew.
    assert_eq!(job["input_tokens"], 0, "{job:#}");
    assert_eq!(doc["totals"]["input_tokens"], 0);
    let cost = job["cost_usd"].as_f64().unwrap();
    assert!(cost.is_finite() && cost == 0.0, "{cost}");
    let md = std::fs::read_to_string(sb.data().join("report/report.md")).unwrap();
    assert!(!md.contains("18,446,744,073,709,551,6"), "{md}");
}

#[test]
fn a_negative_count_is_a_provider_error_too() {
    let (_sb, line) = failed_batch(
        r#"{"prompt_tokens":-5,"completion_tokens":1}"#,
        "provider_error",
    );
    assert!(line.contains("-5"), "{line}");
}

#[test]
fn the_token_budget_still_trips_on_large_honest_counts() {
    // Under the per-reply limit, over the job's budget after one reply.
    let (sb, line) = failed_batch(
        r#"{"prompt_tokens":9999999,"completion_tokens":9999999}"#,
        "token_budget",
    );
    assert!(
        line.contains("19999998 tokens used, the budget is 1000"),
        "{line}"
    );
    let doc = results(&sb.data());
    assert_eq!(doc["jobs"][0]["input_tokens"], 9_999_999);
    assert_eq!(doc["jobs"][0]["provider_calls"], 1);
    assert!(doc["jobs"][0]["cost_usd"].as_f64().unwrap().is_finite());
}
