//! Interrupts, resumes and where the time went: two SIGINTs at once (as GNU
//! `timeout` sends them) are one interrupt, a later one still says what
//! the log holds as it quits; a rerun says it is resuming; setup time has
//! its own column.
//!
//! To hold a batch inside its interrupt for as long as a test needs, the
//! test takes the log's lock itself: the batch's writers wait for it, so
//! the batch cannot finish saving until the test lets go.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::harness::{BIN, Sandbox, log_lines};

/// `long` runs `sleep 6` as a tool; `quick` writes, verifies and finishes.
fn jobs(sb: &Sandbox) -> PathBuf {
    let dir = sb.path().join("jobs");
    std::fs::create_dir_all(dir.join("source")).unwrap();
    std::fs::write(dir.join("source/out.txt"), "old\n").unwrap();
    let scripts = [
        (
            "long",
            "{\"kind\":\"write_file\",\"path\":\"out.txt\",\"content\":\"done\\n\"}\n{\"kind\":\"run_tool\",\"program\":\"sleep\",\"args\":[\"6\"]}\n{\"kind\":\"verify\"}\n{\"kind\":\"finish\",\"summary\":\"done\"}\n",
        ),
        (
            "quick",
            "{\"kind\":\"write_file\",\"path\":\"out.txt\",\"content\":\"done\\n\"}\n{\"kind\":\"verify\"}\n{\"kind\":\"finish\",\"summary\":\"done\"}\n",
        ),
    ];
    for (id, script) in scripts {
        std::fs::write(dir.join(format!("{id}.jsonl")), script).unwrap();
        std::fs::write(
            dir.join(format!("{id}.toml")),
            format!(
                "id = \"{id}\"\nprompt = \"Write out.txt.\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"sleep **\", \"true\"]\nverify = [\"true\"]\n\n[provider]\nkind = \"script\"\nscript = \"{id}.jsonl\"\n"
            ),
        )
        .unwrap();
    }
    dir
}

/// Starts `batch DATA jobs/ -j 1` with stdout and stderr in files.
fn spawn_batch(sb: &Sandbox, jobs: &Path) -> Child {
    Command::new(BIN)
        .arg("batch")
        .arg(sb.data())
        .arg(jobs)
        .args(["-j", "1"])
        .current_dir(sb.path())
        .env("CI", "true")
        .stdin(Stdio::null())
        .stdout(File::create(sb.path().join("batch.stdout")).unwrap())
        .stderr(File::create(sb.path().join("batch.stderr")).unwrap())
        .spawn()
        .unwrap()
}

fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the long tool command, then takes the log's lock.
fn hold_the_log_while_long_runs(sb: &Sandbox) -> File {
    wait_until(Duration::from_secs(60), "the long tool command", || {
        log_lines(sb)
            .iter()
            .any(|l| l["job"] == "long" && l["type"] == "decision" && l["kind"] == "run_tool")
    });
    let log = File::open(sb.log()).unwrap();
    log.lock().unwrap();
    log
}

fn interrupt(child: &Child) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
}

#[test]
fn two_sigints_at_once_are_one_interrupt_and_a_rerun_says_it_resumes() {
    let sb = Sandbox::new();
    let jobs = jobs(&sb);
    let mut child = spawn_batch(&sb, &jobs);
    let lock = hold_the_log_while_long_runs(&sb);
    // GNU `timeout -s INT` signals the command and then its process group.
    interrupt(&child);
    interrupt(&child);
    // A second interrupt within a second would quit at once, but this is
    // the same one: the batch is still saving (it waits for the lock).
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the second SIGINT took the hard exit"
    );
    drop(lock);
    let code = wait_for_exit(&mut child, Duration::from_secs(30));
    assert_eq!(code, Some(130));
    let stdout = std::fs::read_to_string(sb.path().join("batch.stdout")).unwrap();
    assert!(stdout.contains("interrupted: state is saved"), "{stdout}");
    assert!(!stdout.contains("interrupted again"), "{stdout}");
    assert!(sb.data().join("report/results.json").is_file());

    let rerun = Command::new(BIN)
        .arg("batch")
        .arg(sb.data())
        .arg(&jobs)
        .args(["-j", "1"])
        .current_dir(sb.path())
        .env("CI", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert_eq!(rerun.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("resuming: 0 done, 1 recovered, 1 queued"),
        "{stderr}"
    );
}

