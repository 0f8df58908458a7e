//! `cargo bench --bench log`: append and replay throughput of the event log,
//! and `status` on a log of 1,000,000 events.
//!
//! Prints `BENCH log append_per_s=<n> replay_per_s=<n> events=<n> ...`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::time::{Duration, Instant};

use agent_runtime::log::{AppendError, LogWriter, read_snapshot};
use agent_runtime::protocol::{AttemptFinishedRecord, AttemptStartedRecord};
use agent_runtime::protocol::{Event, FailureKind, Outcome};
use agent_runtime::state::{Illegal, State};

const EVENTS: u64 = 1_000_000;
const SYNCED_APPENDS: u64 = 2_000;
const RUNS: usize = 5;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Appends `events` lifecycle events for `events / 4` jobs in one transaction.
fn fill(writer: &mut LogWriter<State>, events: u64) {
    writer
        .transact(|tx| {
            for j in 0..events / 4 {
                let id = format!("job-{j:07}");
                let id = Some(id.as_str());
                tx.append(id, None, Event::bare_enqueued(2))?;
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
                tx.append(id, None, Event::Retried {})?;
            }
            Ok::<(), AppendError<Illegal>>(())
        })
        .unwrap();
}

fn main() {
    let dir = tempfile::tempdir().unwrap();

    // Appends as runners do them: one transaction per state change, each
    // fsynced before the lock is released.
    let synced_path = dir.path().join("synced/events.log");
    let mut writer = LogWriter::<State>::open(&synced_path).unwrap();
    let started = Instant::now();
    for j in 0..SYNCED_APPENDS {
        let id = format!("s-{j}");
        writer
            .transact(|tx| {
                tx.append(Some(&id), None, Event::bare_enqueued(1))
                    .map(|_| ())
            })
            .unwrap();
    }
    let append_per_s = SYNCED_APPENDS as f64 / started.elapsed().as_secs_f64();

    // Appends grouped in one transaction (one fsync at the end), which also
    // builds the big log for the replay measurements.
    let data = dir.path().join("big");
    let big_path = data.join("events.log");
    let mut writer = LogWriter::<State>::open(&big_path).unwrap();
    let started = Instant::now();
    fill(&mut writer, EVENTS);
    let grouped_append_per_s = EVENTS as f64 / started.elapsed().as_secs_f64();
    drop(writer);
    let bytes = std::fs::metadata(&big_path).unwrap().len();

    let mut replays = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let snapshot = read_snapshot::<State>(&big_path).unwrap();
        replays.push(started.elapsed());
        assert_eq!(snapshot.events, EVENTS);
        assert_eq!(snapshot.state.jobs().len() as u64, EVENTS / 4);
    }
    let replay = median(replays);

    let mut statuses = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_agent-runtime"))
            .args(["status", data.to_str().unwrap()])
            .output()
            .unwrap();
        statuses.push(started.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let status = median(statuses);

    println!(
        "BENCH log append_per_s={:.0} replay_per_s={:.0} events={} grouped_append_per_s={:.0} status_ms={} log_mb={:.1}",
        append_per_s,
        EVENTS as f64 / replay.as_secs_f64(),
        EVENTS,
        grouped_append_per_s,
        status.as_millis(),
        bytes as f64 / 1e6,
    );
}
