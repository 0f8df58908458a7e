//! What a command cost the machine, through the real binary: a tool
//! command that allocates 200 MiB (touching every page) and burns a second
//! of CPU shows those figures, within a quarter, in its `command` event,
//! in `results.json` and on its page in the viewer. Needs the PID
//! namespace and a cgroup; skips, saying why, where they are missing.

use std::time::Duration;

use agent_runtime_test_support::{Need, skip};

use crate::harness::{BIN, Sandbox, log_lines};
use crate::view::Viewer;

const MIB: u64 = 1 << 20;

/// Allocates 200 MiB, every byte written, then burns 1 s of CPU time.
const HOG: &str = "import time\n\
b = b'\\x01' * (200 << 20)\n\
t = time.process_time()\n\
while time.process_time() - t < 1.0:\n    pass\n\
print(len(b))\n";

/// Whether `exec --sandbox required` runs here with a PID namespace and a
/// cgroup, and python3 is on the executor's search path; prints why not.
fn layers_and_python(test: &str) -> bool {
    let ws = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .args([
            "exec",
            "--sandbox",
            "required",
            "--timeout",
            "60s",
            "--workspace",
        ])
        .arg(ws.path())
        .args(["--allow", "python3 **", "--", "python3", "-c", "pass"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("is not an executable file in the search path") {
        skip(
            Need::Tool,
            test,
            &format!("python3 is not on the executor's search path: {stderr}"),
        );
        return false;
    }
    let ok = out.status.success() && text.contains("pidns") && text.contains("cgroup-v");
    if !ok {
        skip(
            Need::Layer,
            test,
            &format!("the PID namespace and a cgroup are not both here: {text}{stderr}"),
        );
    }
    ok
}

/// Whether `value` is within a quarter of `expected`.
fn within_a_quarter(value: u64, expected: u64) -> bool {
    let (low, high) = (expected * 3 / 4, expected * 5 / 4);
    (low..=high).contains(&value)
}

/// Asserts a `resources` object shows the hog's figures.
#[track_caller]
fn assert_hog(resources: &serde_json::Value, what: &str) {
    let cpu = resources["cpu_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: {resources}"));
    // The loop's second of CPU, plus the interpreter's start and faulting
    // in 200 MiB: system time that took up to 0.65 s on a loaded machine
    // (seen: 1,649 ms). Twice the loop still tells the command's own time
    // from any larger tally.
    assert!(
        (750..=2_000).contains(&cpu),
        "{what}: cpu {cpu} ms: {resources}"
    );
    let memory = resources["peak_memory_bytes"].as_u64().unwrap();
    assert!(
        within_a_quarter(memory, 200 * MIB),
        "{what}: memory {} MiB: {resources}",
        memory / MIB
    );
    // The single-threaded interpreter alone, in the attempt's PID
    // namespace (where Landlock scopes signals); elsewhere the init of a
    // namespace of its own, cloned by the attempt's zygote, besides.
    let scoped = agent_runtime::sandbox::probe()
        .landlock_abi
        .as_ref()
        .is_ok_and(|abi| *abi >= 6);
    let tasks = if scoped { 1 } else { 2 };
    assert_eq!(resources["pids_peak"], tasks, "{what}: {resources}");
}

#[test]
fn a_commands_cpu_and_memory_are_in_its_event_its_report_and_its_page() {
    let test = "a_commands_cpu_and_memory_are_in_its_event_its_report_and_its_page";
    if !layers_and_python(test) {
        return;
    }
    let sb = Sandbox::new();
    let root = sb.path().join("hog");
    std::fs::create_dir_all(root.join("source")).unwrap();
    std::fs::write(root.join("source/README.txt"), "measure me\n").unwrap();
    let replies = [
        serde_json::json!({"kind": "write_file", "path": "out.txt", "content": "done\n"}),
        serde_json::json!({"kind": "run_tool", "program": "python3", "args": ["-c", HOG]}),
        serde_json::json!({"kind": "finish", "summary": "measured"}),
    ];
    let text: String = replies.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(root.join("replies.jsonl"), text).unwrap();
    let manifest = root.join("hog.toml");
    std::fs::write(
        &manifest,
        "id = \"hog\"\nprompt = \"Measure.\"\nsource = \"source\"\neditable = [\"*.txt\"]\n\
         allow = [\"true\", \"python3 **\"]\nverify = [\"true\"]\n\n\
         [limits]\nattempts = 1\nmax_steps = 6\ncommand_timeout = \"120s\"\n\n\
         [sandbox]\nmode = \"required\"\n\n\
         [provider]\nkind = \"script\"\nscript = \"replies.jsonl\"\n",
    )
    .unwrap();
    let run = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");

    // The event.
    let lines = log_lines(&sb);
    let event = lines
        .iter()
        .find(|l| l["type"] == "command" && l["program"] == "python3")
        .unwrap_or_else(|| panic!("no python3 command in the log: {lines:#?}"));
    assert_eq!(event["role"], "tool", "{event}");
    assert_hog(&event["resources"], "the command event");
    // Every sandboxed command says what it cost.
    let verify = lines
        .iter()
        .find(|l| l["type"] == "command" && l["role"] == "verify")
        .unwrap();
    assert!(verify["resources"]["cpu_ms"].is_u64(), "{verify}");

    // The report: the command's timeline entry and the job's figures.
    let out = sb.path().join("report");
    sb.run(&["report", "DATA", "--out", out.to_str().unwrap()])
        .ok();
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let job = &results["jobs"][0];
    let actions = crate::results::timeline_actions(job);
    let entry = actions
        .iter()
        .find(|e| e["kind"] == "command" && e["text"].as_str().unwrap().contains("python3"))
        .unwrap_or_else(|| panic!("no python3 command in the timeline: {job}"));
    assert_hog(&entry["resources"], "the report's timeline");
    assert!(
        entry["text"].as_str().unwrap().contains("memory peak 2"),
        "{entry}"
    );
    let cpu = job["resources"]["cpu_ms"].as_u64().unwrap();
    assert!(
        cpu >= entry["resources"]["cpu_ms"].as_u64().unwrap(),
        "{job}"
    );
    assert_eq!(
        job["resources"]["peak_memory_bytes"],
        entry["resources"]["peak_memory_bytes"]
    );
    let tsv = std::fs::read_to_string(out.join("results.tsv")).unwrap();
    let mut rows = tsv.lines().map(|l| l.split('\t').collect::<Vec<_>>());
    let header = rows.next().unwrap();
    let row = rows.next().unwrap();
    let column = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(column("cpu_ms"), cpu.to_string());

    // Its page in the viewer.
    let viewer = Viewer::start(&sb, &["DATA"]);
    viewer.wait_for(Duration::from_secs(30), "the job", |doc| {
        doc.to_string().contains("\"hog\"")
    });
    let page = viewer.get("/api/job?run=0&id=hog", true, None).json();
    let result = &page["result"];
    let actions = crate::results::timeline_actions(result);
    let shown = actions
        .iter()
        .find(|e| e["kind"] == "command" && e["text"].as_str().unwrap().contains("python3"))
        .unwrap_or_else(|| panic!("no python3 command on the page: {page}"));
    assert_hog(&shown["resources"], "the viewer's page");
    assert_eq!(result["resources"], job["resources"], "{page}");
}
