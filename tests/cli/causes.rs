//! The cause of a failed job is the reason of its final verdict: a refused
//! command the model recovered from, then a wrong fix, is `tests_failed`
//! because of the failing test, in the summary, `status`, results.json and
//! the HTML report alike; the refusal stays in the trajectory.

use std::path::{Path, PathBuf};

use crate::harness::Sandbox;

/// A job on `value.txt` judged per test through JUnit written by a shell
/// script (`value_is_new` passes once the file says `new`); the model is
/// refused a command at step 2, recovers, and writes the wrong value.
fn refused_then_wrong(sb: &Sandbox) -> PathBuf {
    let dir = sb.path().join("job");
    std::fs::create_dir_all(dir.join("source")).unwrap();
    std::fs::create_dir_all(dir.join("hidden")).unwrap();
    std::fs::write(dir.join("source/value.txt"), "old\n").unwrap();
    std::fs::write(
        dir.join("hidden/check.sh"),
        r#"echo '<testsuite name="t">' > results.xml
if grep -qx new value.txt; then
  echo '<testcase classname="t" name="value_is_new"/>' >> results.xml
else
  echo '<testcase classname="t" name="value_is_new"><failure message="old"/></testcase>' >> results.xml
fi
echo '<testcase classname="t" name="file_exists"/>' >> results.xml
echo '</testsuite>' >> results.xml
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("replies.jsonl"),
        r#"{"kind":"read_file","path":"value.txt"}
{"kind":"run_tool","program":"curl","args":["http://example.com"]}
{"kind":"write_file","path":"value.txt","content":"newer\n"}
{"kind":"verify"}
{"kind":"finish","summary":"done"}
"#,
    )
    .unwrap();
    let manifest = dir.join("refused.toml");
    std::fs::write(
        &manifest,
        r#"id = "refused"
prompt = "Make value.txt say new."
source = "source"
editable = ["*.txt"]
allow = ["true"]
verify = ["true"]

[limits]
attempts = 1

[acceptance]
dir = "hidden"
command = ["sh", "check.sh"]
results = "junit:results.xml"

[provider]
kind = "script"
script = "replies.jsonl"
"#,
    )
    .unwrap();
    manifest
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_recovered_refusal_then_a_wrong_fix_is_blamed_on_the_failing_test() {
    let sb = Sandbox::new();
    let manifest = refused_then_wrong(&sb);
    let batch = sb
        .run(&["batch", "DATA", manifest.to_str().unwrap()])
        .code(1);
    // The summary line.
    let line = batch
        .stderr
        .lines()
        .find(|l| l.starts_with("refused: tests_failed"))
        .unwrap_or_else(|| panic!("no summary line: {batch:#?}"));
    assert!(line.contains("value_is_new"), "{line}");
    assert!(!line.contains("curl"), "{line}");

    // status: the note below the table and the JSON row.
    let status = sb.run(&["status", "DATA"]).ok();
    let note = status
        .stderr
        .lines()
        .find(|l| l.starts_with("refused: tests_failed: "))
        .unwrap_or_else(|| panic!("no cause in status: {status:#?}"));
    assert!(
        note.contains("value_is_new") && !note.contains("curl"),
        "{note}"
    );
    let json = sb.run(&["status", "DATA", "--json"]).ok();
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let cause = json["jobs"][0]["cause"].as_str().unwrap();
    assert!(
        cause.contains("value_is_new") && !cause.contains("curl"),
        "{cause}"
    );

    // results.json and the HTML report.
    let results: serde_json::Value =
        serde_json::from_str(&read(&sb.data().join("report/results.json"))).unwrap();
    let job = &results["jobs"][0];
    assert_eq!(job["failure_kind"], "tests_failed");
    let cause = job["cause"].as_str().unwrap();
    assert!(cause.starts_with("failing: "), "{cause}");
    assert!(
        cause.contains("value_is_new") && !cause.contains("curl"),
        "{cause}"
    );
    // The refusal stays in the trajectory.
    assert!(
        crate::results::timeline_actions(job)
            .iter()
            .any(|e| e["kind"] == "invalid" && e["text"].as_str().unwrap().contains("curl")),
        "{job:#}"
    );
    let html = read(&sb.data().join("report/report.html"));
    let text = crate::harness::html_job_text(&html, job["instance"].as_str().unwrap());
    let shown = text
        .split("cause:\nmuted\n")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("no cause in the HTML report"));
    assert!(
        shown.contains("value_is_new") && !shown.contains("curl"),
        "{shown}"
    );
}

/// The bundled Rust task, with a fix that builds but renames the function
/// the hidden tests call: they do not compile.
fn renamed_fix(sb: &Sandbox) -> PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = sb.path().join("renamed");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("replies.jsonl"),
        r#"{"kind":"write_file","path":"src/lib.rs","content":"pub fn sum_to(n: u64) -> u64 {\n    (1..=n).sum()\n}\n"}
{"kind":"verify"}
{"kind":"finish","summary":"renamed"}
"#,
    )
    .unwrap();
    let manifest = dir.join("renamed.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"id = "renamed"
prompt = "Make sum_up_to(n) return 1 + 2 + ... + n."
source = "{root}/evaluation/fixtures/off_by_one"
editable = ["src/**/*.rs"]
allow = ["cargo build **"]
verify = ["cargo", "build", "--offline", "--quiet"]

[limits]
attempts = 1

[acceptance]
dir = "{root}/evaluation/acceptance/off_by_one"
command = ["cargo", "test", "--offline", "--quiet"]

[provider]
kind = "script"
script = "replies.jsonl"
"#
        ),
    )
    .unwrap();
    manifest
}

