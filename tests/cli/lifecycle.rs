//! The job lifecycle through the real binary, with runner processes played by
//! this test binary re-executing itself (see `child_runner`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_runtime::cancel::CancelToken;
use agent_runtime::lifecycle::{DataDir, Store, watch_for_cancel};
use agent_runtime::protocol::{FailureKind, Outcome};

use crate::harness::{BIN, Sandbox, job_state, log_lines};

/// A runner process: claims `CHILD_JOB` in `CHILD_DATA` and then, per
/// `CHILD_MODE`, holds the lease forever (`hold`), finishes (`succeed`,
/// `fail`), or waits for a cancel written by another process (`cancel`).
/// Ignored in normal runs; the tests below start it on purpose.
#[test]
#[ignore = "runner child process, started by other tests"]
fn child_runner() {
    let data = std::env::var("CHILD_DATA").unwrap();
    let job = std::env::var("CHILD_JOB").unwrap();
    let mode = std::env::var("CHILD_MODE").unwrap();
    let mut store = Store::open(DataDir::new(data)).unwrap();
    let claim = store.claim(&job).unwrap();
    say(&format!("claimed attempt={}", claim.attempt));
    match mode.as_str() {
        "hold" => loop {
            std::thread::sleep(Duration::from_secs(60));
        },
        "succeed" => store.finish(claim, Outcome::Succeeded, None).unwrap(),
        "fail" => store
            .finish(claim, Outcome::Failed, Some(FailureKind::VerifyFailed))
            .unwrap(),
        "cancel" => {
            let cancel = CancelToken::new();
            let stop = CancelToken::new();
            let watcher = watch_for_cancel(
                store.follower(&claim).unwrap(),
                job.clone(),
                cancel.clone(),
                stop.clone(),
            )
            .unwrap();
            let noticed = cancel.wait_timeout(Duration::from_secs(20));
            stop.cancel();
            watcher.join().unwrap();
            assert!(noticed, "cancel never noticed");
            say("noticed cancel");
            store
                .finish(claim, Outcome::Failed, Some(FailureKind::Cancelled))
                .unwrap();
        }
        other => panic!("unknown CHILD_MODE {other}"),
    }
}

/// Writes a line to the parent test and flushes it at once.
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// Starts `child_runner` and waits until it has claimed the job. The caller
/// owns the child and waits for it (or kills it).
#[allow(clippy::zombie_processes)]
fn spawn_runner(
    sb: &Sandbox,
    job: &str,
    mode: &str,
) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "lifecycle::child_runner",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CHILD_DATA", sb.data())
        .env("CHILD_JOB", job)
        .env("CHILD_MODE", mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            let status = child.wait();
            panic!("runner exited before claiming: {status:?}");
        }
        if line.contains("claimed attempt=") {
            return (child, out);
        }
    }
}

fn run_to_end(sb: &Sandbox, job: &str, mode: &str) {
    let (mut child, mut out) = spawn_runner(sb, job, mode);
    std::io::copy(&mut out, &mut std::io::sink()).unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn readme_walkthrough_works_verbatim() {
    let sb = Sandbox::new();
    let run = |args: &[&str]| {
        crate::harness::Run::from(
            Command::new(BIN)
                .args(args)
                .current_dir(sb.path())
                .output()
                .unwrap(),
        )
    };
    run(&["enqueue", "./runtime-data", "demo-task"])
        .ok()
        .stdout_has("enqueued=true");
    run(&["enqueue", "./runtime-data", "demo-task"])
        .ok()
        .stdout_has("enqueued=false");
    run(&["status", "./runtime-data"])
        .ok()
        .stdout_has("demo-task")
        .stdout_has("queued");
    run(&["cancel", "./runtime-data", "demo-task"])
        .ok()
        .stdout_has("cancelled=true");
    let status = run(&["status", "./runtime-data"]).ok();
    let row = status
        .stdout
        .lines()
        .find(|l| l.starts_with("demo-task"))
        .unwrap();
    assert!(row.contains("cancelled"), "{row}");
}

#[test]
fn illegal_transitions_are_refused_and_write_nothing() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "done", "--attempts", "1"]).ok();
    run_to_end(&sb, "done", "succeed");
    sb.run(&["enqueue", "DATA", "waiting"]).ok();
    let before = sb.log_bytes();
    for (args, message) in [
        (
            vec!["cancel", "DATA", "done"],
            "cannot cancel job \"done\": it has already succeeded",
        ),
        (
            vec!["retry", "DATA", "waiting"],
            "cannot retry job \"waiting\": it is queued",
        ),
        (
            vec!["retry", "DATA", "done"],
            "cannot retry job \"done\": it has already succeeded",
        ),
        (vec!["cancel", "DATA", "ghost"], "no job with id \"ghost\""),
        (vec!["retry", "DATA", "ghost"], "no job with id \"ghost\""),
    ] {
        sb.run(&args).code(2).one_line_error().stderr_has(message);
        assert_eq!(sb.log_bytes(), before, "{args:?} wrote to the log");
    }
}

