use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;
use crate::agent::editable_set;
use crate::runner::Carried;

/// A pristine source, a workspace copy of it and a runs dir, all with
/// `src/lib.rs`.
struct Dirs {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    pristine: PathBuf,
    ws: PathBuf,
    runs: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let (pristine, ws, runs) = (root.join("p"), root.join("w"), root.join("runs"));
    for dir in [&pristine, &ws] {
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::write(dir.join("src/lib.rs"), "a\n").unwrap();
    }
    fs::create_dir_all(&runs).unwrap();
    Dirs {
        _tmp: tmp,
        root,
        pristine,
        ws,
        runs,
    }
}

impl Dirs {
    fn take(&self, editable: &[&str]) -> Result<SavedPatch, PatchError> {
        self.take_with(editable, None)
    }

    fn take_with(
        &self,
        editable: &[&str],
        acceptance: Option<&Path>,
    ) -> Result<SavedPatch, PatchError> {
        let named: Vec<String> = editable.iter().map(|g| g.to_string()).collect();
        let editable = editable_set(&named).unwrap();
        take_patch(&PatchInputs {
            source: &self.pristine,
            workspace: &self.ws,
            editable: &editable,
            named: &named,
            acceptance,
            runs: &self.runs,
            deadline: Instant::now() + Duration::from_secs(5),
        })
    }

    /// A clean copy of the source with the saved copy laid on it.
    fn laid(&self, saved: &SavedPatch) -> PathBuf {
        let clean = self.root.join("clean");
        let _ = fs::remove_dir_all(&clean);
        crate::agent::copy_tree(&self.pristine, &clean).unwrap();
        let carried = Carried::load(&self.runs, Some(&saved.files_hash)).unwrap();
        carried
            .apply(&clean, &editable_set(&["**".to_string()]).unwrap())
            .unwrap();
        clean
    }
}

