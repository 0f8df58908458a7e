//! Symlinks in patches, through the binary: a model that runs an allowed
//! `ln -s` making a link inside the tree gets it carried (git's mode
//! 120000 in `patch.diff`, a link in `files.json`, a link in the check
//! copy the hidden tests run in, the patch in `report.html`); one making a
//! link to `/etc` fails `patch_rejected`, naming the link, and nothing of
//! it is carried.

use std::path::{Path, PathBuf};

use crate::harness::{Sandbox, html_job_text, log_lines};

/// A job on `src/lib.rs` whose model writes the fix, runs `ln -s TARGET
/// src/alias.rs`, and finishes; its hidden test passes when the check
/// copy has `src/alias.rs` as a link to `lib.rs` that reads the fix.
fn link_job(sb: &Sandbox, id: &str, target: &str) -> PathBuf {
    let dir = sb.path().join(id);
    let source = dir.join("source");
    std::fs::create_dir_all(source.join("src")).unwrap();
    std::fs::write(source.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let hidden = dir.join("hidden");
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(
        hidden.join("check.sh"),
        r#"echo '<testsuite name="t">' > results.xml
if [ -L src/alias.rs ] && [ "$(readlink src/alias.rs)" = lib.rs ] && grep -q 'u8' src/alias.rs; then
  echo '<testcase classname="t" name="alias"/>' >> results.xml
else
  echo '<testcase classname="t" name="alias"><failure message="no link"/></testcase>' >> results.xml
fi
echo '</testsuite>' >> results.xml
"#,
    )
    .unwrap();
    let replies = [
        serde_json::json!({"kind": "write_file", "path": "src/lib.rs", "content": "pub fn f() -> u8 { 1 }\n"}),
        serde_json::json!({"kind": "run_tool", "program": "ln", "args": ["-s", target, "src/alias.rs"]}),
        serde_json::json!({"kind": "finish", "summary": "linked"}),
    ];
    let script = dir.join("script.jsonl");
    let lines: Vec<String> = replies.iter().map(|r| r.to_string() + "\n").collect();
    std::fs::write(&script, lines.concat()).unwrap();
    let manifest = dir.join("job.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"id = "{id}"
prompt = "Make f return 1 and give src/alias.rs as a name for it."
source = "source"
editable = ["src/**"]
allow = ["ln -s * src/alias.rs", "true"]
verify = ["true"]

[limits]
attempts = 1

[acceptance]
dir = "hidden"
command = ["sh", "check.sh"]
results = "junit:results.xml"

[provider]
kind = "script"
script = "script.jsonl"
"#
        ),
    )
    .unwrap();
    manifest
}

fn attempt_dir(sb: &Sandbox, id: &str) -> PathBuf {
    sb.data().join("runs").join(id).join("1")
}

#[test]
fn a_link_inside_the_tree_is_carried_and_one_to_etc_is_rejected_naming_it() {
    let sb = Sandbox::new();
    let inside = link_job(&sb, "inside", "lib.rs");
    let outside = link_job(&sb, "outside", "/etc/passwd");
    let run = sb.run(&[
        "batch",
        "DATA",
        inside.to_str().unwrap(),
        outside.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{run:#?}");
    let log = log_lines(&sb);
    let finished = |id: &str| {
        log.iter()
            .rfind(|l| l["type"] == "attempt_finished" && l["job"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} did not finish: {log:#?}"))
    };

    // In the tree: carried, laid as a link, the hidden test passes.
    assert_eq!(finished("inside")["outcome"], "succeeded", "{log:#?}");
    let runs = attempt_dir(&sb, "inside");
    let diff = std::fs::read_to_string(runs.join("patch.diff")).unwrap();
    assert!(
        diff.contains("diff --git a/src/alias.rs b/src/alias.rs\nnew file mode 120000"),
        "{diff}"
    );
    assert!(
        diff.contains("+lib.rs\n\\ No newline at end of file"),
        "{diff}"
    );
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs.join("files.json")).unwrap()).unwrap();
    let link = index["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/alias.rs")
        .unwrap_or_else(|| panic!("{index:#}"));
    assert_eq!(link["change"], "link");
    assert_eq!(link["target"], "lib.rs");
    assert!(!runs.join("files/src/alias.rs").exists());
    let report = sb.data().join("report/report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    let page = html_job_text(&html, "inside");
    assert!(page.contains("new file mode 120000"), "{page}");

    // To /etc: rejected, the link and its target named, nothing carried.
    let out = finished("outside");
    assert_eq!(out["failure_kind"], "patch_rejected", "{out:#}");
    let rejected = log
        .iter()
        .find(|l| l["type"] == "patch_rejected" && l["job"] == "outside")
        .unwrap_or_else(|| panic!("{log:#?}"));
    let reason = rejected["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("src/alias.rs: is a symlink to the absolute path /etc/passwd"),
        "{reason}"
    );
    let runs = attempt_dir(&sb, "outside");
    assert!(!Path::new(&runs.join("files.json")).exists());
    assert!(!runs.join("patch.diff").exists());
}

/// An oracle given as a patch may create a link too: `check` applies it,
/// the patch carries the link, and the hidden test that needs it passes.
#[test]
fn an_oracle_patch_that_makes_a_link_checks_valid() {
    let sb = Sandbox::new();
    let manifest = link_job(&sb, "oracle_link", "lib.rs");
    let dir = manifest.parent().unwrap().to_path_buf();
    std::fs::write(
        dir.join("fix.diff"),
        "diff --git a/src/alias.rs b/src/alias.rs\n\
         new file mode 120000\n\
         --- /dev/null\n\
         +++ b/src/alias.rs\n\
         @@ -0,0 +1 @@\n\
         +lib.rs\n\
         \\ No newline at end of file\n\
         diff --git a/src/lib.rs b/src/lib.rs\n\
         --- a/src/lib.rs\n\
         +++ b/src/lib.rs\n\
         @@ -1 +1 @@\n\
         -pub fn f() {}\n\
         +pub fn f() -> u8 { 1 }\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!("{text}\n[oracle]\npatch = \"fix.diff\"\n"),
    )
    .unwrap();
    let run = sb.run(&[
        "check",
        "--json",
        "--runs",
        "1",
        "--data",
        "CHECK",
        manifest.to_str().unwrap(),
    ]);
    let doc: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:#?}"));
    assert_eq!(run.code, 0, "{doc:#}");
    assert_eq!(doc["jobs"][0]["verdict"], "valid", "{doc:#}");
}
