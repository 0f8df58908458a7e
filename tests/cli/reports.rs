//! Reports through the real binary: the controls run as one batch, the
//! reports written at run time equal the ones regenerated from the log, and
//! the files are what CI tools expect, naming the tests a wrong fix fails.

use crate::harness::Sandbox;

/// Nine of the controls, with a mix of outcomes (the whole suite, with its
/// cancels and crashes, is `tests/cli/controls.rs`'s).
fn controls() -> Vec<String> {
    [
        "disallowed_command",
        "invalid_decisions",
        "opposite_attempts",
        "passing_baseline",
        "step_limit",
        "success",
        "test_tampering",
        "wall_timeout",
        "wrong_fix",
    ]
    .iter()
    .map(|name| {
        format!(
            "{}/evaluation/controls/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        )
    })
    .collect()
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
        ("disallowed_command", "succeeded", None),
        ("invalid_decisions", "failed", Some("invalid_decisions")),
        ("opposite_attempts", "succeeded", None),
        ("passing_baseline", "failed", Some("invalid_baseline")),
        ("step_limit", "failed", Some("step_limit")),
        ("success", "succeeded", None),
        ("test_tampering", "failed", Some("tests_failed")),
        ("wall_timeout", "failed", Some("wall_timeout")),
        ("wrong_fix", "failed", Some("tests_failed")),
    ];
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runtime.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(results["schema_version"], 11);
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

    per_test_verdicts(jobs);

    let regenerated = sb.path().join("regenerated");
    sb.run(&["report", "DATA", "--out", regenerated.to_str().unwrap()])
        .ok()
        .stdout_has("3/9 jobs succeeded");
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
    wrong_fix_is_named_in_every_format(&regenerated);
}

/// The failing tests of the wrong fix: it makes the visible test pass and
/// neither acceptance test.
const WRONG_FIX_FAILING: [&str; 2] = [
    "test/acceptance::matches_the_closed_form",
    "test/acceptance::zero_and_one",
];

fn per_test_verdicts(jobs: &[serde_json::Value]) {
    let job = |id: &str| jobs.iter().find(|j| j["instance"] == id).unwrap();
    let wrong_fix = job("wrong_fix");
    assert_eq!(wrong_fix["verified_per_test"], true);
    assert_eq!(wrong_fix["f2p_passed"], 1, "{wrong_fix:#}");
    assert_eq!(wrong_fix["f2p_total"], 3);
    assert_eq!(wrong_fix["p2p_passed"], 0);
    assert_eq!(wrong_fix["p2p_total"], 0);
    assert_eq!(
        wrong_fix["failing_tests"],
        serde_json::json!(WRONG_FIX_FAILING)
    );
    assert_eq!(wrong_fix["failing_count"], 2);
    assert_eq!(wrong_fix["missing_tests"], serde_json::json!([]));
    assert_eq!(wrong_fix["missing_count"], 0);
    assert_eq!(wrong_fix["baseline_reason"], serde_json::Value::Null);
    let success = job("success");
    assert_eq!(success["verified_per_test"], true);
    assert_eq!(success["f2p_passed"], success["f2p_total"]);
    assert_eq!(success["failing_count"], 0);
    let passing_baseline = job("passing_baseline");
    assert_eq!(
        passing_baseline["baseline_reason"],
        "every test passes at baseline: the task is already solved"
    );
    assert_eq!(passing_baseline["verified_per_test"], false);
    assert_eq!(passing_baseline["f2p_total"], serde_json::Value::Null);
}