#[test]
fn retry_requeues_a_failed_job_until_attempts_run_out() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "flaky", "--attempts", "2"])
        .ok();
    run_to_end(&sb, "flaky", "fail");
    assert_eq!(job_state(&sb, "flaky"), "failed");
    sb.run(&["retry", "DATA", "flaky"])
        .ok()
        .stdout_has("next_attempt=2");
    assert_eq!(job_state(&sb, "flaky"), "queued");
    run_to_end(&sb, "flaky", "fail");
    sb.run(&["retry", "DATA", "flaky"])
        .code(2)
        .stderr_has("cannot retry job \"flaky\": all 2 attempts are used");
}

#[test]
fn a_killed_lease_holder_is_recorded_interrupted_by_the_next_writer() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "victim", "--attempts", "3"])
        .ok();
    sb.run(&["enqueue", "DATA", "bystander"]).ok();
    let (mut child, _out) = spawn_runner(&sb, "victim", "hold");
    assert_eq!(job_state(&sb, "victim"), "running");
    // While the runner lives, writers leave its attempt alone.
    sb.run(&["enqueue", "DATA", "other"]).ok();
    assert!(
        !log_lines(&sb)
            .iter()
            .any(|l| l["type"] == "attempt_interrupted")
    );

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    let before = log_lines(&sb);
    // Readers notice but do not write.
    sb.run(&["status", "DATA"])
        .ok()
        .stderr_has("victim attempt 1 has no live runner");
    assert_eq!(log_lines(&sb), before);

    sb.run(&["enqueue", "DATA", "late"]).ok();
    let after = log_lines(&sb);
    assert_eq!(&after[..before.len()], &before[..], "history changed");
    let new: Vec<_> = after[before.len()..]
        .iter()
        .map(|l| (l["type"].clone(), l["job"].clone()))
        .collect();
    assert_eq!(
        new,
        vec![
            ("attempt_interrupted".into(), "victim".into()),
            ("enqueued".into(), "late".into())
        ]
    );
    assert_eq!(after[before.len()]["attempt"], 1);
    let status = sb.run(&["status", "DATA", "--json"]).ok();
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let victim = &doc["jobs"][0];
    assert_eq!(
        victim["state"], "queued",
        "a runner that died is not the job's failure: it goes back to the queue"
    );
    assert_eq!(
        victim["attempt"], 0,
        "the interrupted attempt does not count"
    );
    assert_eq!(victim["failure_kind"], "interrupted");
    assert_eq!(doc["jobs"][1]["state"], "queued", "bystander untouched");
}

