//! Reports through the real binary: the controls run as one batch, the
//! reports written at run time equal the ones regenerated from the log, and
//! the files are what CI tools expect.

use crate::harness::Sandbox;

/// Every control except `cancel`, which needs a cancel from outside.
fn controls() -> Vec<String> {
    let dir = format!("{}/evaluation/controls", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && !p.ends_with("cancel.toml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

fn without_times(mut value: serde_json::Value) -> serde_json::Value {
    match &mut value {
        serde_json::Value::Object(map) => {
            for key in [
                "generated_at_ms",
                "wall_ms",
                "at_ms",
                "provider_latency_ms",
                "median_wall_ms",
                "mean_latency_ms",
            ] {
                map.remove(key);
            }
            for v in map.values_mut() {
                *v = without_times(v.take());
            }
        }
        serde_json::Value::Array(items) => {
            for v in items.iter_mut() {
                *v = without_times(v.take());
            }
        }
        _ => {}
    }
    value
}

#[test]
fn controls_in_one_batch_and_reports_regenerated_from_the_log() {
    let sb = Sandbox::new();
    let runtime = sb.path().join("runtime-report");
    let mut args = vec!["batch", "DATA"];
    let files = controls();
    args.extend(files.iter().map(String::as_str));
    let runtime_str = runtime.display().to_string();
    args.extend(["-j", "2", "--report", &runtime_str]);
    let run = sb.run(&args);
    assert_eq!(run.code, 1, "some controls fail by design: {run:#?}");

    let expected = [
        ("disallowed_command", "accepted", None),
        ("invalid_decisions", "failed", Some("invalid_decisions")),
        ("opposite_attempts", "accepted", None),
        ("passing_baseline", "failed", Some("invalid_baseline")),
        ("step_limit", "failed", Some("step_limit")),
        ("success", "accepted", None),
        ("test_tampering", "failed", Some("acceptance_failed")),
        ("wall_timeout", "failed", Some("wall_timeout")),
        ("wrong_fix", "failed", Some("acceptance_failed")),
    ];
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runtime.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(results["schema_version"], 1);
    let jobs = results["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), expected.len());
    for (id, outcome, kind) in expected {
        let job = jobs
            .iter()
            .find(|j| j["instance"] == id)
            .unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(job["outcome"], outcome, "{id}");
        assert_eq!(job["failure_kind"].as_str(), kind, "{id}");
    }
    let opposite = jobs
        .iter()
        .find(|j| j["instance"] == "opposite_attempts")
        .unwrap();
    assert_eq!(
        opposite["attempts"], 2,
        "the batch retried the failed first attempt"
    );
    let success = jobs.iter().find(|j| j["instance"] == "success").unwrap();
    assert!(
        success["input_tokens"].as_u64().unwrap() > 0
            && success["patch"].as_str().unwrap().contains("1..=n")
    );

    let regenerated = sb.path().join("regenerated");
    sb.run(&["report", "DATA", "--out", regenerated.to_str().unwrap()])
        .ok()
        .stdout_has("3/9 jobs accepted");
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(regenerated.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(
        without_times(again),
        without_times(results),
        "the report is a function of the log"
    );
    for file in ["report.md", "results.tsv", "junit.xml"] {
        let a = std::fs::read_to_string(runtime.join(file)).unwrap();
        let b = std::fs::read_to_string(regenerated.join(file)).unwrap();
        assert_eq!(a.lines().count(), b.lines().count(), "{file}");
    }

    let junit = std::fs::read_to_string(regenerated.join("junit.xml")).unwrap();
    assert!(junit.contains("<testsuites") && junit.contains("classname=\"controls\""));
    assert_eq!(junit.matches("<testcase").count(), 9);
    assert_eq!(junit.matches("<failure").count(), 6);
    let tsv = std::fs::read_to_string(regenerated.join("results.tsv")).unwrap();
    assert_eq!(tsv.lines().count(), 10, "header plus one row per job");
    let html = std::fs::read_to_string(regenerated.join("report.html")).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page references nothing outside itself"
    );
    assert!(html.contains("<svg"), "the pass-rate chart is inline SVG");
}