fn wrong_fix_is_named_in_every_format(dir: &std::path::Path) {
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap();
    let [first, second] = WRONG_FIX_FAILING;
    let md = read("report.md");
    let line = format!(
        "- **wrong_fix** tests_failed: F2P 1/3, P2P 0/0; `{first}` (failing), `{second}` (failing)\n"
    );
    assert!(md.contains(&line), "{md}");
    assert!(
        crate::harness::md_tables(&md).contains("| tests_failed | 2 | test_tampering, wrong_fix |"),
        "{md}"
    );
    assert!(md.contains(
        "- **passing_baseline** invalid_baseline; baseline: every test passes at baseline: the task is already solved\n"
    ));

    let junit = read("junit.xml");
    let message = format!(
        "message=\"tests_failed: {first} failed and 1 more (F2P 1/3, P2P 0/0)\" type=\"tests_failed\""
    );
    assert!(junit.contains(&message), "{junit}");
    assert!(junit.contains(&format!("failing: {second}")));
    assert!(junit.contains(
        "message=\"invalid_baseline: every test passes at baseline: the task is already solved\""
    ));

    let tsv = read("results.tsv");
    let header: Vec<&str> = tsv.lines().next().unwrap().split('\t').collect();
    assert_eq!(header.len(), 48);
    let row: Vec<&str> = tsv
        .lines()
        .find(|l| l.starts_with("wrong_fix\t"))
        .unwrap()
        .split('\t')
        .collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(cell("verified_per_test"), "true");
    assert_eq!((cell("f2p_passed"), cell("f2p_total")), ("1", "3"));
    assert_eq!(cell("failing_tests"), WRONG_FIX_FAILING.join(";"));

    let html = read("report.html");
    let shown = crate::harness::html_job_text(&html, "wrong_fix");
    for name in WRONG_FIX_FAILING {
        assert!(
            shown.contains(&format!("failing\nbadge failing\n{name}\n")),
            "{name} in the HTML details: {shown}"
        );
    }
    assert!(shown.contains("F2P 1/3, P2P 0/0"));
}

/// A 1,000-step job with a full trace: the report shows every step,
/// collapsed, and stays small.
#[test]
fn a_thousand_step_trajectory_stays_small_and_collapsed() {
    let sb = Sandbox::new();
    let source = sb.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("a.txt"), "old\n".repeat(50)).unwrap();
    let mut script = String::new();
    for _ in 0..997 {
        script.push_str("{\"kind\":\"read_file\",\"path\":\"a.txt\"}\n");
    }
    script.push_str("{\"kind\":\"write_file\",\"path\":\"a.txt\",\"content\":\"new\\n\"}\n");
    script.push_str("{\"kind\":\"verify\"}\n");
    script.push_str("{\"kind\":\"finish\",\"summary\":\"done\"}\n");
    std::fs::write(sb.path().join("long.jsonl"), script).unwrap();
    std::fs::write(
        sb.path().join("long.toml"),
        "id = \"long\"\nprompt = \"Read a lot, then write new.\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"true\"]\nverify = [\"true\"]\ntrace = \"full\"\n\n[limits]\nattempts = 1\nmax_steps = 1000\ntoken_budget = 100000000\n\n[provider]\nkind = \"script\"\nscript = \"long.jsonl\"\n",
    )
    .unwrap();
    sb.run(&["batch", "DATA", "long.toml"]).ok();
    let html = std::fs::read_to_string(sb.data().join("report/report.html")).unwrap();
    let data = crate::harness::html_data(&html);
    let steps = data["details"][0]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|b| b["steps"].as_array())
        .unwrap();
    // A model step is [ok, at, kind, text, [attempt, step], lines, call],
    // drawn collapsed; its lines [ok, kind, text]; its call the model's
    // side (fields, reply, obs, diff).
    let model_steps: Vec<&serde_json::Value> = steps
        .iter()
        .filter(|g| g.as_array().unwrap().len() > 4)
        .collect();
    assert_eq!(model_steps.len(), 1000);
    // Every step has what the model was told, capped.
    let told = model_steps
        .iter()
        .filter(|g| g[6]["obs"].is_string())
        .count();
    assert_eq!(told, 999);
    assert!(
        model_steps.iter().any(|g| g[6]["diff"] == "@@ a.txt\n+new"),
        "the edit as a diff"
    );
    let size = html.len();
    eprintln!("report.html with a 1,000-step trajectory: {size} bytes");
    assert!(size < 3 * 1024 * 1024, "{size} bytes");
}
