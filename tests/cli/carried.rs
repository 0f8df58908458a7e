//! Any file a model can write is carried exactly: empty files, binary and
//! non-UTF-8 content, CRLF, no final newline, deletions and the executable
//! bit reach acceptance byte for byte (through the runner's copy in
//! `runs/<job>/<n>/files/`), and `git apply patch.diff` on the pristine
//! source reproduces them; a 400,000-line rewrite is judged within the wall
//! time; a symlink is `patch_rejected`; a resumed acceptance uses the copy
//! the patch event names, and refuses one that is not it.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{BIN, Sandbox, log_lines};

/// A job `id` under `sb`: `source/` and `hidden/` as given (path, bytes),
/// the replies as its script, and the rest of the manifest after them.
struct Job<'a> {
    id: &'a str,
    source: &'a [(&'a str, &'a [u8])],
    hidden: &'a [(&'a str, &'a [u8])],
    replies: &'a [serde_json::Value],
    allow: &'a [&'a str],
    /// `must_fail` or `skip`.
    baseline: &'a str,
    limits: &'a str,
}

impl Job<'_> {
    fn write(&self, sb: &Sandbox) -> PathBuf {
        let root = sb.path().join(self.id);
        for (dir, files) in [("source", self.source), ("hidden", self.hidden)] {
            for (path, content) in files {
                let at = root.join(dir).join(path);
                fs::create_dir_all(at.parent().unwrap()).unwrap();
                fs::write(&at, content).unwrap();
            }
        }
        let script: String = self.replies.iter().map(|r| r.to_string() + "\n").collect();
        fs::write(root.join("script.jsonl"), script).unwrap();
        let allow: Vec<String> = self.allow.iter().map(|a| format!("{a:?}")).collect();
        let manifest = root.join(format!("{}.toml", self.id));
        fs::write(
            &manifest,
            format!(
                "id = {id:?}\nprompt = \"Fix the job.\"\nsource = \"source\"\neditable = [\"src/**\"]\n\
                 allow = [{allow}]\nverify = [\"true\"]\n\n\
                 [acceptance]\ndir = \"hidden\"\ncommand = [\"sh\", \"check.sh\"]\nbaseline = {baseline:?}\n\n\
                 [limits]\nattempts = 1\nmax_restarts = 1\n{limits}\n\n\
                 [provider]\nkind = \"script\"\nscript = \"script.jsonl\"\n",
                id = self.id,
                allow = allow.join(", "),
                baseline = self.baseline,
                limits = self.limits,
            ),
        )
        .unwrap();
        manifest
    }
}

/// Every file under `dir`: its bytes and whether it is executable.
fn files(dir: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                let exec = meta.permissions().mode() & 0o100 != 0;
                out.insert(rel, (fs::read(&path).unwrap(), exec));
            }
        }
    }
    out
}

fn git_works() -> Result<(), String> {
    match Command::new("git").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!("git --version exited {}", out.status)),
        Err(e) => Err(format!("git does not run: {e}")),
    }
}