/// Every file under `root`: content and whether it is executable.
fn files(root: &Path) -> Vec<(String, Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let mode = fs::metadata(&path).unwrap().permissions().mode();
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, fs::read(&path).unwrap(), mode & 0o100 != 0));
            }
        }
    }
    out.sort();
    out
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[track_caller]
fn rejected(result: Result<SavedPatch, PatchError>) -> Rejection {
    match result {
        Err(PatchError::Rejected(r)) => r,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn every_kind_of_change_is_carried_exactly_and_nothing_else() {
    let d = dirs();
    for dir in [&d.pristine, &d.ws] {
        fs::write(dir.join("src/gone.txt"), "bye\n").unwrap();
        fs::write(dir.join("src/run.sh"), "#!/bin/sh\necho\n").unwrap();
        fs::write(dir.join("src/crlf.txt"), "a\r\nb\r\n").unwrap();
        fs::create_dir_all(dir.join("tests")).unwrap();
        fs::write(dir.join("tests/t.rs"), "assert!(true)\n").unwrap();
    }
    fs::write(d.ws.join("src/lib.rs"), "b").unwrap();
    fs::create_dir_all(d.ws.join("src/pkg")).unwrap();
    fs::write(d.ws.join("src/pkg/__init__.py"), "").unwrap();
    fs::write(d.ws.join("src/blob.bin"), b"\x00\xff\xfe\x00").unwrap();
    fs::write(d.ws.join("src/latin1.txt"), b"caf\xe9\n").unwrap();
    fs::write(d.ws.join("src/crlf.txt"), "a\r\nc\r\n").unwrap();
    fs::remove_file(d.ws.join("src/gone.txt")).unwrap();
    chmod(&d.ws.join("src/run.sh"), 0o755);
    fs::write(d.ws.join("tests/t.rs"), "tampered\n").unwrap();

    let saved = d.take(&["src/**"]).unwrap();
    assert_eq!(
        saved.files,
        [
            "src/blob.bin",
            "src/crlf.txt",
            "src/gone.txt",
            "src/latin1.txt",
            "src/lib.rs",
            "src/pkg/__init__.py",
            "src/run.sh",
        ]
    );
    assert!(!saved.partial);
    let diff = fs::read_to_string(d.runs.join("patch.diff")).unwrap();
    assert_eq!(saved.diff_bytes, diff.len() as u64);
    assert!(diff.contains(
        "diff --git a/src/pkg/__init__.py b/src/pkg/__init__.py\nnew file mode 100644\n"
    ));
    assert!(
        diff.contains("diff --git a/src/run.sh b/src/run.sh\nold mode 100644\nnew mode 100755\n")
    );
    assert!(diff.contains("deleted file mode 100644"));
    assert!(diff.contains("GIT binary patch"));
    assert!(!diff.contains("tampered"));

    // The copy laid on a clean copy gives the workspace's editable files.
    let clean = d.laid(&saved);
    let mut expected = files(&d.ws);
    for entry in &mut expected {
        if entry.0 == "tests/t.rs" {
            entry.1 = b"assert!(true)\n".to_vec();
        }
    }
    assert_eq!(files(&clean), expected);

    // So does patch.diff.
    let again = d.root.join("again");
    crate::agent::copy_tree(&d.pristine, &again).unwrap();
    crate::gitdiff::apply_to_tree(&again, diff.as_bytes(), &|_| true, FILE_CAP).unwrap();
    assert_eq!(files(&again), expected);
}

#[test]
fn build_outputs_are_not_carried() {
    let d = dirs();
    for dir in ["src/__pycache__", "target/debug", "src/.git"] {
        fs::create_dir_all(d.ws.join(dir)).unwrap();
        fs::write(d.ws.join(dir).join("x.pyc"), b"\x00bytecode").unwrap();
    }
    fs::write(d.ws.join("src/lib.rs"), "b\n").unwrap();
    assert_eq!(d.take(&["**"]).unwrap().files, ["src/lib.rs"]);
}

#[test]
fn no_changes_no_patch() {
    let d = dirs();
    let saved = d.take(&["**"]).unwrap();
    assert!(saved.files.is_empty() && saved.diff_bytes == 0, "{saved:?}");
    let index = fs::read_to_string(d.runs.join("files.json")).unwrap();
    assert!(index.contains("\"files\": []"), "{index}");
}

#[test]
fn the_copy_is_checked_against_its_recorded_hash() {
    let d = dirs();
    fs::write(d.ws.join("src/lib.rs"), "b\n").unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    let wrong = "0".repeat(64);
    assert!(matches!(
        Carried::load(&d.runs, Some(&wrong)),
        Err(PatchError::Corrupt { .. })
    ));
    // A carried file changed after the fact is refused when laid.
    fs::write(d.runs.join("files/src/lib.rs"), "c\n").unwrap();
    let carried = Carried::load(&d.runs, Some(&saved.files_hash)).unwrap();
    let clean = d.root.join("clean");
    crate::agent::copy_tree(&d.pristine, &clean).unwrap();
    let all = editable_set(&["**".to_string()]).unwrap();
    let err = carried.apply(&clean, &all).unwrap_err();
    assert!(matches!(err, PatchError::Corrupt { .. }), "{err}");
    assert!(
        err.rejection().is_none(),
        "the runtime's fault, not the model's"
    );
}

#[test]
fn a_log_without_a_copy_applies_patch_diff_and_rejects_what_does_not_apply() {
    let d = dirs();
    fs::write(
        d.runs.join("patch.diff"),
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n",
    )
    .unwrap();
    let clean = d.root.join("clean");
    crate::agent::copy_tree(&d.pristine, &clean).unwrap();
    let all = editable_set(&["**".to_string()]).unwrap();
    let carried = Carried::load(&d.runs, None).unwrap();
    assert_eq!(carried.apply(&clean, &all).unwrap().written, ["src/lib.rs"]);
    assert_eq!(fs::read_to_string(clean.join("src/lib.rs")).unwrap(), "b\n");

    fs::write(d.runs.join("patch.diff"), "--- a/x\n+++ b/x\n--- a/x\n").unwrap();
    let carried = Carried::load(&d.runs, None).unwrap();
    let err = carried.apply(&clean, &all).unwrap_err();
    assert!(err.rejection().is_some(), "{err}");
}

#[test]
fn a_fifo_at_an_editable_path_rejects_the_patch_without_blocking() {
    let d = dirs();
    nix::unistd::mkfifo(&d.ws.join("src/pipe.rs"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(d.take(&["src/**"]));
    });
    let result = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the patch phase blocked on a FIFO");
    let r = rejected(result);
    assert_eq!(r.path, "src/pipe.rs");
    assert_eq!(r.to_string(), "src/pipe.rs: is a FIFO, not a regular file");
}

#[test]
fn a_huge_sparse_file_rejects_the_patch_by_its_size() {
    let d = dirs();
    let huge = 2 * 1024 * 1024 * 1024u64;
    fs::File::create(d.ws.join("src/lib.rs"))
        .unwrap()
        .set_len(huge)
        .unwrap();
    let started = Instant::now();
    let r = rejected(d.take(&["src/**"]));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        r.to_string(),
        format!("src/lib.rs: is {huge} bytes, over the cap of {FILE_CAP} bytes")
    );
}

#[test]
fn an_unchanged_file_over_the_cap_is_compared_without_being_loaded() {
    let d = dirs();
    let big = vec![b'x'; usize::try_from(FILE_CAP).unwrap() + 1];
    for root in [&d.pristine, &d.ws] {
        fs::write(root.join("src/data.txt"), &big).unwrap();
    }
    fs::write(d.ws.join("src/lib.rs"), "b\n").unwrap();
    assert_eq!(d.take(&["src/**"]).unwrap().files, ["src/lib.rs"]);
}

#[test]
fn deleting_a_source_file_over_the_cap_is_carried_and_the_diff_says_it_is_partial() {
    let d = dirs();
    let big = vec![b'x'; usize::try_from(FILE_CAP).unwrap() + 1];
    fs::write(d.pristine.join("src/data.txt"), &big).unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    assert_eq!(saved.files, ["src/data.txt"]);
    assert!(saved.partial);
    let diff = fs::read_to_string(d.runs.join("patch.diff")).unwrap();
    assert!(
        diff.starts_with("# partial patch: src/data.txt left out"),
        "{diff}"
    );
    let clean = d.laid(&saved);
    assert!(!clean.join("src/data.txt").exists());
}

#[test]
fn non_utf8_names_reject_the_patch_only_when_editable() {
    use std::os::unix::ffi::OsStringExt;
    let d = dirs();
    let odd = std::ffi::OsString::from_vec(b"caf\xe9.rs".to_vec());
    fs::write(d.ws.join("src").join(&odd), "content").unwrap();
    fs::create_dir_all(d.ws.join("docs")).unwrap();
    fs::write(d.ws.join("docs").join(&odd), "not editable").unwrap();
    fs::write(d.ws.join("src/lib.rs"), "b\n").unwrap();

    // Not matched by any glob: ignored like any file outside `editable`.
    let saved = d.take(&["src/*.txt", "src/lib.rs"]).unwrap();
    assert_eq!(saved.files, ["src/lib.rs"]);

    // Matched as bytes: rejected, named exactly, never written as U+FFFD.
    let r = rejected(d.take(&["src/**"]));
    assert_eq!(r.path, "src/caf\\xe9.rs");
    assert!(r.problem.contains("not UTF-8"), "{r}");
    // A directory with such a name is entered: its files are checked too.
    let dir = std::ffi::OsString::from_vec(b"src/d\xff".to_vec());
    fs::remove_file(d.ws.join("src").join(&odd)).unwrap();
    fs::create_dir_all(d.ws.join(&dir)).unwrap();
    fs::write(d.ws.join(&dir).join("x.rs"), "x").unwrap();
    assert_eq!(rejected(d.take(&["src/**"])).path, "src/d\\xff/x.rs");
}

#[test]
fn a_symlink_leaving_the_tree_rejects_the_patch_naming_it() {
    let d = dirs();
    let outside = d.root.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.rs"), "SECRET").unwrap();
    symlink(outside.join("secret.rs"), d.ws.join("src/leak.rs")).unwrap();
    let r = rejected(d.take(&["src/**"]));
    assert_eq!(r.path, "src/leak.rs");
    assert!(
        r.problem.contains("is a symlink to the absolute path"),
        "{r}"
    );
    assert!(!fs::read_to_string(d.runs.join("files.json")).is_ok_and(|t| t.contains("leak")));

    // Outside `editable`, a symlink is left alone like any other entry.
    assert!(d.take(&["src/*.txt"]).unwrap().files.is_empty());

    // One the source has too, unchanged, is no change.
    fs::remove_file(d.ws.join("src/leak.rs")).unwrap();
    for root in [&d.pristine, &d.ws] {
        symlink("lib.rs", root.join("src/alias.rs")).unwrap();
    }
    assert!(d.take(&["src/**"]).unwrap().files.is_empty());
    // Pointed at nothing, it is a rejection naming what is missing.
    fs::remove_file(d.ws.join("src/alias.rs")).unwrap();
    symlink("other.rs", d.ws.join("src/alias.rs")).unwrap();
    let r = rejected(d.take(&["src/**"]));
    assert_eq!(r.path, "src/alias.rs");
    assert!(r.problem.contains("does not exist (src/other.rs)"), "{r}");
    // A file where the source has a symlink cannot be patched faithfully.
    fs::remove_file(d.ws.join("src/alias.rs")).unwrap();
    fs::write(d.ws.join("src/alias.rs"), "new").unwrap();
    let r = rejected(d.take(&["src/**"]));
    assert_eq!(r.path, "src/alias.rs");
    assert!(
        r.problem
            .starts_with("in the source: is or passes through a symlink"),
        "{r}"
    );
}

/// `git apply` of `patch.diff` on a copy of the source gives the same
/// entries as the workspace: links as links with their targets.
fn git_applies_to(d: &Dirs, rel: &str) {
    let theirs = d.root.join("theirs");
    let _ = fs::remove_dir_all(&theirs);
    crate::agent::copy_tree(&d.pristine, &theirs).unwrap();
    let out = std::process::Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(d.runs.join("patch.diff"))
        .current_dir(&theirs)
        .output();
    match out {
        Ok(out) => {
            assert!(out.status.success(), "git apply: {out:?}");
            assert_eq!(
                fs::read_link(theirs.join(rel)).unwrap(),
                fs::read_link(d.ws.join(rel)).unwrap()
            );
        }
        Err(e) => agent_runtime_test_support::skip(
            agent_runtime_test_support::Need::Tool,
            "git_applies_to",
            &format!("git apply could not run: {e}"),
        ),
    }
}

#[test]
fn a_link_to_a_file_of_the_tree_is_carried_as_mode_120000_and_laid_as_a_link() {
    let d = dirs();
    symlink("lib.rs", d.ws.join("src/alias.rs")).unwrap();
    fs::create_dir_all(d.ws.join("src/nested")).unwrap();
    symlink("../lib.rs", d.ws.join("src/nested/up.rs")).unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    assert_eq!(saved.files, ["src/alias.rs", "src/nested/up.rs"]);
    let index: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.runs.join("files.json")).unwrap()).unwrap();
    assert_eq!(index["version"], 2);
    assert_eq!(index["files"][0]["change"], "link");
    assert_eq!(index["files"][0]["target"], "lib.rs");
    let diff = fs::read_to_string(d.runs.join("patch.diff")).unwrap();
    assert!(diff.contains("new file mode 120000"), "{diff}");
    git_applies_to(&d, "src/nested/up.rs");
    let clean = d.laid(&saved);
    assert_eq!(
        fs::read_link(clean.join("src/alias.rs")).unwrap(),
        Path::new("lib.rs")
    );
    assert_eq!(
        fs::read_link(clean.join("src/nested/up.rs")).unwrap(),
        Path::new("../lib.rs")
    );
    // A target is carried as written, however odd its characters (the
    // escaped form is for messages only).
    fs::write(d.ws.join("src/tab\tname.rs"), "t\n").unwrap();
    symlink("tab\tname.rs", d.ws.join("src/odd.rs")).unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    let clean = d.laid(&saved);
    assert_eq!(
        fs::read_link(clean.join("src/odd.rs")).unwrap(),
        Path::new("tab\tname.rs")
    );
    fs::remove_file(d.ws.join("src/odd.rs")).unwrap();
    fs::remove_file(d.ws.join("src/tab\tname.rs")).unwrap();
    // A link to a file the patch creates (editable) is carried with it.
    symlink("made.rs", d.ws.join("src/to_made.rs")).unwrap();
    fs::write(d.ws.join("src/made.rs"), "made\n").unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    assert!(saved.files.contains(&"src/to_made.rs".to_string()));
    let clean = d.laid(&saved);
    assert_eq!(
        fs::read_to_string(clean.join("src/to_made.rs")).unwrap(),
        "made\n"
    );
}

