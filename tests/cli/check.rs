//! `check` validates tasks without a model: the bundled jobs are valid; a
//! passing baseline, a wrong oracle and a coin-flip test are each caught.

use std::path::{Path, PathBuf};

use crate::harness::{Run, Sandbox};

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// A job on a text file, judged per test through JUnit written by a shell
/// script: `fixed` passes once `value.txt` says `new`; with `coin`, a test
/// that passes or fails on the clock's nanoseconds, one run in two.
fn shell_job(sb: &Sandbox, name: &str, coin: bool, oracle: &str) -> PathBuf {
    let dir = sb.path().join(name);
    let source = dir.join("source");
    let acceptance = dir.join("acceptance");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::create_dir_all(&acceptance).unwrap();
    std::fs::write(source.join("value.txt"), "old\n").unwrap();
    let coin_case = if coin {
        r#"
if [ $(( $(date +%N | sed 's/^0*//;s/^$/0/') % 2 )) -eq 0 ]; then
  echo '<testcase classname="t" name="coin"/>' >> results.xml
else
  echo '<testcase classname="t" name="coin"><failure message="tails"/></testcase>' >> results.xml
fi"#
    } else {
        ""
    };
    std::fs::write(
        acceptance.join("check.sh"),
        format!(
            r#"echo '<testsuite name="t">' > results.xml
if grep -qx new value.txt; then
  echo '<testcase classname="t" name="fixed"/>' >> results.xml
else
  echo '<testcase classname="t" name="fixed"><failure message="old"/></testcase>' >> results.xml
fi
echo '<testcase classname="t" name="steady"/>' >> results.xml{coin_case}
echo '</testsuite>' >> results.xml
"#
        ),
    )
    .unwrap();
    std::fs::write(dir.join("oracle.diff"), oracle).unwrap();
    shell_manifest(&dir, name, "Make value.txt say new.")
}

/// The manifest of a job on `value.txt` in `dir` (its `source/`,
/// `acceptance/check.sh` writing JUnit, `oracle.diff`), told `prompt`.
fn shell_manifest(dir: &Path, name: &str, prompt: &str) -> PathBuf {
    let manifest = dir.join(format!("{name}.toml"));
    std::fs::write(
        &manifest,
        format!(
            r#"id = "{name}"
prompt = {prompt:?}
source = "source"
editable = ["*.txt"]
allow = ["true"]
verify = ["true"]

[acceptance]
dir = "acceptance"
command = ["sh", "check.sh"]
results = "junit:results.xml"

[oracle]
patch = "oracle.diff"

[provider]
kind = "script"
script = "{root}/evaluation/scripts/off_by_one.jsonl"
"#,
            root = root()
        ),
    )
    .unwrap();
    manifest
}

const GOOD_FIX: &str = "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-old\n+new\n";
/// An oracle for a source that already says `new`: it adds a file.
const NEW_FILE: &str = "--- /dev/null\n+++ b/note.txt\n@@ -0,0 +1 @@\n+done\n";
const WRONG_FIX: &str = "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-old\n+newer\n";

fn check_json(sb: &Sandbox, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["check", "--json", "--data", "CHECK"];
    all.extend_from_slice(args);
    let run = sb.run(&all);
    let doc =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:#?}"));
    (run.code, doc)
}

/// `check --data CHECK --runs 1 ARGS...`, as text.
fn check_once(sb: &Sandbox, args: &[&str]) -> Run {
    let mut all = vec!["check", "--data", "CHECK", "--runs", "1"];
    all.extend_from_slice(args);
    sb.run(&all)
}

fn verdict<'a>(doc: &'a serde_json::Value, job: &str) -> &'a serde_json::Value {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job"] == job)
        .unwrap_or_else(|| panic!("{job} not in {doc:#}"))
}

