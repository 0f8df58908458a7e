//! One baseline per task in a data dir: repeats, reruns and replaced
//! manifests with the same baseline key record the first baseline again
//! with `reused_from` and run none of its commands; a changed acceptance
//! dir, other hidden tests or an edited test file get a fresh one; `check`
//! runs every baseline afresh.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{Sandbox, log_lines};

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// The baselines whose commands ran, and those reused.
fn split(lines: &[Value]) -> (Vec<&Value>, Vec<&Value>) {
    of_type(lines, "baseline")
        .into_iter()
        .partition(|b| b.get("reused_from").is_none())
}

/// Every reused baseline names one that ran, with its key and verdict;
/// only the instances whose baseline ran have baseline commands.
fn assert_consistent(lines: &[Value]) {
    let (ran, reused) = split(lines);
    let by_origin: BTreeMap<(String, u64), &Value> = ran
        .iter()
        .map(|b| {
            let at = (
                b["job"].as_str().unwrap().to_string(),
                b["attempt"].as_u64().unwrap(),
            );
            (at, *b)
        })
        .collect();
    for b in &reused {
        let from = &b["reused_from"];
        let at = (
            from["job"].as_str().unwrap().to_string(),
            from["attempt"].as_u64().unwrap(),
        );
        let origin = by_origin
            .get(&at)
            .unwrap_or_else(|| panic!("{b} names no baseline that ran"));
        for field in [
            "key",
            "result",
            "inventory",
            "canary",
            "timed_out",
            "reason",
        ] {
            assert_eq!(b.get(field), origin.get(field), "{field} of {b}");
        }
        assert!(b["key"].is_string(), "{b}");
    }
    let ran_in: BTreeSet<(String, u64)> = by_origin.keys().cloned().collect();
    for command in of_type(lines, "command") {
        if command["role"] == "baseline" {
            let at = (
                command["job"].as_str().unwrap().to_string(),
                command["attempt"].as_u64().unwrap(),
            );
            assert!(ran_in.contains(&at), "a reused baseline ran {command}");
        }
    }
}

#[test]
fn repeats_of_bundled_jobs_run_each_baseline_once() {
    // Two bundled jobs without crates.io dependencies (the suite stays
    // offline), three repeats each on two workers: repeats of a job start
    // together, and one waits for the other's baseline.
    let root = env!("CARGO_MANIFEST_DIR");
    let sb = Sandbox::new();
    let jobs = [
        format!("{root}/jobs/off_by_one.toml"),
        format!("{root}/jobs/wrong_return.toml"),
    ];
    let mut args = vec!["batch", "DATA", &jobs[0], &jobs[1]];
    args.extend(["--repeat", "3", "-j", "2"]);
    let run = sb.run(&args).ok();
    // The progress says it, as the log does.
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("reused from"),
        "{run:#?}"
    );
    let lines = log_lines(&sb);
    let (ran, reused) = split(&lines);
    assert_eq!(ran.len(), 2, "one baseline ran per job: {ran:#?}");
    assert_eq!(reused.len(), 4, "{reused:#?}");
    let ran_jobs: BTreeSet<&str> = ran
        .iter()
        .map(|b| b["job"].as_str().unwrap().split('#').next().unwrap())
        .collect();
    assert_eq!(ran_jobs, BTreeSet::from(["off_by_one", "wrong_return"]));
    assert_consistent(&lines);
    // Each job's baseline built and ran its tests: commands of two
    // instances only.
    let with_commands: BTreeSet<&str> = of_type(&lines, "command")
        .into_iter()
        .filter(|c| c["role"] == "baseline")
        .map(|c| c["job"].as_str().unwrap())
        .collect();
    assert_eq!(with_commands.len(), 2, "{with_commands:?}");
}

/// A job on `value.txt` judged by `check.sh` in an acceptance dir: it
/// fails until the file says `new`, which the scripted model writes.
struct TextTask {
    dir: PathBuf,
}

impl TextTask {
    fn new(sb: &Sandbox) -> TextTask {
        let dir = sb.path().join("task");
        std::fs::create_dir_all(dir.join("source")).unwrap();
        std::fs::write(dir.join("source/value.txt"), "old\n").unwrap();
        std::fs::write(
            dir.join("fix.jsonl"),
            "{\"kind\":\"write_file\",\"path\":\"value.txt\",\"content\":\"new\\n\"}\n\
             {\"kind\":\"finish\",\"summary\":\"done\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("oracle.diff"),
            "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-old\n+new\n",
        )
        .unwrap();
        TextTask { dir }
    }