#[test]
fn a_file_turned_into_a_link_is_a_deletion_and_a_creation_git_applies() {
    let d = dirs();
    fs::write(d.pristine.join("src/old.rs"), "old\n").unwrap();
    fs::remove_file(d.ws.join("src/lib.rs")).unwrap();
    fs::write(d.ws.join("src/lib.rs"), "a\n").unwrap();
    symlink("lib.rs", d.ws.join("src/old.rs")).unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    assert_eq!(saved.files, ["src/old.rs"]);
    let diff = fs::read_to_string(d.runs.join("patch.diff")).unwrap();
    assert!(
        diff.contains("deleted file mode 100644") && diff.contains("new file mode 120000"),
        "{diff}"
    );
    git_applies_to(&d, "src/old.rs");
    let clean = d.laid(&saved);
    assert_eq!(
        fs::read_link(clean.join("src/old.rs")).unwrap(),
        Path::new("lib.rs")
    );
}

/// Every way a link could reach past what the tree holds, or land where
/// the harness reads, rejects the patch, naming the link; nothing is kept.
#[test]
fn links_out_of_the_tree_to_directories_through_links_or_at_harness_names_are_rejected() {
    let hidden = tempfile::tempdir().unwrap();
    fs::create_dir_all(hidden.path().join("tests")).unwrap();
    fs::write(hidden.path().join("tests/test_lib.py"), "hidden").unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("src/etc", "/etc", "absolute path /etc"),
        ("src/up.rs", "../../outside.rs", "leaves the tree"),
        ("src/back.rs", "../../w/src/lib.rs", "leaves the tree"),
        ("src/dir", ".", "a directory"),
        ("src/root", "..", "the tree's root"),
        (
            "src/chain.rs",
            "alias_of_lib.rs",
            "reached through another link",
        ),
        (
            "src/via.rs",
            "../other/linkdir/lib.rs",
            "reached through another link",
        ),
        (
            "src/notes.rs",
            "../notes/n.txt",
            "the check copy will not have",
        ),
        ("conftest.py", "src/lib.rs", "test harness file"),
        ("sitecustomize.py", "src/lib.rs", "runs at startup"),
        (
            "tests/test_lib.py",
            "../src/lib.rs",
            "where the hidden test files are laid",
        ),
        ("tests", "src", "a directory"),
        ("src/target/x.rs", "../lib.rs", "-"),
    ];
    for (at, target, why) in cases {
        let d = dirs();
        symlink("lib.rs", d.ws.join("src/alias_of_lib.rs")).unwrap();
        fs::create_dir_all(d.ws.join("other")).unwrap();
        symlink("../src", d.ws.join("other/linkdir")).unwrap();
        fs::create_dir_all(d.ws.join("notes")).unwrap();
        fs::write(d.ws.join("notes/n.txt"), "not editable").unwrap();
        let link = d.ws.join(at);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(target, &link).unwrap();
        let editable = [
            "src/**",
            "conftest.py",
            "sitecustomize.py",
            "tests/**",
            "tests",
        ];
        let result = d.take_with(&editable, Some(hidden.path()));
        if *why == "-" {
            // Under a build dir: never entered, never carried.
            let saved = result.unwrap();
            assert!(
                !saved.files.iter().any(|f| f.contains("target")),
                "{saved:?}"
            );
            continue;
        }
        let r = rejected(result);
        assert_eq!(r.path, *at, "{at} -> {target}: {r}");
        assert!(r.problem.contains(why), "{at} -> {target}: {r}");
        assert!(!d.runs.join("files.json").exists(), "{at} -> {target}");
    }
}

