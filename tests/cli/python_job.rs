//! The Python jobs in `evaluation/python/`, judged per test through
//! pytest's JUnit file: the baseline gives the inventory, the correct fix
//! is accepted and the wrong fix fails naming the test it breaks.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::harness::{Sandbox, log_lines};

const F2P: &str = "tests.test_calc::test_mean_of_halves";
const P2P: [&str; 2] = [
    "tests.test_calc::test_add",
    "tests.test_visible::test_mean_of_evens",
];

/// The `python3` a sandboxed command gets (the first on the fixed search
/// path after the toolchain's bin directory), if it can run pytest.
pub fn python_with_pytest() -> Result<(), String> {
    let Some(python) = ["/usr/local/bin/python3", "/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        return Err("no python3 in /usr/local/bin, /usr/bin or /bin".into());
    };
    match Command::new(python)
        .args(["-m", "pytest", "--version"])
        .output()
    {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "`{python} -m pytest --version` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {python}: {e}")),
    }
}

/// Per job: the event types the log holds for it, last one of each kind.
fn by_job(lines: &[Value]) -> BTreeMap<String, BTreeMap<String, Value>> {
    let mut jobs: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
    for line in lines {
        if let (Some(job), Some(ty)) = (line["job"].as_str(), line["type"].as_str()) {
            jobs.entry(job.to_string())
                .or_default()
                .insert(ty.to_string(), line.clone());
        }
    }
    jobs
}

#[test]
fn a_python_job_is_judged_per_test_through_junit() {
    if agent_runtime_test_support::require_tool(
        "a_python_job_is_judged_per_test_through_junit",
        python_with_pytest(),
    )
    .is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let dir = format!("{}/evaluation/python", env!("CARGO_MANIFEST_DIR"));
    // Failed attempts keep their check copies (the report is read below).
    let run = sb.run(&["batch", "DATA", &dir, "-j", "2", "--keep", "failed"]);
    assert_eq!(run.code, 1, "the wrong fix must fail: {run:#?}");
    let jobs = by_job(&log_lines(&sb));

    for id in ["python_calc", "python_calc_wrong_fix"] {
        let events = &jobs[id];
        let baseline = &events["baseline"];
        assert_eq!(baseline["result"], "failed", "{id}: {baseline}");
        assert_eq!(
            baseline["inventory"]["fail_to_pass"],
            serde_json::json!([F2P]),
            "{id}: {baseline}"
        );
        assert_eq!(
            baseline["inventory"]["pass_to_pass"],
            serde_json::json!(P2P),
            "{id}: {baseline}"
        );
        // Every command ran python3 from the fixed search path.
        let command = &events["command"];
        assert!(
            command["resolved"]
                .as_str()
                .is_some_and(|r| r.ends_with("/python3")),
            "{id}: {command}"
        );
    }

    let fix = &jobs["python_calc"];
    assert_eq!(fix["attempt_finished"]["outcome"], "succeeded", "{fix:#?}");
    let verdict = &fix["acceptance"]["verdict"];
    assert_eq!(fix["acceptance"]["result"], "passed", "{verdict}");
    assert_eq!(
        (&verdict["f2p_passed"], &verdict["p2p_passed"]),
        (&Value::from(1), &Value::from(2)),
        "{verdict}"
    );

    let wrong = &jobs["python_calc_wrong_fix"];
    assert_eq!(wrong["attempt_finished"]["outcome"], "failed", "{wrong:#?}");
    assert_eq!(
        wrong["attempt_finished"]["failure_kind"], "tests_failed",
        "{wrong:#?}"
    );
    // The wrong fix passed verify (the visible test) before acceptance.
    assert_eq!(wrong["verify"]["passed"], true, "{wrong:#?}");
    let verdict = &wrong["acceptance"]["verdict"];
    assert_eq!(verdict["failing"], serde_json::json!([F2P]), "{verdict}");
    assert_eq!(verdict["missing"], serde_json::json!([]), "{verdict}");
    assert_eq!(verdict["p2p_passed"], 2, "{verdict}");

    // The report the command wrote is the one read: it is in the check
    // copy, and a stale one in the workspace would not count anyway.
    let report = sb
        .data()
        .join("work/python_calc_wrong_fix/1-acceptance/report.xml");
    // (Its tests ran under the names drawn for the run.)
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(xml.contains("assert mean([1, 2]) == 1.5"), "{xml}");
    assert!(!xml.contains("test_mean_of_halves"), "{xml}");
}