/// `git apply` of `patch` in `dir`.
fn git_apply(dir: &Path, patch: &Path) {
    let out = Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(patch)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git apply failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// A binary fixture: every byte value, NULs included.
fn blob() -> Vec<u8> {
    (0..=255u8).cycle().take(3000).collect()
}

const CHECK_ALL: &str = r#"set -e
[ "$(sh src/calc.sh)" = 4 ]
[ -f src/pkg/__init__.py ] && [ ! -s src/pkg/__init__.py ]
cmp src/logo.bin expected/logo.bin
cmp src/latin1.txt expected/latin1.txt
printf 'one\r\ntwo' | cmp - src/crlf.txt
[ ! -e src/obsolete.txt ]
[ -x src/run.sh ]
"#;

#[test]
fn every_kind_of_file_reaches_acceptance_and_git_apply_reproduces_it() {
    if agent_runtime_test_support::require_tool(
        "every_kind_of_file_reaches_acceptance_and_git_apply_reproduces_it",
        git_works(),
    )
    .is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let blob = blob();
    let manifest = Job {
        id: "carry",
        source: &[
            ("src/calc.sh", b"echo $((2 + 1))\n"),
            ("src/obsolete.txt", b"to be removed\n"),
            ("src/run.sh", b"#!/bin/sh\necho run\n"),
            ("fixtures/logo.bin", &blob),
            ("fixtures/latin1.txt", b"caf\xe9 cr\xe8me\n"),
        ],
        hidden: &[
            ("check.sh", CHECK_ALL.as_bytes()),
            ("expected/logo.bin", &blob),
            ("expected/latin1.txt", b"caf\xe9 cr\xe8me\n"),
        ],
        replies: &[
            serde_json::json!({"kind": "write_file", "path": "src/calc.sh", "content": "echo $((2 + 2))\n"}),
            serde_json::json!({"kind": "write_file", "path": "src/pkg/__init__.py", "content": ""}),
            serde_json::json!({"kind": "write_file", "path": "src/crlf.txt", "content": "one\r\ntwo"}),
            serde_json::json!({"kind": "run_tool", "program": "cp", "args": ["fixtures/logo.bin", "src/logo.bin"]}),
            serde_json::json!({"kind": "run_tool", "program": "cp", "args": ["fixtures/latin1.txt", "src/latin1.txt"]}),
            serde_json::json!({"kind": "run_tool", "program": "rm", "args": ["src/obsolete.txt"]}),
            serde_json::json!({"kind": "run_tool", "program": "chmod", "args": ["+x", "src/run.sh"]}),
            serde_json::json!({"kind": "finish", "summary": "fixed"}),
        ],
        allow: &["cp fixtures/* src/*", "rm src/*", "chmod +x src/*", "true"],
        baseline: "must_fail",
        limits: "",
    }
    .write(&sb);
    sb.run(&["enqueue", "DATA", "--job", manifest.to_str().unwrap()])
        .ok();
    sb.run(&["run", "DATA", "carry", "--keep", "all"])
        .ok()
        .stdout_has("outcome=succeeded");

    let lines = log_lines(&sb);
    let baseline = lines.iter().find(|l| l["type"] == "baseline").unwrap();
    assert_eq!(
        baseline["result"], "failed",
        "the pristine source must fail"
    );
    let patch = lines.iter().find(|l| l["type"] == "patch").unwrap();
    assert_eq!(patch["files"], 7, "{patch}");
    assert_eq!(patch["files_hash"].as_str().unwrap().len(), 64, "{patch}");
    assert!(patch.get("partial").is_none(), "{patch}");

    let workspace = sb.data().join("work/carry/1/src");
    let runs = sb.data().join("runs/carry/1");
    let expected = files(&workspace);
    assert_eq!(expected["pkg/__init__.py"].0, b"");
    assert!(expected["run.sh"].1, "the script is executable");

    // git apply on a pristine copy of the source gives the same files.
    let pristine = sb.path().join("pristine");
    copy_dir(&sb.path().join("carry/source"), &pristine);
    git_apply(&pristine, &runs.join("patch.diff"));
    assert_eq!(files(&pristine.join("src")), expected);
    // The runner's copy holds every created or changed file as it was.
    for (path, (bytes, exec)) in files(&runs.join("files/src")) {
        assert_eq!(expected[&path], (bytes, exec), "{path}");
    }
    let diff = fs::read_to_string(runs.join("patch.diff")).unwrap();
    for header in [
        "new file mode 100644\nindex 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n",
        "deleted file mode 100644\n",
        "old mode 100644\nnew mode 100755\n",
        "GIT binary patch\nliteral 3000\n",
    ] {
        assert!(
            diff.contains(header),
            "patch.diff lacks {header:?}:\n{diff}"
        );
    }
}

#[test]
fn a_400000_line_rewrite_is_judged_within_the_wall_time_and_carried_byte_for_byte() {
    const GENERATE: &str = "awk 'BEGIN { for (i = 0; i < 400000; i++) printf \"row %07d of the generated table\\n\", i }'";
    let sb = Sandbox::new();
    let check = format!("set -e\n{GENERATE} > expected.txt\ncmp src/table.txt expected.txt\n");
    let generator = format!("{GENERATE} > src/table.txt\n");
    let manifest = Job {
        id: "rewrite",
        source: &[("src/table.txt", b"row 0 of a short table\nrow 1\n")],
        hidden: &[("check.sh", check.as_bytes())],
        replies: &[
            serde_json::json!({"kind": "write_file", "path": "src/gen.sh", "content": generator}),
            serde_json::json!({"kind": "run_tool", "program": "sh", "args": ["src/gen.sh"]}),
            serde_json::json!({"kind": "finish", "summary": "regenerated"}),
        ],
        allow: &["sh src/gen.sh", "true"],
        baseline: "must_fail",
        limits: "wall_time = \"60s\"",
    }
    .write(&sb);
    sb.run(&["enqueue", "DATA", "--job", manifest.to_str().unwrap()])
        .ok();
    let started = Instant::now();
    sb.run(&["run", "DATA", "rewrite"])
        .ok()
        .stdout_has("outcome=succeeded");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(70), "took {took:?}");
    eprintln!("a 400,000-line rewrite judged in {took:?}");

    let table = fs::read(sb.data().join("runs/rewrite/1/files/src/table.txt")).unwrap();
    assert_eq!(table.iter().filter(|&&b| b == b'\n').count(), 400_000);
    assert!(table.len() < 16 << 20);
    let patch = log_lines(&sb)
        .into_iter()
        .find(|l| l["type"] == "patch")
        .unwrap();
    assert_eq!(patch["files"], 2, "{patch}");
    assert!(patch.get("partial").is_none(), "{patch}");
}

