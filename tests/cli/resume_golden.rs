//! A data dir written by an earlier build (the committed fixture in
//! `fixtures/resume_golden/`, made by its `make.sh`) resumes under this one:
//! nothing finished runs again, every manifest keeps its hash, and the
//! interrupted and queued jobs finish.
//!
//! The manifests name their files under a fixed path (the manifest hash
//! covers absolute paths), so the test lays the fixture's `root/` out
//! there, as it was when the log was written, and the log is used as is:
//! no record, checksum or hash is rewritten.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{Run, Sandbox};

/// Where the fixture's manifests expect their files.
const ROOT: &str = "/tmp/agent-runtime-golden-v1";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/resume_golden")
}

fn copy_tree(from: &Path, to: &Path) {
    agent_runtime_test_support::copy_tree(from, to).unwrap();
}

fn records(log: &Path) -> Vec<Value> {
    fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn states(sb: &Sandbox) -> BTreeMap<String, (String, bool)> {
    let run = sb.run(&["status", "DATA", "--json"]).ok();
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["id"].as_str().unwrap().to_string(),
                (
                    j["state"].as_str().unwrap().to_string(),
                    j["stale_lease"].as_bool().unwrap(),
                ),
            )
        })
        .collect()
}

#[test]
fn a_data_dir_of_an_earlier_build_resumes_without_running_anything_finished_again() {
    // Other runs of this test (another checkout) use the same path: one at
    // a time.
    let lock = File::create(format!("{ROOT}.lock")).unwrap();
    lock.lock().unwrap();
    let _ = fs::remove_dir_all(ROOT);
    copy_tree(&fixture().join("root"), Path::new(ROOT));
    let sb = Sandbox::new();
    copy_tree(&fixture().join("data"), &sb.data());
    let before = records(&sb.log());
    let hash_of: BTreeMap<String, String> = before
        .iter()
        .filter(|r| r["type"] == "enqueued")
        .map(|r| {
            (
                r["job"].as_str().unwrap().to_string(),
                r["manifest_hash"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(hash_of.len(), 5, "{before:#?}");
    let jobs = format!("{ROOT}/jobs");

    // The log reads as it was left: midway's runner is gone mid-attempt.
    let at_rest = states(&sb);
    let expect = |pairs: &[(&str, &str, bool)]| -> BTreeMap<String, (String, bool)> {
        pairs
            .iter()
            .map(|(id, state, stale)| (id.to_string(), (state.to_string(), *stale)))
            .collect()
    };
    assert_eq!(
        at_rest,
        expect(&[
            ("done_failed", "failed", false),
            ("done_ok", "succeeded", false),
            ("judging", "queued", false),
            ("midway", "running", true),
            ("queued", "queued", false),
        ])
    );

    // Every manifest hashes as it did: enqueueing them again is a no-op.
    let files: Vec<String> = ["done_failed", "done_ok", "judging", "midway", "queued"]
        .iter()
        .map(|id| format!("{jobs}/{id}.toml"))
        .collect();
    let mut args = vec!["enqueue", "DATA", "--job"];
    args.extend(files.iter().map(String::as_str));
    let enqueue = sb.run(&args).ok();
    for id in hash_of.keys() {
        assert!(
            enqueue.stdout.contains(&format!("enqueued=false id={id}")),
            "{enqueue:#?}"
        );
    }

    // The same batch resumes it: done_failed stays failed (exit 1).
    let batch: Run = Run::from(
        sb.command(&["batch", "DATA", &jobs])
            .env("CI", "true")
            .output()
            .unwrap(),
    );
    assert_eq!(batch.code, 1, "{batch:#?}");
    assert!(
        batch
            .stderr
            .contains("resuming: 2 done, 2 recovered, 1 queued"),
        "{batch:#?}"
    );
    assert_eq!(
        states(&sb),
        expect(&[
            ("done_failed", "failed", false),
            ("done_ok", "succeeded", false),
            ("judging", "succeeded", false),
            ("midway", "succeeded", false),
            ("queued", "succeeded", false),
        ])
    );

    let after = records(&sb.log());
    assert_eq!(after[..before.len()], before[..], "the old records stay");
    let new = &after[before.len()..];
    let of = |id: &str| -> Vec<(Option<u64>, &str)> {
        new.iter()
            .filter(|r| r["job"] == id)
            .map(|r| (r["attempt"].as_u64(), r["type"].as_str().unwrap()))
            .collect()
    };
    for id in ["done_ok", "done_failed"] {
        assert_eq!(of(id), [], "{id} ran again");
    }
    assert!(
        !new.iter()
            .any(|r| matches!(r["type"].as_str(), Some("enqueued" | "replaced"))),
        "a manifest was recorded again"
    );
    // judging resumes its attempt at acceptance: its agent phase and patch
    // are not redone.
    let judging = of("judging");
    assert_eq!(judging.first(), Some(&(Some(1), "attempt_started")));
    assert_eq!(judging.last(), Some(&(Some(1), "attempt_finished")));
    for (_, kind) in &judging {
        assert!(
            !matches!(*kind, "decision" | "agent_finished" | "patch" | "baseline"),
            "judging redid {kind}: {judging:?}"
        );
    }
    assert!(judging.contains(&(Some(1), "acceptance")), "{judging:?}");
    // midway's open attempt is recorded interrupted and starts over under
    // the same number, without using an attempt.
    let midway = of("midway");
    assert_eq!(
        midway[..2],
        [
            (Some(1), "attempt_interrupted"),
            (Some(1), "attempt_started")
        ]
    );
    assert_eq!(midway.last(), Some(&(Some(1), "attempt_finished")));
    assert!(
        !midway.contains(&(Some(1), "baseline")),
        "the baseline runs once per job: {midway:?}"
    );
    let queued = of("queued");
    assert_eq!(queued.first(), Some(&(Some(1), "attempt_started")));
    assert_eq!(queued.last(), Some(&(Some(1), "attempt_finished")));
    for record in new.iter().filter(|r| r["type"] == "attempt_finished") {
        assert_eq!(record["outcome"], "succeeded", "{record}");
    }
    let _ = fs::remove_dir_all(ROOT);
}