#[test]
fn every_bundled_job_is_valid_and_a_rerun_does_no_work() {
    let sb = Sandbox::new();
    let jobs = format!("{}/jobs", root());
    let (code, doc) = check_json(&sb, &["--runs", "1", &jobs]);
    let offline = crate::deps_job::registry_reachable().err();
    if let Some(why) = &offline {
        // A job whose [setup] fetches from the registry cannot set up.
        agent_runtime_test_support::skip(
            agent_runtime_test_support::Need::Tool,
            "every_bundled_job_is_valid_and_a_rerun_does_no_work (jobs with a networked [setup])",
            why,
        );
    }
    assert!(code == 0 || offline.is_some(), "{doc:#}");
    let checked = doc["jobs"].as_array().unwrap();
    assert!(checked.len() >= 8, "{doc:#}");
    for job in checked {
        if offline.is_some() && job["verdict"] == "incomplete" {
            continue;
        }
        assert_eq!(job["verdict"], "valid", "{job:#}");
        assert_eq!(job["baseline"]["ok"], 1, "{job:#}");
        assert_eq!(job["oracle"]["ok"], 1, "{job:#}");
        // An oracle is the job author's fix: nothing to signal.
        assert_eq!(job["signals"], 0, "{job:#}");
    }
    // Every oracle run's integrity record, in the log: no signal, and the
    // canary planted at its acceptance was reported failed.
    for line in log_lines_in(&sb.path().join("CHECK")) {
        if line["type"] == "attempt_finished" {
            let record = &line["integrity"];
            assert!(record.is_object(), "{line:#}");
            assert!(record.get("signal_count").is_none(), "{line:#}");
            assert!(record.get("forged").is_none(), "{line:#}");
        }
    }
    let events = log_lines_in(&sb.path().join("CHECK")).len();
    let (code, again) = check_json(&sb, &["--runs", "1", &jobs]);
    assert_eq!(code, 0);
    assert_eq!(again["jobs"], doc["jobs"]);
    let after = log_lines_in(&sb.path().join("CHECK"));
    assert!(
        !after[events..]
            .iter()
            .any(|l| l["type"] == "attempt_started"),
        "a rerun started new runs"
    );
}