#[test]
fn a_symlink_leaving_the_tree_is_patch_rejected_naming_it() {
    let sb = Sandbox::new();
    let manifest = Job {
        id: "link",
        source: &[("src/lib.txt", b"a\n"), ("secret.txt", b"not editable\n")],
        hidden: &[("check.sh", b"exit 0\n")],
        replies: &[
            serde_json::json!({"kind": "write_file", "path": "src/lib.txt", "content": "b\n"}),
            serde_json::json!({"kind": "run_tool", "program": "ln", "args": ["-s", "../../secret.txt", "src/secret.txt"]}),
            serde_json::json!({"kind": "finish", "summary": "linked"}),
        ],
        allow: &["ln -s * *", "true"],
        baseline: "skip",
        limits: "",
    }
    .write(&sb);
    sb.run(&["enqueue", "DATA", "--job", manifest.to_str().unwrap()])
        .ok();
    sb.run(&["run", "DATA", "link"])
        .code(1)
        .stdout_has("failure_kind=patch_rejected");
    let lines = log_lines(&sb);
    let rejected: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "patch_rejected")
        .collect();
    assert_eq!(rejected.len(), 1, "{lines:#?}");
    let reason = rejected[0]["reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("src/secret.txt: is a symlink to ../../secret.txt, which leaves the tree"),
        "{reason}"
    );
    // Nothing was carried, and nothing was judged.
    assert!(
        !lines
            .iter()
            .any(|l| l["type"] == "patch" || l["type"] == "acceptance")
    );
    let runs = sb.data().join("runs/link/1");
    assert!(!runs.join("files").exists() && !runs.join("files.json").exists());
}

/// A job whose acceptance takes a few seconds, killed once its patch is
/// recorded: the runs dir to tamper with before it resumes.
fn killed_during_acceptance(sb: &Sandbox) -> PathBuf {
    let manifest = Job {
        id: "resumed",
        source: &[("src/value.txt", b"1\n")],
        hidden: &[("check.sh", b"sleep 2\n[ \"$(cat src/value.txt)\" = 2 ]\n")],
        replies: &[
            serde_json::json!({"kind": "write_file", "path": "src/value.txt", "content": "2\n"}),
            serde_json::json!({"kind": "finish", "summary": "set"}),
        ],
        allow: &["true"],
        baseline: "skip",
        limits: "",
    }
    .write(sb);
    sb.run(&["enqueue", "DATA", "--job", manifest.to_str().unwrap()])
        .ok();
    let mut runner = Command::new(BIN)
        .args([
            "run",
            sb.data().to_str().unwrap(),
            "resumed",
            "--keep",
            "all",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !log_lines(sb).iter().any(|l| l["type"] == "patch") {
        assert!(Instant::now() < deadline, "the patch was never recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    runner.kill().unwrap();
    runner.wait().unwrap();
    sb.data().join("runs/resumed/1")
}

#[test]
fn a_resumed_acceptance_uses_the_copy_the_patch_event_names() {
    let sb = Sandbox::new();
    let runs = killed_during_acceptance(&sb);
    // The workspace is not what acceptance reads.
    fs::write(sb.data().join("work/resumed/1/src/value.txt"), "3\n").unwrap();
    sb.run(&["run", "DATA", "resumed"])
        .ok()
        .stdout_has("attempt=1 outcome=succeeded");
    assert_eq!(fs::read(runs.join("files/src/value.txt")).unwrap(), b"2\n");
}

#[test]
fn a_copy_that_is_not_the_recorded_one_is_never_judged() {
    let sb = Sandbox::new();
    let runs = killed_during_acceptance(&sb);
    fs::write(runs.join("files/src/value.txt"), "9\n").unwrap();
    let run = sb.run(&["run", "DATA", "resumed"]);
    assert_ne!(run.code, 0, "{run:#?}");
    let lines = log_lines(&sb);
    assert!(
        !lines.iter().any(|l| l["type"] == "acceptance"),
        "a tampered copy was judged"
    );
    let fault = lines
        .iter()
        .filter_map(|l| l["cause"].as_str())
        .find(|c| c.contains("copy of the patch"))
        .unwrap_or_else(|| panic!("no fault names the copy: {lines:#?}"));
    assert!(fault.contains("src/value.txt"), "{fault}");
}