#[test]
fn a_later_sigint_quits_at_once_and_still_says_what_is_saved() {
    let sb = Sandbox::new();
    let jobs = jobs(&sb);
    let mut child = spawn_batch(&sb, &jobs);
    let lock = hold_the_log_while_long_runs(&sb);
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "exited before the test let go"
    );
    interrupt(&child);
    // It quits while the log is still locked: nothing waits for the lock.
    let code = wait_for_exit(&mut child, Duration::from_secs(20));
    drop(lock);
    assert_eq!(code, Some(130));
    let stdout = std::fs::read_to_string(sb.path().join("batch.stdout")).unwrap();
    assert!(
        stdout.contains("interrupted again: quitting at once; state is saved: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("holds 2 jobs: 1 running (recovered by the next run), 1 queued"),
        "{stdout}"
    );
    assert!(
        stdout.contains("run the same command again to finish"),
        "{stdout}"
    );
}

#[test]
fn setup_time_has_its_own_column_in_every_report() {
    let sb = Sandbox::new();
    let dir = sb.path().join("setup");
    std::fs::create_dir_all(dir.join("source")).unwrap();
    std::fs::create_dir_all(dir.join("hidden")).unwrap();
    std::fs::write(dir.join("source/out.txt"), "old\n").unwrap();
    std::fs::write(dir.join("hidden/check.sh"), "grep -qx done out.txt\n").unwrap();
    std::fs::write(
        dir.join("replies.jsonl"),
        "{\"kind\":\"write_file\",\"path\":\"out.txt\",\"content\":\"done\\n\"}\n{\"kind\":\"finish\",\"summary\":\"done\"}\n",
    )
    .unwrap();
    let manifest = dir.join("setup.toml");
    std::fs::write(
        &manifest,
        "id = \"timed\"\nprompt = \"Write out.txt.\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n[setup]\ncommands = [[\"sleep\", \"0.4\"]]\n\n[acceptance]\ndir = \"hidden\"\ncommand = [\"sh\", \"check.sh\"]\nresults = \"exit\"\n\n[provider]\nkind = \"script\"\nscript = \"replies.jsonl\"\n",
    )
    .unwrap();
    sb.run(&["batch", "DATA", manifest.to_str().unwrap()]).ok();
    let report = sb.data().join("report");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("results.json")).unwrap()).unwrap();
    let job = &doc["jobs"][0];
    let setup_ms = job["setup_ms"].as_u64().unwrap();
    assert!(setup_ms >= 400, "{job:#}");
    // The commands of the setup are not the checks': acceptance time
    // holds the baseline and acceptance commands only.
    let commands: u64 = log_lines(&sb)
        .iter()
        .filter(|l| l["type"] == "command" && l["role"] == "setup")
        .map(|l| l["duration_ms"].as_u64().unwrap())
        .sum();
    assert_eq!(setup_ms, commands);
    let checks: u64 = log_lines(&sb)
        .iter()
        .filter(|l| {
            l["type"] == "command" && matches!(l["role"].as_str(), Some("baseline" | "acceptance"))
        })
        .map(|l| l["duration_ms"].as_u64().unwrap())
        .sum();
    assert_eq!(job["acceptance_ms"].as_u64().unwrap(), checks);

    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        crate::harness::md_tables(&md).contains(
            "| instance | model | tools | setup | verify | acceptance | waiting | wall |"
        ),
        "{md}"
    );
    let tsv = std::fs::read_to_string(report.join("results.tsv")).unwrap();
    let header: Vec<&str> = tsv.lines().next().unwrap().split('\t').collect();
    let row: Vec<&str> = tsv.lines().nth(1).unwrap().split('\t').collect();
    let at = header.iter().position(|c| *c == "setup_ms").unwrap();
    assert_eq!(row[at], setup_ms.to_string());
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    let data = crate::harness::html_data(&html);
    let time = data["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "time")
        .unwrap();
    assert!(
        time["headers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h == "setup"),
        "html"
    );
    let junit = std::fs::read_to_string(report.join("junit.xml")).unwrap();
    assert!(junit.contains(&format!("setup_ms={setup_ms}")), "{junit}");
}
