//! Cost: every billed call counts (an unusable reply too), reports match
//! tokens × prices, and `--max-cost` stops a parallel sweep at its cap.

use std::net::{TcpListener, TcpStream};

use crate::harness::Sandbox;
use crate::mock_model::{assistant_turns, read_request, reply};

const INPUT_PER_MTOK: f64 = 10.0;
const OUTPUT_PER_MTOK: f64 = 30.0;
/// Tokens the mock reports per call: 1000 in, 100 out, so 0.013 USD.
const CALL_USD: f64 = (1000.0 * INPUT_PER_MTOK + 100.0 * OUTPUT_PER_MTOK) / 1e6;

/// Answers by how far the conversation is: prose first (an invalid
/// decision, billed all the same), then write, verify, finish.
fn answer(stream: TcpStream) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    let content = match assistant_turns(&request) {
        0 => "Let me think about this first.",
        1 => r#"{"kind":"write_file","path":"a.txt","content":"new\n"}"#,
        2 => r#"{"kind":"verify"}"#,
        _ => r#"{"kind":"finish","summary":"done"}"#,
    };
    reply(stream, content, (1000, 100));
}

fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            answer(stream);
        }
    });
    port
}

fn setup(sb: &Sandbox, jobs: usize, priced: bool) -> Vec<String> {
    let source = sb.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("a.txt"), "old\n").unwrap();
    let port = serve();
    let price = if priced {
        format!(
            "\n[price]\ninput_per_mtok = {INPUT_PER_MTOK}\noutput_per_mtok = {OUTPUT_PER_MTOK}\n"
        )
    } else {
        String::new()
    };
    std::fs::write(
        sb.path().join("local.toml"),
        format!(
            "name = \"local\"\n\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\nmode = \"json_object\"\n{price}"
        ),
    )
    .unwrap();
    (0..jobs)
        .map(|n| {
            let job = sb.path().join(format!("j{n}.toml"));
            std::fs::write(
                &job,
                format!(
                    "id = \"j{n}\"\nprompt = \"Make a.txt say new.\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"grep **\"]\nverify = [\"grep\", \"-qx\", \"new\", \"a.txt\"]\n\n[limits]\nattempts = 1\n"
                ),
            )
            .unwrap();
            job.to_str().unwrap().to_string()
        })
        .collect()
}

fn results(sb: &Sandbox) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(sb.data().join("report/results.json")).unwrap()).unwrap()
}

#[test]
fn costs_match_tokens_times_prices_and_count_unusable_replies() {
    let sb = Sandbox::new();
    let jobs = setup(&sb, 2, true);
    let mut args = vec!["batch", "DATA", "--provider", "local.toml"];
    args.extend(jobs.iter().map(String::as_str));
    sb.run(&args).ok();
    let results = results(&sb);
    let mut total = 0.0;
    for job in results["jobs"].as_array().unwrap() {
        assert_eq!(job["outcome"], "succeeded", "{job:#}");
        // Four calls, the first an invalid decision: all four billed.
        assert_eq!(job["provider_calls"], 4);
        assert_eq!(job["invalid_decisions"], 1);
        let by_hand = (job["input_tokens"].as_f64().unwrap() * INPUT_PER_MTOK
            + job["output_tokens"].as_f64().unwrap() * OUTPUT_PER_MTOK)
            / 1e6;
        let cost = job["cost_usd"].as_f64().unwrap();
        assert!((cost - by_hand).abs() < 1e-9, "{cost} vs {by_hand}");
        assert!((cost - 4.0 * CALL_USD).abs() < 1e-9, "{cost}");
        total += cost;
    }
    let totals = &results["totals"];
    assert!(
        (totals["cost_usd"].as_f64().unwrap() - total).abs() < 1e-9,
        "{totals:#}"
    );
    assert!(
        (totals["cost_per_success_usd"].as_f64().unwrap() - total / 2.0).abs() < 1e-9,
        "{totals:#}"
    );
    let md = std::fs::read_to_string(sb.data().join("report/report.md")).unwrap();
    assert!(md.contains("cost $0.1040 ($0.0520 per success)"), "{md}");
    assert!(md.contains("## Where the time went"), "{md}");
    let tsv = std::fs::read_to_string(sb.data().join("report/results.tsv")).unwrap();
    assert!(tsv.lines().next().unwrap().contains("cost_usd"));
}

fn sweep(
    sb: &Sandbox,
    jobs: &[String],
    workers: &str,
    cap: f64,
) -> (crate::harness::Run, serde_json::Value) {
    let cap_text = cap.to_string();
    let mut args = vec![
        "batch",
        "DATA",
        "-j",
        workers,
        "--provider",
        "local.toml",
        "--max-cost",
        &cap_text,
    ];
    args.extend(jobs.iter().map(String::as_str));
    let run = sb.run(&args);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stdout.contains("cap reached"), "{}", run.stdout);
    let results = results(sb);
    (run, results)
}

fn outcomes(results: &serde_json::Value) -> (usize, usize, usize) {
    let jobs = results["jobs"].as_array().unwrap();
    let count = |f: &dyn Fn(&serde_json::Value) -> bool| jobs.iter().filter(|j| f(j)).count();
    for job in jobs {
        if job["outcome"] == "failed" {
            assert_eq!(job["failure_kind"], "budget_exceeded", "{job:#}");
        }
        if job["outcome"] == "pending" {
            assert_eq!(job["attempts"], 0, "a started job is not terminal: {job:#}");
        }
    }
    (
        count(&|j| j["outcome"] == "succeeded"),
        count(&|j| j["outcome"] == "failed"),
        count(&|j| j["outcome"] == "pending"),
    )
}

#[test]
fn max_cost_stops_a_running_job_at_its_next_step() {
    let sb = Sandbox::new();
    let jobs = setup(&sb, 10, true);
    // 13 calls cost 0.169, under the cap; the 14th (job 4's second) goes
    // over it, so job 4 stops before its third call.
    let (_, results) = sweep(&sb, &jobs, "1", 0.17);
    assert_eq!(outcomes(&results), (3, 1, 6), "{results:#}");
    let spent = results["totals"]["cost_usd"].as_f64().unwrap();
    assert!((spent - 14.0 * CALL_USD).abs() < 1e-9, "spent {spent}");
}

#[test]
fn max_cost_stops_a_parallel_sweep_at_its_cap() {
    let sb = Sandbox::new();
    let jobs = setup(&sb, 10, true);
    // The sweep would spend 10 × 4 × 0.013 = 0.52 USD.
    let cap = 0.2;
    let (_, results) = sweep(&sb, &jobs, "2", cap);
    let spent = results["totals"]["cost_usd"].as_f64().unwrap();
    // At the cap, over it by at most the calls in flight (one per worker).
    assert!(spent >= cap - 1e-9, "spent {spent}");
    assert!(spent <= cap + 2.0 * CALL_USD + 1e-9, "spent {spent}");
    let (_, _, pending) = outcomes(&results);
    assert!(
        pending >= 1,
        "every job started: the cap did not hold back the queue"
    );
    eprintln!(
        "max-cost: cap {cap}, spent {spent:.4}, overshoot {:.4}",
        spent - cap
    );
}

#[test]
fn max_cost_needs_a_price_before_anything_runs() {
    let sb = Sandbox::new();
    let jobs = setup(&sb, 1, false);
    let run = sb.run(&[
        "batch",
        "DATA",
        "--provider",
        "local.toml",
        "--max-cost",
        "1",
        &jobs[0],
    ]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(
        run.stderr.contains("provider local has none"),
        "{}",
        run.stderr
    );
    assert!(!sb.data().join("events.log").exists());
}
