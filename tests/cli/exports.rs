//! The runs out to other tools' viewers, through the real binary: a
//! scripted 3-job batch writes an Inspect log that reads back with its 3
//! samples and their scores, an ATIF trajectory per attempt with the
//! documented keys (a full trace with the model's messages, a metadata one
//! without), and SWE-bench predictions for the jobs that name an
//! `instance_id`; `report` regenerates the same files from the log; a
//! sweep with repeats maps repeats to epochs and to `#k` predictions.
//! Where inspect-ai (and harbor) are installed in a venv, Python reads the
//! files back with their own readers; the checks skip, saying why, where
//! they are not.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use agent_runtime_test_support::require_tool;
use serde_json::Value;

use crate::harness::Sandbox;

/// The task: write 42 into `answer.txt`; acceptance greps for it.
fn write_task(root: &Path) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("acc")).unwrap();
    std::fs::create_dir_all(root.join("jobs")).unwrap();
    std::fs::write(root.join("src/answer.txt"), "0\n").unwrap();
    std::fs::write(root.join("acc/README"), "hidden acceptance dir\n").unwrap();
    let scripts = [
        (
            "good",
            r#"{"kind":"read_file","path":"answer.txt"}
{"kind":"write_file","path":"answer.txt","content":"42\n"}
{"kind":"verify"}
{"kind":"finish","summary":"The answer is 42."}
"#,
        ),
        (
            "wrong",
            r#"{"kind":"write_file","path":"answer.txt","content":"41\n"}
{"kind":"verify"}
{"kind":"finish","summary":"Done."}
"#,
        ),
        (
            "invalid",
            r#""not a decision"
{"kind":"write_file","path":"answer.txt","content":"42\n"}
{"kind":"verify"}
{"kind":"finish","summary":"Done."}
"#,
        ),
    ];
    for (name, script) in scripts {
        std::fs::write(root.join(format!("{name}.jsonl")), script).unwrap();
    }
}

fn write_job(root: &Path, id: &str, trace: &str, script: &str) {
    let text = format!(
        "id = {id:?}\nfamily = \"demo\"\nprompt = \"Write 42 into answer.txt.\"\n\
         source = \"../src\"\neditable = [\"answer.txt\"]\nallow = [\"grep **\"]\n\
         verify = [\"grep\", \"-q\", \".\", \"answer.txt\"]\ntrace = {trace:?}\n\n\
         [limits]\nattempts = 1\n\n\
         [metadata]\ninstance_id = \"octo__demo-{id}\"\n\n\
         [acceptance]\ndir = \"../acc\"\ncommand = [\"grep\", \"-qx\", \"42\", \"answer.txt\"]\n\n\
         [provider]\nkind = \"script\"\nscript = \"../{script}.jsonl\"\n"
    );
    std::fs::write(root.join(format!("jobs/{id}.toml")), text).unwrap();
}

/// The members of a zip, by name.
fn unzip(path: &Path) -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(path).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut member = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            member.read_to_end(&mut bytes).unwrap();
            (member.name().unwrap().to_string(), bytes)
        })
        .collect()
}

