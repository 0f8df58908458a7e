//! No dead ends after an edit: `batch --replace` and `check --replace` run
//! a changed manifest as new attempts (earlier ones stay as history), an
//! unchanged one runs nothing; two manifests with one id, a job without a
//! provider and a missing `AGY_BIN` are refused before anything is
//! written; every flag a hint suggests is one the command has.

use std::path::{Path, PathBuf};

use crate::harness::{Sandbox, log_lines};

/// A job on `value.txt` whose verify passes once it says `new`; the
/// provider's script writes `content`.
struct TextJob {
    dir: PathBuf,
}

impl TextJob {
    fn new(sb: &Sandbox) -> TextJob {
        let dir = sb.path().join("jobs");
        std::fs::create_dir_all(dir.join("source")).unwrap();
        std::fs::write(dir.join("source/value.txt"), "old\n").unwrap();
        TextJob { dir }
    }

    /// Writes `jobs/<id>.toml` (and its script) whose model writes `content`.
    fn write(&self, file: &str, id: &str, content: &str) -> PathBuf {
        // The script's name changes with what it writes, so a new content
        // is a new manifest (the hash covers the manifest, not the script).
        let script = self.dir.join(format!("{file}-{content}.jsonl"));
        std::fs::write(
            &script,
            format!(
                "{{\"kind\":\"write_file\",\"path\":\"value.txt\",\"content\":\"{content}\\n\"}}\n{{\"kind\":\"finish\",\"summary\":\"done\"}}\n"
            ),
        )
        .unwrap();
        let manifest = self.dir.join(format!("{file}.toml"));
        std::fs::write(&manifest, manifest_text(id, &script)).unwrap();
        manifest
    }
}

fn manifest_text(id: &str, script: &Path) -> String {
    format!(
        "id = \"{id}\"\nprompt = \"Make value.txt say new.\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"grep **\"]\nverify = [\"grep\", \"-qx\", \"new\", \"value.txt\"]\n\n[limits]\nattempts = 1\n\n[provider]\nkind = \"script\"\nscript = {script:?}\n"
    )
}

fn results(data: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(data.join("report/results.json")).unwrap()).unwrap()
}

#[test]
fn an_edited_manifest_runs_again_under_its_new_hash_with_replace() {
    let sb = Sandbox::new();
    let jobs = TextJob::new(&sb);
    let manifest = jobs.write("edit", "edit", "wrong");
    let m = manifest.to_str().unwrap();
    // Two repeats: every instance of the job is replaced.
    sb.run(&["batch", "DATA", m, "--repeat", "2"]).code(1);
    let old_hash = log_lines(&sb)[0]["manifest_hash"]
        .as_str()
        .unwrap()
        .to_string();

    // The fix: the model now writes the right value.
    jobs.write("edit", "edit", "new");
    let before = sb.log_bytes();
    let refused = sb.run(&["batch", "DATA", m, "--repeat", "2"]).code(2);
    assert!(refused.stderr.contains("--replace"), "{refused:#?}");
    assert_eq!(sb.log_bytes(), before, "a refusal writes nothing");
    // The flag the hint names is one `batch` has.
    sb.run(&["batch", "--help"]).ok().stdout_has("--replace");

    let replaced = sb
        .run(&["batch", "DATA", m, "--repeat", "2", "--replace"])
        .ok();
    assert!(
        replaced
            .stderr
            .contains("resuming: 0 done, 0 recovered, 2 queued (2 under a new manifest)"),
        "{replaced:#?}"
    );
    let lines = log_lines(&sb);
    let events: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["type"] == "replaced").collect();
    assert_eq!(events.len(), 2, "both instances");
    let new_hash = events[0]["manifest_hash"].as_str().unwrap().to_string();
    assert_ne!(new_hash, old_hash);
    for event in &events {
        assert_eq!(event["attempts_before"], 1, "{event}");
        assert!(event["v"].as_u64() >= Some(2), "{event}");
    }
    // The new attempt is attempt 2; attempt 1 and its artifacts are history.
    for instance in ["edit#1", "edit#2"] {
        let starts: Vec<u64> = lines
            .iter()
            .filter(|l| l["job"] == instance && l["type"] == "attempt_started")
            .map(|l| l["attempt"].as_u64().unwrap())
            .collect();
        assert_eq!(starts, [1, 2], "{instance}");
        let runs = sb.data().join("runs").join(instance);
        assert!(runs.join("1").is_dir(), "attempt 1's artifacts are kept");
        assert!(runs.join("2/patch.diff").is_file());
    }
    let doc = results(&sb.data());
    for job in doc["jobs"].as_array().unwrap() {
        assert_eq!(job["outcome"], "succeeded", "{job:#}");
        assert_eq!(job["attempts"], 1, "{job:#}");
        assert_eq!(job["manifest_hash"], new_hash.as_str());
        let history = job["attempt_history"].as_array().unwrap();
        assert_eq!(history.len(), 2, "{job:#}");
        assert_eq!(history[0]["attempt"], 1);
        assert_eq!(history[0]["manifest_hash"], old_hash.as_str());
        assert_eq!(history[0]["status"], "failed");
        assert_eq!(history[1]["attempt"], 2);
        assert_eq!(history[1]["manifest_hash"], new_hash.as_str());
        assert_eq!(history[1]["status"], "succeeded");
    }
    let status = sb.run(&["status", "DATA", "--json"]).ok();
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    for row in status["jobs"].as_array().unwrap() {
        assert_eq!(
            (row["attempt"].as_u64(), row["attempt_number"].as_u64()),
            (Some(1), Some(2))
        );
    }

    // Unchanged now: --replace runs nothing and writes nothing.
    let before = sb.log_bytes();
    let again = sb
        .run(&["batch", "DATA", m, "--repeat", "2", "--replace"])
        .ok();
    assert!(again.stdout.contains("0 attempts run now"), "{again:#?}");
    assert!(
        again
            .stderr
            .contains("resuming: 2 done, 0 recovered, 0 queued"),
        "{again:#?}"
    );
    assert_eq!(sb.log_bytes(), before, "nothing ran");
}