    /// An acceptance dir `name` whose check runs `extra` first.
    fn tests(&self, name: &str, extra: &str) {
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("check.sh"),
            format!("{extra}\ngrep -qx new value.txt\n"),
        )
        .unwrap();
    }

    /// `<id>.toml`, judged by the acceptance dir `tests`.
    fn manifest(&self, id: &str, tests: &str) -> PathBuf {
        let path = self.dir.join(format!("{id}.toml"));
        std::fs::write(
            &path,
            format!(
                "id = \"{id}\"\nprompt = \"Make value.txt say new.\"\nsource = \"source\"\n\
                 editable = [\"*.txt\"]\nallow = [\"grep **\"]\n\
                 verify = [\"grep\", \"-qx\", \"new\", \"value.txt\"]\n\n\
                 [acceptance]\ndir = {tests:?}\ncommand = [\"sh\", \"check.sh\"]\n\n\
                 [limits]\nattempts = 1\n\n\
                 [oracle]\npatch = \"oracle.diff\"\n\n\
                 [provider]\nkind = \"script\"\nscript = \"fix.jsonl\"\n"
            ),
        )
        .unwrap();
        path
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_rerun_reuses_and_changed_tests_get_a_fresh_baseline() {
    let sb = Sandbox::new();
    let task = TextTask::new(&sb);
    task.tests("hidden", "true");
    let a = task.manifest("a", "hidden");
    sb.run(&["batch", "DATA", path(&a)]).ok();
    let lines = log_lines(&sb);
    let (ran, reused) = split(&lines);
    assert_eq!((ran.len(), reused.len()), (1, 0));
    let key = ran[0]["key"].as_str().unwrap().to_string();

    // The same job again: its first baseline, nothing run.
    sb.run(&["batch", "DATA", path(&a), "--rerun", "all"]).ok();
    let lines = log_lines(&sb);
    let (ran, reused) = split(&lines);
    assert_eq!((ran.len(), reused.len()), (1, 1));
    assert_eq!(reused[0]["reused_from"]["job"], "a");
    assert_eq!(reused[0]["reused_from"]["attempt"], 1);
    assert_eq!(reused[0]["key"], key.as_str());
    assert_consistent(&lines);

    // An edited hidden test file: a new key, the baseline runs again.
    task.tests("hidden", "test -f value.txt");
    sb.run(&["batch", "DATA", path(&a), "--rerun", "all"]).ok();
    let lines = log_lines(&sb);
    let (ran, _) = split(&lines);
    assert_eq!(ran.len(), 2, "an edited test reran the baseline");
    assert_ne!(ran[1]["key"], key.as_str());

    // The manifest now names another acceptance dir (a new manifest
    // hash, through --replace): fresh.
    task.tests("hidden2", "true");
    let a = task.manifest("a", "hidden2");
    sb.run(&["batch", "DATA", path(&a), "--replace"]).ok();
    let lines = log_lines(&sb);
    assert_eq!(
        of_type(&lines, "replaced").len(),
        3,
        "two reruns, one replace"
    );
    let (ran, _) = split(&lines);
    assert_eq!(ran.len(), 3, "a changed acceptance dir reran the baseline");
    let last = ran.last().unwrap();
    assert_eq!(last["job"], "a");

    // A second job on the same source with other tests: its own.
    task.tests("other", "true");
    let b = task.manifest("b", "other");
    sb.run(&["batch", "DATA", path(&b)]).ok();
    let lines = log_lines(&sb);
    let (ran, reused) = split(&lines);
    assert_eq!(ran.len(), 4);
    assert_eq!(ran.last().unwrap()["job"], "b");
    assert_eq!(reused.len(), 1);
    assert_consistent(&lines);
}

#[test]
fn check_runs_every_baseline_afresh() {
    let sb = Sandbox::new();
    let task = TextTask::new(&sb);
    task.tests("hidden", "true");
    let a = task.manifest("a", "hidden");
    let data = sb.path().join("CHECK");
    let run = sb.run(&["check", "--runs", "3", "--data", path(&data), path(&a)]);
    assert_eq!(run.code, 0, "{run:#?}");
    let lines: Vec<Value> = std::fs::read_to_string(data.join("events.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (ran, reused) = split(&lines);
    assert_eq!(ran.len(), 3, "every run's baseline ran: {ran:#?}");
    assert!(reused.is_empty(), "{reused:#?}");
    // They share a key: the data dir holds what a reuse would take.
    let keys: BTreeSet<&str> = ran.iter().map(|b| b["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 1);
    let commands = of_type(&lines, "command")
        .into_iter()
        .filter(|c| c["role"] == "baseline")
        .count();
    assert_eq!(commands, 3);
}
