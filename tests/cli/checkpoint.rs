//! The writers' checkpoint of the state (`DATA/state.ckpt`): readers start
//! from it and read only what follows, and never believe it over the log.

use std::path::Path;

use agent_runtime::log::{AppendError, LogWriter, read_snapshot, read_snapshot_full};
use agent_runtime::protocol::{Event, FailureKind, Outcome};
use agent_runtime::state::{Illegal, State};

use crate::harness::Sandbox;
use agent_runtime::protocol::{AttemptFinishedRecord, AttemptStartedRecord};

const JOBS: usize = 300;

fn ckpt(sb: &Sandbox) -> std::path::PathBuf {
    sb.data().join("state.ckpt")
}

/// `JOBS` jobs named `{prefix}-NNNN` in one transaction (the writer keeps a
/// checkpoint of them), some started, failed and retried.
fn fill(log: &Path, prefix: &str) {
    let mut writer = LogWriter::<State>::open(log).unwrap();
    writer
        .transact(|tx| {
            for j in 0..JOBS {
                let id = format!("{prefix}-{j:04}");
                let id = Some(id.as_str());
                tx.append(id, None, Event::bare_enqueued(2))?;
                if j % 3 == 0 {
                    tx.append(
                        id,
                        Some(1),
                        Event::AttemptStarted(AttemptStartedRecord {
                            pid: 4242,
                            agent: None,
                        }),
                    )?;
                    tx.append(
                        id,
                        Some(1),
                        Event::AttemptFinished(AttemptFinishedRecord {
                            outcome: Outcome::Failed,
                            failure_kind: Some(FailureKind::VerifyFailed),
                            integrity: None,
                        }),
                    )?;
                }
                if j % 6 == 0 {
                    tx.append(id, None, Event::Retried {})?;
                }
            }
            Ok::<(), AppendError<Illegal>>(())
        })
        .unwrap();
}

fn status_json(sb: &Sandbox, full: bool) -> serde_json::Value {
    let mut args = vec!["status", "DATA", "--json"];
    if full {
        args.push("--full");
    }
    serde_json::from_str(&sb.run(&args).ok().stdout).unwrap()
}