fn log_lines_in(data: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(data.join("events.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_passing_baseline_and_a_wrong_oracle_are_named() {
    let sb = Sandbox::new();
    let good = shell_job(&sb, "good", false, GOOD_FIX);
    let wrong = shell_job(&sb, "wrong", false, WRONG_FIX);
    let passing = format!("{}/evaluation/controls/passing_baseline.toml", root());
    let (code, doc) = check_json(
        &sb,
        &[
            "--runs",
            "2",
            good.to_str().unwrap(),
            wrong.to_str().unwrap(),
            &passing,
        ],
    );
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(verdict(&doc, "good")["verdict"], "valid", "{doc:#}");
    assert_eq!(verdict(&doc, "good")["oracle"]["ok"], 2);
    let wrong = verdict(&doc, "wrong");
    assert_eq!(wrong["verdict"], "unsolvable", "{doc:#}");
    assert!(
        wrong["reason"].as_str().unwrap().contains("fixed"),
        "{wrong:#}"
    );
    assert_eq!(
        verdict(&doc, "passing_baseline")["verdict"],
        "invalid_baseline",
        "{doc:#}"
    );
}

#[test]
fn a_test_that_fails_one_run_in_two_is_flaky_and_named() {
    let sb = Sandbox::new();
    let coin = shell_job(&sb, "coin", true, GOOD_FIX);
    let (code, doc) = check_json(&sb, &["--runs", "10", "-j", "2", coin.to_str().unwrap()]);
    assert_eq!(code, 1, "{doc:#}");
    let job = verdict(&doc, "coin");
    assert_eq!(job["verdict"], "flaky", "{doc:#}");
    assert_eq!(
        job["flaky_tests"],
        serde_json::json!(["t::coin"]),
        "{job:#}"
    );
}

/// `check --write-flaky` records the flaky test in the job's manifest, in
/// place; verdicts then leave it out (the baseline keeps it as
/// `inventory.flaky`), and the same task checks valid. A manifest whose
/// every fail-to-pass test is flaky gives no baseline.
#[test]
fn a_flaky_test_written_into_the_manifest_is_left_out_of_every_verdict() {
    let sb = Sandbox::new();
    let coin = shell_job(&sb, "coin", true, GOOD_FIX);
    let before = std::fs::read_to_string(&coin).unwrap();
    let run = sb.run(&[
        "check",
        "--data",
        "CHECK",
        "--runs",
        "10",
        "-j",
        "2",
        "--write-flaky",
        coin.to_str().unwrap(),
    ]);
    assert!(
        run.stderr.contains("[acceptance] flaky names 1 test"),
        "{run:#?}"
    );
    let after = std::fs::read_to_string(&coin).unwrap();
    assert!(after.contains("flaky = [\"t::coin\"]"), "{after}");
    // Only the key was added: every line of the file is still there.
    assert!(before.lines().all(|l| after.contains(l)), "{after}");
    // Checked again (a fresh data dir): valid, the coin left out.
    let mut all = vec![
        "check", "--json", "--data", "CHECK2", "--runs", "4", "-j", "2",
    ];
    all.push(coin.to_str().unwrap());
    let doc: serde_json::Value = serde_json::from_str(&sb.run(&all).stdout).unwrap();
    assert_eq!(verdict(&doc, "coin")["verdict"], "valid", "{doc:#}");
    let log = std::fs::read_to_string(sb.path().join("CHECK2/events.log")).unwrap();
    let baseline = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["type"] == "baseline")
        .unwrap();
    assert_eq!(
        baseline["inventory"]["flaky"],
        serde_json::json!(["t::coin"]),
        "{baseline}"
    );
    assert_eq!(
        baseline["inventory"]["fail_to_pass"],
        serde_json::json!(["t::fixed"])
    );
    // The one fail-to-pass test named flaky: no baseline to judge by.
    let steady = shell_job(&sb, "steady", false, GOOD_FIX);
    let text = std::fs::read_to_string(&steady)
        .unwrap()
        .replace("[acceptance]\n", "[acceptance]\nflaky = [\"t::fixed\"]\n");
    std::fs::write(&steady, text).unwrap();
    let (_, doc) = check_json(&sb, &["--runs", "1", steady.to_str().unwrap()]);
    let job = verdict(&doc, "steady");
    assert_eq!(job["verdict"], "invalid_baseline", "{doc:#}");
    assert!(
        job["reason"]
            .as_str()
            .is_some_and(|r| r.contains("every fail-to-pass test is flaky (t::fixed)")),
        "{job:#}"
    );
}

/// What `check` prints: the table, the count of valid jobs, the integrity
/// line and why each other job is not valid.
#[test]
fn check_output_snapshot() {
    let sb = Sandbox::new();
    let good = shell_job(&sb, "good", false, GOOD_FIX);
    let wrong = shell_job(&sb, "wrong", false, WRONG_FIX);
    // All three in the test's own directory: jobs run in the order of their
    // paths, which must not depend on where the checkout is.
    let passing = shell_job(&sb, "passing", false, NEW_FILE);
    std::fs::write(sb.path().join("passing/source/value.txt"), "new\n").unwrap();
    let run = sb.run(&[
        "check",
        "--runs",
        "1",
        "-j",
        "1",
        "--data",
        "CHECK",
        good.to_str().unwrap(),
        wrong.to_str().unwrap(),
        passing.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{run:#?}");
    crate::snapshot::redacted(Some(sb.path())).bind(|| insta::assert_snapshot!(run.stdout));
}

fn git_in(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A copy of the bundled `off_by_one` job whose source `plant` changes,
/// with its oracle (`1..n` → `1..=n`: a changed line under 20 characters).
fn off_by_one_copy(sb: &Sandbox, name: &str, plant: impl Fn(&Path, &str)) -> PathBuf {
    let dir = sb.path().join(name);
    let source = dir.join("source");
    let fixture = Path::new(root()).join("evaluation/fixtures/off_by_one");
    for rel in ["Cargo.toml", "Cargo.lock", "src/lib.rs", "tests/visible.rs"] {
        let from = fixture.join(rel);
        if from.is_file() {
            std::fs::create_dir_all(source.join(rel).parent().unwrap()).unwrap();
            std::fs::copy(&from, source.join(rel)).unwrap();
        }
    }
    let pristine = std::fs::read_to_string(source.join("src/lib.rs")).unwrap();
    let fixed = pristine.replacen("1..n", "1..=n", 1);
    assert_ne!(pristine, fixed);
    plant(&source, &fixed);
    let manifest = dir.join("job.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"id = "{name}"
prompt = "Make sum_up_to(n) return 1 + 2 + ... + n."
source = "source"
editable = ["src/**/*.rs"]
allow = ["cargo test **"]
verify = ["cargo", "test", "--offline", "--quiet"]

[acceptance]
dir = "{root}/evaluation/acceptance/off_by_one"
command = ["cargo", "test", "--offline", "--quiet"]

[oracle]
script = "{root}/evaluation/scripts/off_by_one.jsonl"

[provider]
kind = "script"
script = "{root}/evaluation/scripts/off_by_one.jsonl"
"#,
            root = root()
        ),
    )
    .unwrap();
    manifest
}

/// Three ways to leave the fixed file in a task, each with a changed line
/// too short to be distinctive: `HEAD` holds the fix while the working
/// tree was put back to the bug; an rr-cache postimage holds it; a
/// `.orig` file beside the source is a copy of it. Each is `leaky`,
/// naming where.
#[test]
fn a_whole_copy_of_the_fixed_file_anywhere_in_the_task_is_leaky() {
    let sb = Sandbox::new();
    let head = off_by_one_copy(&sb, "fix_in_head", |source, fixed| {
        let pristine = std::fs::read_to_string(source.join("src/lib.rs")).unwrap();
        git_in(source, &["init", "-q", "--initial-branch=main"]);
        std::fs::write(source.join("src/lib.rs"), fixed).unwrap();
        git_in(source, &["add", "-A"]);
        git_in(source, &["commit", "-q", "-m", "base"]);
        std::fs::write(source.join("src/lib.rs"), pristine).unwrap();
    });
    let rr = off_by_one_copy(&sb, "fix_in_rr_cache", |source, fixed| {
        git_in(source, &["init", "-q", "--initial-branch=main"]);
        git_in(source, &["add", "-A"]);
        git_in(source, &["commit", "-q", "-m", "base"]);
        let cache = source.join(".git/rr-cache/3f2a9c0d1e");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join("postimage"), fixed).unwrap();
    });
    let orig = off_by_one_copy(&sb, "fix_in_orig", |source, fixed| {
        std::fs::write(source.join("src/lib.rs.orig"), fixed).unwrap();
    });
    let clean = off_by_one_copy(&sb, "clean", |_, _| {});
    let paths: Vec<&str> = [&head, &rr, &orig, &clean]
        .iter()
        .map(|p| p.to_str().unwrap())
        .collect();
    let mut args = vec!["--runs", "1"];
    args.extend(paths);
    let (code, doc) = check_json(&sb, &args);
    assert_eq!(code, 1, "{doc:#}");
    for (job, evidence) in [
        (
            "fix_in_head",
            "source/.git holds the oracle's src/lib.rs as blob",
        ),
        (
            "fix_in_rr_cache",
            "source/.git/rr-cache/3f2a9c0d1e/postimage is a copy of the oracle's src/lib.rs",
        ),
        (
            "fix_in_orig",
            "source/src/lib.rs.orig is a copy of the oracle's src/lib.rs",
        ),
    ] {
        let v = verdict(&doc, job);
        assert_eq!(v["verdict"], "leaky", "{v:#}");
        let leaks = v["leaks"].to_string();
        assert!(leaks.contains(evidence), "{job}: {leaks}");
    }
    assert_eq!(verdict(&doc, "clean")["verdict"], "valid", "{doc:#}");
}

/// A job whose fix writes `line` (one or more lines) into `value.txt`, whose prompt says
/// `prompt`, and whose hidden test passes once `value.txt` holds `wanted`.
fn line_job(sb: &Sandbox, name: &str, prompt: &str, line: &str, wanted: &str) -> PathBuf {
    let dir = sb.path().join(name);
    std::fs::create_dir_all(dir.join("source")).unwrap();
    std::fs::create_dir_all(dir.join("acceptance")).unwrap();
    std::fs::write(dir.join("source/value.txt"), "old\n").unwrap();
    std::fs::write(
        dir.join("acceptance/check.sh"),
        format!(
            r#"echo '<testsuite name="t">' > results.xml
if grep -qF '{wanted}' value.txt; then
  echo '<testcase classname="t" name="said"/>' >> results.xml
else
  echo '<testcase classname="t" name="said"><failure message="no"/></testcase>' >> results.xml
fi
echo '</testsuite>' >> results.xml
"#
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("oracle.diff"),
        format!(
            "--- a/value.txt\n+++ b/value.txt\n@@ -1 +1,{} @@\n-old\n+{}\n",
            line.lines().count(),
            line.replace('\n', "\n+")
        ),
    )
    .unwrap();
    shell_manifest(&dir, name, prompt)
}

/// A prompt that states what the hidden tests check word for word (Bob's
/// replies, a required error message) is a note, not a leak; a prompt
/// that holds the fix's logic stays `leaky`.
#[test]
fn a_prompt_that_states_what_the_tests_check_is_a_note_not_a_leak() {
    let sb = Sandbox::new();
    let line = r#"reply = "Whoa, chill out, please!""#;
    let stated = line_job(
        &sb,
        "stated",
        &format!("Make value.txt hold this line:\n\n    {line}\n"),
        line,
        "Whoa, chill out, please!",
    );
    let logic = "total = sum(range(1, n + 1)) + offset";
    let leaked = line_job(
        &sb,
        "leaked",
        &format!("Make value.txt hold the sum. Hint: {logic}"),
        logic,
        "sum(range(1, n + 1))",
    );
    let (code, doc) = check_json(
        &sb,
        &[
            "--runs",
            "1",
            stated.to_str().unwrap(),
            leaked.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{doc:#}");
    let v = verdict(&doc, "stated");
    assert_eq!(v["verdict"], "valid", "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("prompt_states_answer: "), "{v:#}");
    let v = verdict(&doc, "leaked");
    assert_eq!(v["verdict"], "leaky", "{v:#}");
    assert!(v["leaks"].to_string().contains("is in the prompt"), "{v:#}");
    // The text output says the note beside the valid verdict.
    let run = check_once(&sb, &[stated.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains("stated: note: prompt_states_answer: "),
        "{run:#?}"
    );
    // `--strict`: a note fails the check too.
    let strict = check_once(&sb, &["--strict", stated.to_str().unwrap()]);
    assert_eq!(strict.code, 1, "{strict:#?}");
}

/// A reviewed finding is waived: `[check] waive` in the manifest (or
/// `--waive` for every job) keeps it in the output as waived, and it no
/// longer decides the verdict or fails `--strict`; a name that is not a
/// finding is a manifest error at its line.
#[test]
fn a_waived_finding_is_shown_as_waived_and_decides_nothing() {
    let sb = Sandbox::new();
    let logic = "total = sum(range(1, n + 1)) + offset";
    let leaked = line_job(
        &sb,
        "leaked",
        &format!("Make value.txt hold the sum. Hint: {logic}"),
        logic,
        "sum(range(1, n + 1))",
    );
    let text = std::fs::read_to_string(&leaked).unwrap();
    std::fs::write(
        &leaked,
        format!("{text}\n[check]\nwaive = [\"leaky:prompt\"]\n"),
    )
    .unwrap();
    let (code, doc) = check_json(&sb, &["--runs", "1", leaked.to_str().unwrap()]);
    assert_eq!(code, 0, "{doc:#}");
    let v = verdict(&doc, "leaked");
    assert_eq!(v["verdict"], "valid", "{v:#}");
    assert!(v.get("leaks").is_none(), "{v:#}");
    let waived = v["waived"].to_string();
    assert!(
        waived.contains("leaky:prompt: the oracle's line for value.txt"),
        "{v:#}"
    );
    let run = check_once(&sb, &["--strict", leaked.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .contains("1/1 job valid (1 with waived findings)"),
        "{run:#?}"
    );
    assert!(
        run.stdout.contains("leaked: waived: leaky:prompt: "),
        "{run:#?}"
    );
    // Without the manifest's waiver the finding stands; `--waive` waives
    // it for every job, `leaky` for every kind of leak.
    std::fs::write(&leaked, &text).unwrap();
    let run = check_once(&sb, &[leaked.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stdout.contains("leaked: leaky: "), "{run:#?}");
    let run = check_once(&sb, &["--waive", "leaky", leaked.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains("leaked: waived: leaky:prompt: "),
        "{run:#?}"
    );
    // A misspelt waiver: exit 2, the file, line and field, a suggestion.
    std::fs::write(
        &leaked,
        format!("{text}\n[check]\nwaive = [\"leaky:promt\"]\n"),
    )
    .unwrap();
    let run = check_once(&sb, &[leaked.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:#?}");
    let line = text.lines().count() + 3;
    assert!(
        run.stderr.contains(&format!("leaked.toml:{line}:")) && run.stderr.contains("check.waive"),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains("did you mean `leaky:prompt`"),
        "{run:#?}"
    );
    let bad = sb.run(&["check", "--waive", "everything", leaked.to_str().unwrap()]);
    assert_eq!(bad.code, 2, "{bad:#?}");
    assert!(bad.stderr.contains("leaky:prompt"), "{bad:#?}");
}

/// A prompt that shows an example the oracle reuses (an exception class's
/// shape, a call of the API the task is about) holds less than a third of
/// the answer: a note, `prompt_shows_example`, not a leak.
#[test]
fn a_prompt_showing_a_small_part_of_the_answer_is_an_example_not_a_leak() {
    let sb = Sandbox::new();
    let example = "    def __init__(self, message): self.message = message";
    let lines = [
        example,
        "def evaluate(words): return [int(w) for w in words if w.isdigit()]",
        "def is_integer(text): return text.lstrip('-').isdigit()",
        "def apply(stack, word): return stack[:-2] + [stack[-2] + stack[-1]]",
    ];
    let job = line_job(
        &sb,
        "example",
        &format!("An exception class looks like this:\n\n{example}\n"),
        &lines.join("\n"),
        "isdigit",
    );
    let (code, doc) = check_json(&sb, &["--runs", "1", job.to_str().unwrap()]);
    let v = verdict(&doc, "example");
    assert_eq!(v["verdict"], "valid", "{v:#}");
    assert_eq!(code, 0, "{doc:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(
            "prompt_shows_example: the prompt holds 1 of the oracle's 4 distinctive lines"
        ),
        "{v:#}"
    );
}

/// A whole set of jobs run offline: under a provider of kind `oracle`
/// each job replays its own `[oracle]` and every valid task is accepted;
/// under `noop` each finishes at once and every job fails.
#[test]
fn oracle_and_noop_providers_run_a_whole_set_offline() {
    let sb = Sandbox::new();
    let a = shell_job(&sb, "first", false, GOOD_FIX);
    let b = shell_job(&sb, "second", false, GOOD_FIX);
    std::fs::write(
        sb.path().join("oracle.toml"),
        "name = \"oracle\"\n\n[provider]\nkind = \"oracle\"\n",
    )
    .unwrap();
    std::fs::write(
        sb.path().join("noop.toml"),
        "name = \"noop\"\n\n[provider]\nkind = \"noop\"\n",
    )
    .unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let oracle = sb.run(&["batch", "ORACLE", a, b, "--provider", "oracle.toml"]);
    assert_eq!(oracle.code, 0, "{oracle:#?}");
    assert!(oracle.stdout.contains("succeeded 2/2"), "{oracle:#?}");
    let noop = sb.run(&["batch", "NOOP", a, b, "--provider", "noop.toml"]);
    assert_eq!(noop.code, 1, "{noop:#?}");
    assert!(noop.stdout.contains("succeeded 0/2"), "{noop:#?}");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sb.path().join("NOOP/report/results.json")).unwrap(),
    )
    .unwrap();
    for job in results["jobs"].as_array().unwrap() {
        assert_eq!(job["failure_kind"], "no_edit", "{job:#}");
    }
    // A rerun of the same command does no work: the scripts are the same.
    let again = sb.run(&["batch", "ORACLE", a, b, "--provider", "oracle.toml"]);
    assert_eq!(again.code, 0, "{again:#?}");
    assert!(again.stdout.contains("; 0 attempts run now"), "{again:#?}");
}