#[test]
fn check_replace_checks_a_moved_task_again() {
    let sb = Sandbox::new();
    let jobs = TextJob::new(&sb);
    let manifest = jobs.write("moved", "moved", "new");
    let oracle = jobs.dir.join("fix.diff");
    std::fs::write(
        &oracle,
        "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-old\n+new\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(&manifest).unwrap() + "\n[oracle]\npatch = \"fix.diff\"\n";
    std::fs::write(&manifest, &text).unwrap();
    let m = manifest.to_str().unwrap();
    // Verify-only task: its check runs the oracle (no baseline to fail).
    let first = sb.run(&["check", "--runs", "1", "--data", "CHECK", m]);
    assert!(matches!(first.code, 0 | 1), "{first:#?}");
    // The task folder moves: the source is elsewhere, the manifest changed.
    std::fs::rename(jobs.dir.join("source"), jobs.dir.join("source2")).unwrap();
    std::fs::write(
        &manifest,
        text.replace("source = \"source\"", "source = \"source2\""),
    )
    .unwrap();
    let check_log = sb.path().join("CHECK/events.log");
    let before = std::fs::read(&check_log).unwrap();
    let refused = sb
        .run(&["check", "--runs", "1", "--data", "CHECK", m])
        .code(2);
    assert!(refused.stderr.contains("--replace"), "{refused:#?}");
    assert_eq!(std::fs::read(&check_log).unwrap(), before);
    sb.run(&["check", "--help"]).ok().stdout_has("--replace");
    let replaced = sb.run(&["check", "--runs", "1", "--data", "CHECK", "--replace", m]);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&check_log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines.iter().any(|l| l["type"] == "replaced"),
        "{replaced:#?}"
    );
    let starts = lines
        .iter()
        .filter(|l| l["type"] == "attempt_started")
        .count();
    assert_eq!(starts, 2, "the moved task ran again: {replaced:#?}");
}

#[test]
fn two_manifests_with_one_id_are_refused_naming_both_before_anything_is_written() {
    let sb = Sandbox::new();
    let jobs = TextJob::new(&sb);
    let a = jobs.write("a", "same", "new");
    let b = jobs.write("b", "same", "new");
    let dir = jobs.dir.to_str().unwrap().to_string();
    for args in [
        vec!["batch", "DATA", dir.as_str()],
        vec!["check", "--data", "DATA", dir.as_str()],
        vec!["enqueue", "DATA", "--job", dir.as_str()],
        vec!["validate", dir.as_str()],
    ] {
        let run = sb.run(&args).code(2);
        for file in [&a, &b] {
            let name = file.file_name().unwrap().to_str().unwrap();
            assert!(
                run.stderr.contains(name),
                "{args:?} does not name {name}: {run:#?}"
            );
        }
        assert!(run.stderr.contains("\"same\""), "{run:#?}");
        assert!(!sb.data().exists(), "{args:?} wrote {:?}", sb.data());
    }
}