#[test]
fn a_version_1_copy_still_reads() {
    let d = dirs();
    fs::write(d.ws.join("src/lib.rs"), "b\n").unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    let text = fs::read_to_string(d.runs.join("files.json")).unwrap();
    let old = text.replace("\"version\": 2", "\"version\": 1");
    assert_ne!(old, text);
    fs::write(d.runs.join("files.json"), &old).unwrap();
    let hash: String = <sha2::Sha256 as sha2::Digest>::digest(old.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let carried = Carried::load(&d.runs, Some(&hash)).unwrap();
    assert_eq!(carried.paths(), saved.files);
}

#[test]
fn a_symlink_the_workspace_deleted_is_carried_as_a_deletion() {
    let d = dirs();
    symlink("lib.rs", d.pristine.join("src/alias.rs")).unwrap();
    let saved = d.take(&["src/**"]).unwrap();
    assert_eq!(saved.files, ["src/alias.rs"]);
    let diff = fs::read_to_string(d.runs.join("patch.diff")).unwrap();
    assert!(diff.contains("deleted file mode 120000"), "{diff}");
    let clean = d.laid(&saved);
    assert!(clean.join("src/alias.rs").symlink_metadata().is_err());
}

#[test]
fn a_directory_in_place_of_an_editable_source_file_rejects_the_patch() {
    let d = dirs();
    fs::remove_file(d.ws.join("src/lib.rs")).unwrap();
    fs::create_dir_all(d.ws.join("src/lib.rs")).unwrap();
    let r = rejected(d.take(&["src/**"]));
    assert_eq!(r.path, "src/lib.rs");
    assert!(r.problem.contains("is a directory"), "{r}");
}

#[test]
fn a_file_inside_a_path_the_acceptance_files_have_as_a_file_rejects_the_patch() {
    let d = dirs();
    let hidden = d.root.join("hidden");
    fs::create_dir_all(hidden.join("tests")).unwrap();
    fs::write(hidden.join("tests/check.py"), "assert True\n").unwrap();
    fs::create_dir_all(d.ws.join("tests/check.py")).unwrap();
    fs::write(d.ws.join("tests/check.py/x.py"), "").unwrap();
    let r = rejected(d.take_with(&["**"], Some(&hidden)));
    assert_eq!(r.path, "tests/check.py/x.py");
    // A file at the hidden file's own path is simply replaced by it.
    fs::remove_dir_all(d.ws.join("tests/check.py")).unwrap();
    fs::write(d.ws.join("tests/check.py"), "forged\n").unwrap();
    assert_eq!(
        d.take_with(&["**"], Some(&hidden)).unwrap().files,
        ["tests/check.py"]
    );
}

#[test]
fn the_changed_files_are_capped_in_all() {
    let d = dirs();
    // Sparse: nothing is read or copied before the cap refuses them.
    for i in 0..=COPY_CAP / FILE_CAP {
        fs::File::create(d.ws.join(format!("src/big{i}.txt")))
            .unwrap()
            .set_len(FILE_CAP)
            .unwrap();
    }
    let started = Instant::now();
    let r = rejected(d.take(&["src/**"]));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(r.problem.contains("in all"), "{r}");
    assert!(!d.runs.join("files").exists() && !d.runs.join("files.tmp").exists());
}

#[test]
fn a_workspace_entry_made_unreadable_rejects_the_patch() {
    let d = dirs();
    // Root reads files whatever their permissions, unless this thread
    // gives up the capabilities that let it (until the end of the test).
    let Some(_as_anyone) = agent_runtime_test_support::require_layer(
        "a_workspace_entry_made_unreadable_rejects_the_patch",
        crate::sandbox::without_permission_overrides()
            .map_err(|e| format!("root reads files whatever their permissions: {e}")),
    ) else {
        return;
    };
    fs::write(d.ws.join("src/lib.rs"), "b\n").unwrap();
    chmod(&d.ws.join("src/lib.rs"), 0o000);
    let r = rejected(d.take(&["src/**"]));
    assert!(r.problem.contains("permission denied"), "{r}");
    chmod(&d.ws.join("src/lib.rs"), 0o644);
    fs::create_dir_all(d.ws.join("src/locked")).unwrap();
    chmod(&d.ws.join("src/locked"), 0o000);
    let r = rejected(d.take(&["src/**"]));
    chmod(&d.ws.join("src/locked"), 0o755);
    assert_eq!(r.path, "src/locked", "{r}");
}
