//! report.html explains each failure, through the real binary: a fix that
//! special-cases the visible test fails a hidden one, and the page shows
//! the task prompt and the failing test's own assertion text (kept as an
//! artifact beside the log, never in the log), links the job's logs, and
//! says that `trace = "full"` would show the model's messages; a merged
//! shard without its artifacts says they are not available; a Python job
//! shows pytest's assertion text.

use std::path::Path;

use agent_runtime_test_support::require_tool;
use serde_json::Value;

use crate::browser::{Browser, chromium};
use crate::harness::{Sandbox, html_data, html_job_text};
use crate::python_job::python_with_pytest;

fn manifest(name: &str) -> String {
    format!("{}/evaluation/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The excerpts the runner kept for `job`'s attempt `n`.
fn excerpts(sb: &Sandbox, job: &str, n: u32) -> Value {
    let path = sb
        .data()
        .join(format!("runs/{job}/{n}/tests/excerpts.json"));
    serde_json::from_str(&read(&path)).unwrap()
}

/// The `links` block of the job's details: its base and paths.
fn links(html: &str) -> (String, Vec<String>) {
    let data = html_data(html);
    let links = data["details"][0]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|b| b.get("links"))
        .expect("the job's logs are linked")
        .clone();
    let paths = links["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    (links["base"].as_str().unwrap().to_string(), paths)
}

#[test]
fn a_fix_that_special_cases_the_visible_test_is_explained_by_its_report() {
    let sb = Sandbox::new();
    let run = sb.run(&["batch", "DATA", &manifest("controls/wrong_fix.toml")]);
    assert_eq!(run.code, 1, "the wrong fix fails: {run:#?}");

    // The runner kept each failing test's own output beside the log.
    let kept = excerpts(&sb, "wrong_fix", 1);
    assert_eq!(kept["version"], 1);
    let tests = kept["tests"].as_array().unwrap();
    let closed_form = tests
        .iter()
        .find(|t| t["name"] == "test/acceptance::matches_the_closed_form")
        .unwrap_or_else(|| panic!("{kept:#}"));
    assert_eq!(closed_form["status"], "failing");
    let assertion = closed_form["excerpt"].as_str().unwrap();
    assert!(
        assertion.contains("assertion `left == right` failed: n = 1")
            && assertion.contains("  left: 0\n right: 1"),
        "{assertion}"
    );
    // Never in the log, which keeps no command output.
    let log = String::from_utf8(sb.log_bytes()).unwrap();
    assert!(!log.contains("left == right") && !log.contains("panicked at"));

    // The page shows the prompt, the assertion text and the trace hint.
    let html = read(&sb.data().join("report/report.html"));
    let shown = html_job_text(&html, "wrong_fix");
    assert!(
        shown.contains("Make sum_up_to(n) return 1 + 2 + ... + n."),
        "{shown}"
    );
    assert!(shown.contains("  left: 0\n right: 1"), "{shown}");
    assert!(shown.contains("trace = \"full\""), "{shown}");
    // Its logs, linked relative to the report, are there.
    let (base, paths) = links(&html);
    assert_eq!(base, "../");
    for file in [
        "baseline.log",
        "acceptance.log",
        "patch.diff",
        "tests/excerpts.json",
    ] {
        let path = format!("runs/wrong_fix/1/{file}");
        assert!(paths.contains(&path), "{path} in {paths:?}");
    }
    for path in &paths {
        let target = sb.data().join("report").join(&base).join(path);
        assert!(target.is_file(), "{} is not there", target.display());
    }

    // Regenerated elsewhere, the links still lead to the data dir.
    let elsewhere = sb.path().join("out/report");
    sb.run(&["report", "DATA", "--out", elsewhere.to_str().unwrap()])
        .ok();
    let (base, _) = links(&read(&elsewhere.join("report.html")));
    assert_eq!(base, "../../data/");

    // A shard merged without its runs/ directory says what it lacks.
    let shard = sb.path().join("shard");
    std::fs::create_dir_all(&shard).unwrap();
    std::fs::copy(sb.log(), shard.join("events.log")).unwrap();
    let merged = sb.path().join("merged");
    sb.run(&[
        "report",
        shard.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ])
    .ok();
    let html = read(&merged.join("report.html"));
    let shown = html_job_text(&html, "wrong_fix");
    assert!(shown.contains("is not available here"), "{shown}");
    assert!(!shown.contains("right: 1"), "{shown}");
    assert!(
        shown.contains("test/acceptance::matches_the_closed_form"),
        "{shown}"
    );

    // In a browser, the job's details draw the same text.
    if require_tool(
        "a_fix_that_special_cases_the_visible_test_is_explained_by_its_report (browser half)",
        chromium(),
    )
    .is_none()
    {
        return;
    }
    let mut browser = Browser::launch().unwrap();
    let page = browser.page(1000, 800).unwrap();
    browser
        .open(&page, &sb.data().join("report/report.html"))
        .unwrap();
    let drawn = browser
        .eval(
            &page,
            "new Promise(function(done){\
             window.addEventListener('hashchange',function(){done(document.getElementById('job-detail').innerText);},{once:true});\
             document.querySelector('#jobs tbody a').click();})",
        )
        .unwrap();
    let drawn = drawn.as_str().unwrap();
    assert!(
        drawn.contains("Make sum_up_to(n) return 1 + 2 + ... + n."),
        "{drawn}"
    );
    assert!(drawn.contains("left: 0"), "{drawn}");
    assert!(drawn.contains("runs/wrong_fix/1/acceptance.log"), "{drawn}");
}

#[test]
fn a_python_job_s_report_shows_pytest_s_assertion_text() {
    if require_tool(
        "a_python_job_s_report_shows_pytest_s_assertion_text",
        python_with_pytest(),
    )
    .is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let run = sb.run(&[
        "batch",
        "DATA",
        &manifest("python/python_calc_wrong_fix.toml"),
    ]);
    assert_eq!(run.code, 1, "the wrong fix fails: {run:#?}");
    let kept = excerpts(&sb, "python_calc_wrong_fix", 1);
    let test = &kept["tests"][0];
    assert_eq!(
        test["name"], "tests.test_calc::test_mean_of_halves",
        "{kept:#}"
    );
    let longrepr = test["excerpt"].as_str().unwrap();
    assert!(longrepr.contains("E       assert 2 == 1.5"), "{longrepr}");
    let html = read(&sb.data().join("report/report.html"));
    let shown = html_job_text(&html, "python_calc_wrong_fix");
    assert!(shown.contains("E       assert 2 == 1.5"), "{shown}");
    assert!(shown.contains("mean([1, 2]) is 1.5"), "the prompt: {shown}");
}