#[test]
fn hidden_tests_that_do_not_build_say_the_compiler_s_error() {
    let sb = Sandbox::new();
    let manifest = renamed_fix(&sb);
    let batch = sb
        .run(&["batch", "DATA", manifest.to_str().unwrap()])
        .code(1);
    let line = batch
        .stderr
        .lines()
        .find(|l| l.starts_with("renamed: "))
        .unwrap_or_else(|| panic!("no summary line: {batch:#?}"));
    assert!(
        line.contains("the tests did not build: error[E0432]: unresolved import"),
        "{line}"
    );
    assert!(!line.contains("not reported"), "{line}");

    // The log keeps the one line; the attempt keeps the excerpt.
    let excerpt = read(&sb.data().join("runs/renamed/1/harness_output.txt"));
    assert!(excerpt.starts_with("error[E0432]"), "{excerpt}");
    assert!(excerpt.contains("sum_up_to"), "{excerpt}");
    assert!(excerpt.lines().count() <= 40, "{excerpt}");

    let results: serde_json::Value =
        serde_json::from_str(&read(&sb.data().join("report/results.json"))).unwrap();
    let job = &results["jobs"][0];
    let cause = job["cause"].as_str().unwrap();
    assert!(cause.contains("error[E0432]"), "{cause}");
    // The excerpt, beyond the one line: results.json, report.md, the
    // HTML report's job detail, the ATIF trajectory and the Inspect sample.
    let held = |text: &str| text.contains("error[E0432]") && text.contains("sum_up_to");
    let excerpt_json = job["harness_output"].as_str().unwrap();
    assert!(held(excerpt_json), "{job:#}");
    let md = read(&sb.data().join("report/report.md"));
    assert!(md.contains("  ```text\n  error[E0432]"), "{md}");
    let html = read(&sb.data().join("report/report.html"));
    let text = crate::harness::html_job_text(&html, job["instance"].as_str().unwrap());
    assert!(
        text.contains("Why the tests did not run") && held(&text),
        "{text}"
    );
    let atif: serde_json::Value =
        serde_json::from_str(&read(&sb.data().join("report/atif/renamed/1.json"))).unwrap();
    assert!(
        held(atif["extra"]["harness_output"].as_str().unwrap()),
        "{atif:#}"
    );
    let eval = sb.data().join("report/inspect/renamed@script.eval");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&eval).unwrap()).unwrap();
    let mut sample = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("samples/renamed_epoch_1.json").unwrap(),
        &mut sample,
    )
    .unwrap();
    let sample: serde_json::Value = serde_json::from_str(&sample).unwrap();
    let explanation = sample["scores"]
        .as_object()
        .and_then(|s| s.values().next())
        .and_then(|s| s["explanation"].as_str())
        .unwrap_or_else(|| panic!("{sample:#}"));
    assert!(held(explanation), "{explanation}");
    // The live viewer's job page holds it too.
    let viewer = crate::view::Viewer::start(&sb, &["DATA"]);
    let page = viewer.get("/api/job?run=0&id=renamed", true, None);
    assert_eq!(page.status, 200, "{}", page.body);
    let doc = page.json();
    assert!(
        held(doc["result"]["harness_output"].as_str().unwrap_or_default()),
        "{doc:#}"
    );
    let status = sb.run(&["status", "DATA"]).ok();
    assert!(status.stderr.contains("error[E0432]"), "{status:#?}");
}

#[test]
fn hidden_tests_that_do_not_collect_say_pytest_s_error() {
    if agent_runtime_test_support::require_tool(
        "hidden_tests_that_do_not_collect_say_pytest_s_error",
        crate::python_job::python_with_pytest(),
    )
    .is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = sb.path().join("py");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("replies.jsonl"),
        r#"{"kind":"write_file","path":"calc.py","content":"def add(a, b):\n    return a + b\n\n\ndef average(values):\n    return sum(values) / len(values)\n"}
{"kind":"finish","summary":"renamed"}
"#,
    )
    .unwrap();
    let manifest = dir.join("py.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"id = "py_renamed"
prompt = "Make mean(values) in calc.py return the exact arithmetic mean."
source = "{root}/evaluation/python/source"
editable = ["calc.py"]
allow = ["true"]
verify = ["true"]

[env]
PYTHONDONTWRITEBYTECODE = "1"

[limits]
attempts = 1

[acceptance]
dir = "{root}/evaluation/python/acceptance"
command = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=report.xml"]
results = "junit:report.xml"

[provider]
kind = "script"
script = "replies.jsonl"
"#
        ),
    )
    .unwrap();
    let batch = sb
        .run(&["batch", "DATA", manifest.to_str().unwrap()])
        .code(1);
    let line = batch
        .stderr
        .lines()
        .find(|l| l.starts_with("py_renamed: "))
        .unwrap_or_else(|| panic!("no summary line: {batch:#?}"));
    assert!(
        line.contains("the tests did not collect: ERROR collecting")
            && line.contains("cannot import name 'mean'"),
        "{line}"
    );
    let excerpt = read(&sb.data().join("runs/py_renamed/1/harness_output.txt"));
    assert!(excerpt.contains("ERROR collecting"), "{excerpt}");
    let results: serde_json::Value =
        serde_json::from_str(&read(&sb.data().join("report/results.json"))).unwrap();
    let cause = results["jobs"][0]["cause"].as_str().unwrap();
    assert!(cause.contains("cannot import name 'mean'"), "{cause}");
    let excerpt = results["jobs"][0]["harness_output"].as_str().unwrap();
    assert!(
        excerpt.contains("ERROR collecting") && excerpt.contains("cannot import name 'mean'"),
        "{excerpt}"
    );
    let html = read(&sb.data().join("report/report.html"));
    let text = crate::harness::html_job_text(&html, "py_renamed");
    assert!(text.contains("Why the tests did not run"), "{text}");
}
