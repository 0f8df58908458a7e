//! Twins and canaries on hidden tests whose shape invites mistakes: a
//! Black-style multi-line `xfail` decorator (a canary planted between it
//! and its `def` took the xfail over: a correct fix was `tampered`, or the
//! xfail test entered the inventory and every fix failed), a
//! `parametrize` over several lines and a `unittest.TestCase`. Fifty
//! `check` runs, each drawing names, places and tokens afresh: every run
//! valid, with the same inventory, and no tamper signal.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::harness::Sandbox;

const CALC: &str = "def mean(values):\n    return sum(values) // len(values)\n\n\ndef add(a, b):\n    return a + b\n";

const FIXED: &str = "def mean(values):\n    return sum(values) / len(values)\n\n\ndef add(a, b):\n    return a + b\n";

const HIDDEN: &str = r#"import unittest

import pytest

from calc import add, mean


def test_mean_of_halves():
    assert mean([1, 2]) == 1.5


@pytest.mark.xfail(
    reason="the mean of nothing is not defined yet",
    strict=True,
)
def test_mean_of_nothing():
    assert mean([]) == 0


@pytest.mark.parametrize(
    "a,b,total",
    [
        (1, 2, 3),
        (2, 2, 4),
    ],
)
def test_add(a, b, total):
    assert add(a, b) == total


class AddTest(unittest.TestCase):
    def test_add_zero(self):
        self.assertEqual(add(0, 5), 5)
"#;

#[test]
fn fifty_fresh_draws_over_multi_line_decorators_are_valid_with_one_inventory() {
    if agent_runtime_test_support::require_tool(
        "fifty_fresh_draws_over_multi_line_decorators_are_valid_with_one_inventory",
        crate::python_job::python_with_pytest(),
    )
    .is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let root = sb.path();
    std::fs::create_dir_all(root.join("source")).unwrap();
    std::fs::write(root.join("source/calc.py"), CALC).unwrap();
    std::fs::create_dir_all(root.join("acceptance/tests")).unwrap();
    std::fs::write(root.join("acceptance/tests/test_calc.py"), HIDDEN).unwrap();
    let fix = serde_json::json!({"kind": "write_file", "path": "calc.py", "content": FIXED});
    std::fs::write(
        root.join("oracle.jsonl"),
        format!("{fix}\n{{\"kind\":\"finish\",\"summary\":\"fixed\"}}\n"),
    )
    .unwrap();
    std::fs::write(
        root.join("job.toml"),
        r#"id = "decorated"
prompt = "Make mean(values) return the exact mean."
source = "source"
editable = ["calc.py"]
allow = ["python3 -m pytest **"]
verify = ["python3", "-m", "pytest", "--version"]

[env]
PYTHONDONTWRITEBYTECODE = "1"

[acceptance]
dir = "acceptance"
command = ["python3", "-m", "pytest", "-q", "--junitxml=report.xml"]
results = "junit:report.xml"

[limits]
attempts = 1

[oracle]
script = "oracle.jsonl"
"#,
    )
    .unwrap();
    let job = root.join("job.toml");
    let run = sb.run(&[
        "check",
        job.to_str().unwrap(),
        "--runs",
        "50",
        "-j",
        "2",
        "--json",
        "--data",
        root.join("check").to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:#?}"));
    let verdict = &doc["jobs"][0];
    assert_eq!(verdict["verdict"], "valid", "{verdict:#}");
    assert_eq!(verdict["signals"], 0, "{verdict:#}");
    let log = std::fs::read_to_string(root.join("check/events.log")).unwrap();
    let records: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let inventories: BTreeSet<String> = records
        .iter()
        .filter(|r| r["type"] == "baseline")
        .map(|r| r["inventory"].to_string())
        .collect();
    assert_eq!(inventories.len(), 1, "{inventories:#?}");
    let inventory = inventories.iter().next().unwrap();
    assert!(
        inventory.contains("\"fail_to_pass\":[\"tests.test_calc::test_mean_of_halves\"]"),
        "{inventory}"
    );
    assert!(!inventory.contains("test_mean_of_nothing"), "{inventory}");
    let finished: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "attempt_finished")
        .collect();
    assert_eq!(finished.len(), 50);
    for record in finished {
        assert_eq!(record["outcome"], "succeeded", "{record:#}");
        assert!(
            record["integrity"]["signals"].is_null(),
            "a false alarm: {record:#}"
        );
        assert!(
            record["integrity"]["twins"].as_u64().unwrap_or(0) >= 2,
            "{record:#}"
        );
    }
}