#[test]
fn a_running_owner_notices_a_cancel_from_another_process_within_a_second() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "long"]).ok();
    let (mut child, mut out) = spawn_runner(&sb, "long", "cancel");
    let started = Instant::now();
    sb.run(&["cancel", "DATA", "long"]).ok();
    let mut line = String::new();
    while !line.contains("noticed cancel") {
        line.clear();
        assert_ne!(
            out.read_line(&mut line).unwrap(),
            0,
            "runner exited without noticing"
        );
    }
    let noticed = started.elapsed();
    std::io::copy(&mut out, &mut std::io::sink()).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(noticed < Duration::from_secs(1), "took {noticed:?}");
    let lines = log_lines(&sb);
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "attempt_finished");
    assert_eq!(last["failure_kind"], "cancelled");
    assert_eq!(job_state(&sb, "long"), "cancelled");
}

#[test]
fn bad_input_gets_one_line_errors_and_leaves_the_log_alone() {
    let sb = Sandbox::new();
    sb.run(&["frobnicate"])
        .code(2)
        .stderr_has("unrecognized subcommand");
    sb.run(&["status", "DATA"])
        .code(2)
        .one_line_error()
        .stderr_has("no log at ");
    assert!(!sb.data().exists(), "status created the data dir");
    sb.run(&["cancel", "DATA", "x"])
        .code(2)
        .one_line_error()
        .stderr_has("no log at ");
    assert!(!sb.data().exists(), "cancel created the data dir");

    sb.run(&["enqueue", "DATA", "fine"]).ok();
    let before = sb.log_bytes();
    for id in ["has space", "a/b", "..", "../escape", ".hidden", ""] {
        sb.run(&["enqueue", "DATA", id])
            .code(2)
            .one_line_error()
            .stderr_has("job id");
        sb.run(&["cancel", "DATA", id])
            .code(2)
            .one_line_error()
            .stderr_has("job id");
    }
    assert_eq!(sb.log_bytes(), before);
    sb.run(&["enqueue", "DATA", "x", "--attempts", "0"]).code(2);
    assert_eq!(sb.log_bytes(), before);
}

#[test]
fn every_command_has_help() {
    for cmd in ["enqueue", "status", "watch", "cancel", "retry"] {
        Sandbox::new()
            .run(&[cmd, "--help"])
            .ok()
            .stdout_has("Usage:");
    }
}

#[test]
fn watch_exits_once_every_job_is_terminal() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "a"]).ok();
    sb.run(&["enqueue", "DATA", "b"]).ok();
    let mut watch = Command::new(BIN)
        .args(["watch", sb.data().to_str().unwrap(), "--interval-ms", "50"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Its frames, line by line, as it prints them.
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stdout = watch.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut text = String::new();
    let read_until = |needle: &str, text: &mut String| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("watch never printed {needle:?}:\n{text}"));
            text.push_str(&line);
            text.push('\n');
            if line.contains(needle) {
                return;
            }
        }
    };
    sb.run(&["cancel", "DATA", "a"]).ok();
    // The frame that shows the cancel: watch has seen it and goes on.
    read_until("1 cancelled", &mut text);
    assert!(
        watch.try_wait().unwrap().is_none(),
        "watch exited with a job still queued"
    );
    sb.run(&["cancel", "DATA", "b"]).ok();
    read_until("2 jobs: 2 cancelled", &mut text);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = watch.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "watch did not exit:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{text}");
    reader.join().unwrap();
}

#[test]
fn a_reader_that_goes_away_is_not_an_error() {
    use std::io::BufRead;
    let sb = Sandbox::new();
    let mut writer =
        agent_runtime::log::LogWriter::<agent_runtime::state::State>::open(&sb.log()).unwrap();
    writer
        .transact(|tx| {
            for i in 0..3000 {
                let id = format!("job-{i:05}");
                tx.append(
                    Some(&id),
                    None,
                    agent_runtime::protocol::Event::bare_enqueued(1),
                )?;
            }
            Ok::<(), agent_runtime::log::AppendError<agent_runtime::state::Illegal>>(())
        })
        .unwrap();
    drop(writer);
    let mut status = Command::new(BIN)
        .args(["status", sb.data().to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(status.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("JOB"));
    let out = status.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