/// `status` and `status --full` agree, table and JSON; returns the JSON.
fn agree(sb: &Sandbox) -> serde_json::Value {
    let json = status_json(sb, false);
    assert_eq!(json, status_json(sb, true), "the checkpoint misled status");
    let text = sb.run(&["status", "DATA"]).ok();
    let full = sb.run(&["status", "DATA", "--full"]).ok();
    // The one difference: what `status` took from the checkpoint unread.
    let unread = |stderr: &str| -> String {
        stderr
            .lines()
            .filter(|l| !l.contains("taken from the writers' checkpoint"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert!(!full.stderr.contains("taken from the writers' checkpoint"));
    assert_eq!(
        (text.stdout, unread(&text.stderr)),
        (full.stdout, full.stderr)
    );
    json
}

fn row<'a>(json: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row for {id}"))
}

#[test]
fn status_starts_from_the_checkpoint_and_folds_what_follows() {
    let sb = Sandbox::new();
    fill(&sb.log(), "job");
    let header = std::fs::read(ckpt(&sb)).expect("the writer keeps a checkpoint");
    assert!(header.starts_with(b"{\"format\":1,"), "{header:?}");
    let json = agree(&sb);
    assert_eq!(json["jobs"].as_array().unwrap().len(), JOBS);

    // Records after the checkpoint: one about a checkpointed job (decoded
    // from it on demand), one about a new job. Each is its own small
    // transaction, so no new checkpoint covers them.
    let before = std::fs::read(ckpt(&sb)).unwrap();
    sb.run(&["cancel", "DATA", "job-0001"]).ok();
    sb.run(&["enqueue", "DATA", "late"]).ok();
    assert_eq!(std::fs::read(ckpt(&sb)).unwrap(), before, "not due yet");
    let json = agree(&sb);
    assert_eq!(row(&json, "job-0001")["state"], "cancelled");
    assert_eq!(row(&json, "job-0000")["state"], "queued");
    assert_eq!(row(&json, "job-0003")["failure_kind"], "verify_failed");
    assert_eq!(row(&json, "late")["state"], "queued");
    let ids: Vec<&str> = json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.last(), Some(&"late"), "enqueue order holds");
}

#[test]
fn a_checkpoint_that_no_longer_matches_its_log_is_not_used() {
    // Another log of the same shape and length, under the first one's
    // checkpoint: its last covered line differs.
    let a = Sandbox::new();
    fill(&a.log(), "aaa");
    let b = Sandbox::new();
    fill(&b.log(), "bbb");
    assert_eq!(a.log_bytes().len(), b.log_bytes().len());
    std::fs::copy(ckpt(&a), ckpt(&b)).unwrap();
    let json = agree(&b);
    assert!(row(&json, "bbb-0000").is_object());
    assert!(
        json["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"].as_str().unwrap().starts_with("bbb-"))
    );

    // A log cut back to fewer whole lines than the checkpoint covers.
    let bytes = a.log_bytes();
    let lines: Vec<usize> = (bytes.iter().enumerate())
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    std::fs::write(a.log(), &bytes[..lines[9]]).unwrap();
    let json = agree(&a);
    assert_eq!(json["events"], 10);

    // A checkpoint cut short (a torn write), and one whose header claims
    // more sections than any file could hold.
    let sb = Sandbox::new();
    fill(&sb.log(), "job");
    let bytes = std::fs::read(ckpt(&sb)).unwrap();
    std::fs::write(ckpt(&sb), &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(agree(&sb)["jobs"].as_array().unwrap().len(), JOBS);
    let newline = bytes.iter().position(|&b| b == b'\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[..newline]).unwrap();
    header["sections"] = serde_json::json!(1u64 << 50);
    let mut forged = serde_json::to_vec(&header).unwrap();
    forged.extend_from_slice(&bytes[newline..]);
    std::fs::write(ckpt(&sb), &forged).unwrap();
    assert_eq!(agree(&sb)["jobs"].as_array().unwrap().len(), JOBS);

    // A checkpoint with a flipped byte, in its summaries or in a job a
    // later record needs: the reader folds the whole log instead.
    for (offset, tail) in [(0.2, false), (0.9, true)] {
        let sb = Sandbox::new();
        fill(&sb.log(), "job");
        let mut bytes = std::fs::read(ckpt(&sb)).unwrap();
        let at = (bytes.len() as f64 * offset) as usize;
        bytes[at] ^= 0x20;
        std::fs::write(ckpt(&sb), &bytes).unwrap();
        if tail {
            sb.run(&["cancel", "DATA", &format!("job-{:04}", JOBS - 2)])
                .ok();
        }
        let json = agree(&sb);
        assert_eq!(json["jobs"].as_array().unwrap().len(), JOBS);
        assert!(json["anomalies"].as_array().unwrap().is_empty(), "{json}");
    }
}

#[test]
fn status_never_writes_it_and_the_next_writer_rebuilds_it() {
    let sb = Sandbox::new();
    fill(&sb.log(), "job");
    std::fs::remove_file(ckpt(&sb)).unwrap();
    agree(&sb);
    // watch draws frames until every job is terminal: these stay queued.
    let mut watch = sb
        .command(&["watch", "DATA", "--interval-ms", "20"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    watch.kill().unwrap();
    watch.wait().unwrap();
    assert!(!ckpt(&sb).exists(), "a reader wrote a checkpoint");
    let log = sb.log_bytes();
    sb.run(&["enqueue", "DATA", "one-more"]).ok();
    assert!(ckpt(&sb).exists(), "the writer rebuilt its checkpoint");
    assert!(sb.log_bytes().starts_with(&log));
    agree(&sb);
}

#[test]
fn writers_still_check_the_whole_log() {
    // A byte flipped inside the prefix the checkpoint covers (not its last
    // line) is past what the checkpoint checks: `status` reads from it,
    // but `status --full` and every writer fold the whole log, find the
    // corrupt line and append nothing.
    let sb = Sandbox::new();
    fill(&sb.log(), "job");
    sb.run(&["cancel", "DATA", "job-0001"]).ok();
    let mut bytes = sb.log_bytes();
    let second = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes[second + 40] ^= 0x04;
    std::fs::write(sb.log(), &bytes).unwrap();
    // Shown by the checkpoint, with the record after it folded in.
    let json = status_json(&sb, false);
    assert_eq!(row(&json, "job-0001")["state"], "cancelled");
    assert_eq!(row(&json, "job-0002")["state"], "queued");
    sb.run(&["status", "DATA", "--full"])
        .code(2)
        .stderr_has("line 2");
    sb.run(&["enqueue", "DATA", "after"])
        .code(2)
        .stderr_has("line 2");
    assert_eq!(sb.log_bytes(), bytes, "a writer appended to a corrupt log");
}

#[test]
fn the_whole_state_comes_back_from_the_checkpoint() {
    // A real batch: baselines, verdicts, inventories, manifests, patches.
    let sb = Sandbox::new();
    let jobs = concat!(env!("CARGO_MANIFEST_DIR"), "/jobs");
    sb.run(&["batch", "DATA", jobs, "-j", "2", "--repeat", "2"])
        .ok();
    assert!(ckpt(&sb).exists());
    let from_ckpt = read_snapshot::<State>(&sb.log()).unwrap();
    let full = read_snapshot_full::<State>(&sb.log()).unwrap();
    assert_eq!(from_ckpt.state.jobs(), full.state.jobs());
    assert_eq!(from_ckpt.events, full.events);
    assert_eq!(from_ckpt.state.last_seq, full.state.last_seq);
    for job in full.state.jobs() {
        if let Some(key) = job.baseline.as_ref().and_then(|b| b.key.as_deref()) {
            assert_eq!(
                from_ckpt.state.baseline_for(key),
                full.state.baseline_for(key)
            );
        }
    }
    assert!(
        full.state
            .jobs()
            .iter()
            .any(|j| j.manifest.is_some() && j.baseline.is_some())
    );

    // The checkpoint was read, not passed over: with a line inside the
    // prefix it covers made corrupt, only the whole replay sees it.
    let mut bytes = sb.log_bytes();
    let second = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes[second + 40] ^= 0x04;
    std::fs::write(sb.log(), &bytes).unwrap();
    assert!(read_snapshot_full::<State>(&sb.log()).is_err());
    let again = read_snapshot::<State>(&sb.log()).unwrap();
    assert_eq!(again.state.jobs(), full.state.jobs());
}

#[test]
fn a_log_with_a_refused_record_gets_no_checkpoint_so_status_still_reports_it() {
    // A record the reducer refuses, written by something that skipped the
    // checks: a checkpoint past it would hide the anomaly from `status`.
    let sb = Sandbox::new();
    fill(&sb.log(), "job");
    std::fs::remove_file(ckpt(&sb)).unwrap();
    let next = sb.log_bytes().iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let foreign = agent_runtime::protocol::Record {
        seq: next,
        ts_ms: 1,
        job: Some("ghost".into()),
        attempt: None,
        event: Event::Retried {},
    };
    let mut bytes = sb.log_bytes();
    bytes.extend(foreign.encode());
    std::fs::write(sb.log(), &bytes).unwrap();
    // Enough new records for a writer to checkpoint, were it allowed.
    for i in 0..70 {
        sb.run(&["enqueue", "DATA", &format!("more-{i}")]).ok();
    }
    assert!(!ckpt(&sb).exists(), "a checkpoint past a refused record");
    let json = agree(&sb);
    let anomalies = json["anomalies"].as_array().unwrap();
    assert_eq!(anomalies.len(), 1, "{json}");
    assert!(anomalies[0].as_str().unwrap().contains("ghost"), "{json}");
}

/// A record corrupted in place inside the prefix the checkpoint covers
/// (same length, one byte changed): `status` still starts from the
/// checkpoint, but says in its footer that it did not read those records
/// again; `status --full` and `doctor DATA` read them and refuse the log
/// naming the line; a writer refuses to append.
#[test]
fn a_record_corrupted_inside_the_checkpoint_is_found_by_whoever_reads_it() {
    let sb = Sandbox::new();
    fill(&sb.log(), "job");
    assert!(ckpt(&sb).is_file());
    let status = sb.run(&["status", "DATA"]).ok();
    let footer = format!(
        "the first {} records were taken from the writers' checkpoint",
        status_json(&sb, true)["events"]
    );
    assert!(status.stderr.contains(&footer), "{status:#?}");
    let doctor = sb.run(&["doctor", "DATA"]).ok();
    assert!(
        doctor.stdout.contains("read and checked from the first"),
        "{doctor:#?}"
    );

    // Line 42: `job-` becomes `jab-` in its id, the checksum unchanged.
    let mut bytes = sb.log_bytes();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            (bytes.iter().enumerate())
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let line = &bytes[starts[41]..starts[42]];
    let at = starts[41] + line.windows(4).position(|w| w == b"job-").unwrap();
    bytes[at + 1] = b'a';
    std::fs::write(sb.log(), &bytes).unwrap();

    let status = sb.run(&["status", "DATA"]).ok();
    assert!(status.stderr.contains("not checked again"), "{status:#?}");
    for args in [
        &["status", "DATA", "--full"][..],
        &["doctor", "DATA"][..],
        &["enqueue", "DATA", "late"][..],
    ] {
        let run = sb.run(args);
        assert_eq!(run.code, 2, "{args:?}: {run:#?}");
        assert!(
            run.stderr.contains("is corrupt at line 42"),
            "{args:?}: {run:#?}"
        );
    }
    assert_eq!(sb.log_bytes(), bytes, "nothing was appended");
}