#[test]
fn a_job_without_a_provider_is_refused_before_anything_is_written() {
    let sb = Sandbox::new();
    let jobs = TextJob::new(&sb);
    let with = jobs.write("with", "with", "new");
    let without = jobs.dir.join("without.toml");
    let text = std::fs::read_to_string(&with).unwrap();
    let cut = text.find("[provider]").unwrap();
    std::fs::write(&without, text[..cut].replace("\"with\"", "\"without\"")).unwrap();
    // A log that exists already: it must stay byte for byte.
    sb.run(&["enqueue", "DATA", "--job", without.to_str().unwrap()])
        .ok();
    let before = sb.log_bytes();

    let batch = sb
        .run(&["batch", "DATA", without.to_str().unwrap()])
        .code(2);
    assert!(batch.stderr.contains("without"), "{batch:#?}");
    assert!(batch.stderr.contains("--provider"), "{batch:#?}");
    assert_eq!(sb.log_bytes(), before, "batch wrote to the log");
    let run = sb.run(&["run", "DATA", "without"]).code(2);
    assert!(run.stderr.contains("--provider"), "{run:#?}");
    assert_eq!(sb.log_bytes(), before, "run wrote to the log");
    for command in ["batch", "run"] {
        sb.run(&[command, "--help"]).ok().stdout_has("--provider");
    }

    let validate = sb.run(&["validate", without.to_str().unwrap()]).ok();
    assert!(
        validate
            .stdout
            .contains("no provider (runs need --provider)"),
        "{validate:#?}"
    );
    sb.run(&["validate", with.to_str().unwrap()])
        .ok()
        .stdout_has("(id=with, family=with)\n");
}

#[test]
fn the_seed_form_checks_agy_bin_before_anything_is_written() {
    let sb = Sandbox::new();
    let ws = sb.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("value.txt"), "old\n").unwrap();
    sb.run(&["enqueue", "DATA", "t"]).ok();
    let before = sb.log_bytes();
    let not_executable = sb.path().join("agy");
    std::fs::write(&not_executable, "#!/bin/sh\nexit 0\n").unwrap();
    for agy in [sb.path().join("missing-agy"), not_executable] {
        let run = crate::harness::Run::from(
            sb.command(&["run", "DATA", "t", ws.to_str().unwrap()])
                .env("AGENT_TASK", "Make value.txt say new.")
                .env("AGENT_VERIFY", "true")
                .env("AGY_BIN", &agy)
                .output()
                .unwrap(),
        );
        let run = run.code(2).one_line_error();
        assert!(run.stderr.contains("AGY_BIN="), "{run:#?}");
        assert_eq!(sb.log_bytes(), before, "{agy:?}: the log changed");
    }
}

/// Every error hint that names a flag names one its command has.
#[test]
fn every_suggested_flag_exists_on_its_command() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut hints = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for marker in ["pass --", "use --", "with --", "give one with --"] {
                    for (at, _) in text.match_indices(marker) {
                        let flag: String = text[at + marker.len() - 2..]
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                            .collect();
                        hints.push((path.clone(), flag));
                    }
                }
            }
        }
    }
    assert!(
        hints.iter().any(|(_, f)| f == "--replace"),
        "no hint found: {hints:?}"
    );
    let sb = Sandbox::new();
    let all_help: String = [
        "batch", "check", "enqueue", "run", "report", "demo", "replay",
    ]
    .iter()
    .map(|c| sb.run(&[c, "--help"]).ok().stdout)
    .collect();
    for (file, flag) in &hints {
        assert!(
            all_help.contains(&format!("{flag} ")) || all_help.contains(&format!("{flag}\n")),
            "{}: suggests {flag}, which no command has",
            file.display()
        );
    }
    // The changed-manifest hint is given by enqueue, batch and check.
    for command in ["enqueue", "batch", "check"] {
        sb.run(&[command, "--help"]).ok().stdout_has("--replace");
    }
}