fn json_member(members: &[(String, Vec<u8>)], name: &str) -> Value {
    let (_, bytes) = members
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in the log"));
    serde_json::from_slice(bytes).unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_batch_exports_an_inspect_log_atif_trajectories_and_predictions() {
    let sb = Sandbox::new();
    write_task(sb.path());
    write_job(sb.path(), "good", "full", "good");
    write_job(sb.path(), "wrong", "metadata", "wrong");
    write_job(sb.path(), "invalid", "metadata", "invalid");
    sb.run(&["batch", "DATA", "jobs", "-j", "2"]).code(1);
    let report = sb.data().join("report");

    // Inspect: one log for the family and its model, 3 samples, scored.
    let eval = report.join("inspect/demo@script.eval");
    let members = unzip(&eval);
    let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    for name in [
        "header.json",
        "summaries.json",
        "samples/good_epoch_1.json",
        "samples/wrong_epoch_1.json",
        "samples/invalid_epoch_1.json",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let header = json_member(&members, "header.json");
    assert_eq!(header["version"], 2);
    assert_eq!(header["status"], "success");
    assert_eq!(header["eval"]["task"], "demo");
    assert_eq!(header["eval"]["model"], "script");
    assert_eq!(header["results"]["total_samples"], 3);
    let accuracy = &header["results"]["scores"][0]["metrics"]["accuracy"]["value"];
    assert!(
        (accuracy.as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{header}"
    );
    let summaries = json_member(&members, "summaries.json");
    let scores: Vec<(String, String)> = summaries
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["scores"]["acceptance"]["value"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        scores,
        [
            ("good".to_string(), "C".to_string()),
            ("invalid".to_string(), "C".to_string()),
            ("wrong".to_string(), "I".to_string()),
        ]
    );
    let good = json_member(&members, "samples/good_epoch_1.json");
    let messages = good["messages"].as_array().unwrap();
    // The prompt, then each step's reply and what came back.
    assert_eq!(messages.len(), 1 + 2 * 4, "{good:#}");
    assert_eq!(messages[0]["content"], "Write 42 into answer.txt.");
    assert_eq!(messages[3]["tool_calls"][0]["function"], "write_file");
    assert_eq!(messages[3]["tool_calls"][0]["arguments"]["content"], "42\n");
    assert!(
        messages[2]["content"].as_str().unwrap().contains('0'),
        "the full trace's observation of read_file: {good:#}"
    );
    assert!(
        good["model_usage"]["script"]["input_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        good["scores"]["acceptance"]["answer"]
            .as_str()
            .unwrap()
            .contains("+42")
    );

    // ATIF: a trajectory per attempt, with the documented keys.
    for (id, full) in [("good", true), ("wrong", false), ("invalid", false)] {
        let t = read_json(&report.join(format!("atif/{id}/1.json")));
        assert_eq!(t["schema_version"], "ATIF-v1.4", "{id}");
        for key in ["session_id", "agent", "steps", "final_metrics"] {
            assert!(t.get(key).is_some(), "{id}: {key}");
        }
        assert_eq!(t["agent"]["name"], "agent-runtime");
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(steps[0]["source"], "user");
        for (i, step) in steps.iter().enumerate() {
            assert_eq!(step["step_id"], i + 1, "{id}");
            assert!(step.get("message").is_some(), "{id} step {i}");
        }
        let agent: Vec<&Value> = steps.iter().filter(|s| s["source"] == "agent").collect();
        assert!(!agent.is_empty(), "{id}");
        for step in &agent {
            for key in ["observation", "metrics"] {
                assert!(step.get(key).is_some(), "{id}: {key} in {step}");
            }
            assert!(step["metrics"]["prompt_tokens"].as_u64().unwrap() > 0);
            // Messages only where a transcript was kept.
            assert_eq!(step["message"] != "", full, "{id}: {step}");
        }
        let with_calls = agent
            .iter()
            .filter(|s| s.get("tool_calls").is_some())
            .count();
        assert_eq!(
            with_calls,
            3 + usize::from(full),
            "{id}: invalid replies call nothing"
        );
        assert_eq!(
            t["final_metrics"]["total_steps"],
            steps.len(),
            "{id}: {t:#}"
        );
        assert_eq!(t.get("notes").is_some(), !full, "{id}");
    }

    // SWE-bench predictions, one line per instance.
    let predictions = std::fs::read_to_string(report.join("predictions/script.jsonl")).unwrap();
    let lines: Vec<Value> = predictions
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let wrong = lines
        .iter()
        .find(|l| l["instance_id"] == "octo__demo-wrong")
        .unwrap();
    assert_eq!(wrong["model_name_or_path"], "script");
    assert!(wrong["model_patch"].as_str().unwrap().contains("+41"));

    // `report` writes the same files from the log alone.
    let again = sb.path().join("again");
    sb.run(&["report", "DATA", "--out", again.to_str().unwrap()])
        .ok()
        .stdout_has("demo@script.eval")
        .stdout_has("(3 trajectories)");
    assert_eq!(
        std::fs::read(&eval).unwrap(),
        std::fs::read(again.join("inspect/demo@script.eval")).unwrap()
    );
    assert_eq!(
        read_json(&report.join("atif/invalid/1.json")),
        read_json(&again.join("atif/invalid/1.json"))
    );

    let test = "a_batch_exports_an_inspect_log_atif_trajectories_and_predictions";
    read_back_with_inspect(test, &eval, 3, &["C", "C", "I"]);
    validate_with_harbor(test, &report.join("atif"));
}

#[test]
fn repeats_are_epochs_and_later_repeats_have_their_own_predictions() {
    let sb = Sandbox::new();
    write_task(sb.path());
    write_job(sb.path(), "good", "metadata", "good");
    write_job(sb.path(), "wrong", "metadata", "wrong");
    let provider = sb.path().join("fixer.toml");
    std::fs::write(
        &provider,
        "name = \"fixer\"\n\n[provider]\nkind = \"script\"\nscript = \"good.jsonl\"\n",
    )
    .unwrap();
    let p = provider.to_str().unwrap();
    sb.run(&["batch", "DATA", "jobs", "--provider", p, "--repeat", "2"])
        .ok();
    let report = sb.data().join("report");
    let members = unzip(&report.join("inspect/demo@fixer.eval"));
    let mut samples: Vec<&str> = members
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| n.starts_with("samples/"))
        .collect();
    samples.sort_unstable();
    assert_eq!(
        samples,
        [
            "samples/good_epoch_1.json",
            "samples/good_epoch_2.json",
            "samples/wrong_epoch_1.json",
            "samples/wrong_epoch_2.json"
        ]
    );
    let header = json_member(&members, "header.json");
    assert_eq!(header["eval"]["config"]["epochs"], 2);
    assert_eq!(header["eval"]["dataset"]["samples"], 2);
    for name in ["fixer.jsonl", "fixer#2.jsonl"] {
        let text = std::fs::read_to_string(report.join("predictions").join(name)).unwrap();
        assert_eq!(text.lines().count(), 2, "{name}: {text}");
        assert!(text.contains("\"model_name_or_path\":\"fixer\""), "{name}");
    }
    assert!(report.join("atif/good@fixer#2/1.json").is_file());
    // The live page has the same pass@k: every run of both jobs succeeded.
    let viewer = crate::view::Viewer::start(&sb, &["DATA"]);
    let jobs = viewer.get("/api/jobs", true, None).json();
    let pass = &jobs["runs"][0]["pass_at_k"];
    assert_eq!(pass["k"], 2, "{jobs:#}");
    assert_eq!(pass["providers"][0]["provider"], "fixer", "{pass:#}");
    assert_eq!(pass["providers"][0]["groups"], 2, "{pass:#}");
    assert_eq!(pass["providers"][0]["pass_at_1"], 1.0, "{pass:#}");
    assert_eq!(pass["providers"][0]["pass_at_k"], 1.0, "{pass:#}");
    drop(viewer);
    read_back_with_inspect(
        "repeats_are_epochs_and_later_repeats_have_their_own_predictions",
        &report.join("inspect/demo@fixer.eval"),
        4,
        &["C"; 4],
    );
}

/// A Python with `module` importable: `var`, else the venv `.ci/run`
/// makes under `target/`; why not, otherwise.
pub fn python_with(var: &str, venv: &str, module: &str) -> Result<PathBuf, String> {
    let python = match std::env::var_os(var) {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(venv)
            .join("bin/python"),
    };
    if !python.exists() {
        return Err(format!(
            "{} does not exist (set {var} to a Python with {module})",
            python.display()
        ));
    }
    match Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
    {
        Ok(out) if out.status.success() => Ok(python),
        Ok(out) => Err(format!(
            "{} cannot import {module}: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {}: {e}", python.display())),
    }
}

/// `inspect_ai.log.read_eval_log` on `eval`: its samples and their scores.
/// That half of `test` skips without inspect-ai.
fn read_back_with_inspect(test: &str, eval: &Path, samples: usize, scores: &[&str]) {
    let Some(python) = require_tool(
        &format!("{test} (inspect-ai read-back)"),
        python_with("AGENT_RUNTIME_INSPECT_PYTHON", "inspect-venv", "inspect_ai"),
    ) else {
        return;
    };
    let script = "import sys\n\
        from inspect_ai.log import read_eval_log\n\
        log = read_eval_log(sys.argv[1])\n\
        print(log.status, len(log.samples))\n\
        for s in sorted(log.samples, key=lambda s: (str(s.id), s.epoch)):\n\
        \x20   kinds = [e.event for e in s.events]\n\
        \x20   print(s.id, s.epoch, s.scores['acceptance'].value, len(s.messages), kinds.count('model'), kinds.count('tool'))\n";
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(eval)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "read_eval_log failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(format!("success {samples}").as_str()));
    let read: Vec<String> = lines
        .map(|l| l.split(' ').nth(2).unwrap_or_default().to_string())
        .collect();
    assert_eq!(read, scores, "{stdout}");
    // Every sample's Transcript: a model event per step, and a tool event
    // for each decision carried out (here every sample carries one out).
    for line in stdout.lines().skip(1) {
        let counts: Vec<usize> = line
            .split(' ')
            .skip(4)
            .map(|n| n.parse().unwrap_or(0))
            .collect();
        assert!(
            counts.len() == 2 && counts[0] > 0 && counts[1] > 0,
            "model and tool events: {line}"
        );
    }
}

/// Harbor's own validator on every trajectory under `dir`. That half of
/// `test` skips without harbor.
fn validate_with_harbor(test: &str, dir: &Path) {
    let Some(python) = require_tool(
        &format!("{test} (harbor's validation of the trajectories)"),
        python_with(
            "AGENT_RUNTIME_HARBOR_PYTHON",
            "harbor-venv",
            "harbor.utils.trajectory_validator",
        ),
    ) else {
        return;
    };
    let script = "import sys, pathlib\n\
        from harbor.utils.trajectory_validator import TrajectoryValidator\n\
        bad = 0\n\
        for path in sorted(pathlib.Path(sys.argv[1]).glob('*/*.json')):\n\
        \x20   v = TrajectoryValidator()\n\
        \x20   if not v.validate(str(path)):\n\
        \x20       bad += 1\n\
        \x20       print(path, v.errors)\n\
        sys.exit(bad)\n";
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "harbor rejected trajectories: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
