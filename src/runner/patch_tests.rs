use std::fs;

use super::*;
use crate::agent::editable_set;

#[test]
fn diff_then_apply_reproduces_the_editable_changes_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (pristine, ws, clean) = (
        tmp.path().join("p"),
        tmp.path().join("w"),
        tmp.path().join("c"),
    );
    for root in [&pristine, &ws, &clean] {
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(root.join("tests")).unwrap();
        fs::write(root.join("src/lib.rs"), "a\nb\n1..n\nc\n").unwrap();
        fs::write(root.join("tests/t.rs"), "assert!(true)\n").unwrap();
    }
    fs::write(ws.join("src/lib.rs"), "a\nb\n1..=n\nc\n").unwrap();
    fs::write(ws.join("src/new.rs"), "pub fn x() {}\n").unwrap();
    fs::write(ws.join("tests/t.rs"), "tampered\n").unwrap();
    let editable = editable_set(&["src/**/*.rs".to_string()]).unwrap();

    let patch = diff_editable(&pristine, &ws, &editable).unwrap();
    assert_eq!(patch.files, ["src/lib.rs", "src/new.rs"]);
    assert!(patch.text.contains("-1..n\n+1..=n"));
    assert!(!patch.text.contains("tampered"));

    let written = apply_patch(&clean, &patch.text, &editable).unwrap();
    assert_eq!(written, ["src/lib.rs", "src/new.rs"]);
    assert_eq!(
        fs::read_to_string(clean.join("src/lib.rs")).unwrap(),
        "a\nb\n1..=n\nc\n"
    );
    assert_eq!(
        fs::read_to_string(clean.join("src/new.rs")).unwrap(),
        "pub fn x() {}\n"
    );
    assert_eq!(
        fs::read_to_string(clean.join("tests/t.rs")).unwrap(),
        "assert!(true)\n"
    );
}

#[test]
fn a_patch_touching_non_editable_paths_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "--- a/tests/t.rs\n+++ b/tests/t.rs\n@@ -1 +1 @@\n-x\n+y\n";
    let editable = editable_set(&["src/**".to_string()]).unwrap();
    assert!(matches!(
        apply_patch(tmp.path(), text, &editable),
        Err(PatchError::NotEditable(_))
    ));
    let escape = "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-x\n+y\n";
    let all = editable_set(&["**".to_string()]).unwrap();
    assert!(matches!(
        apply_patch(tmp.path(), escape, &all),
        Err(PatchError::BadPath(_))
    ));
}

#[test]
fn no_changes_no_patch() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir_all(tmp.path().join("p/src")).unwrap();
    fs::write(tmp.path().join("p/src/a.rs"), "x").unwrap();
    crate::agent::copy_tree(&tmp.path().join("p"), &tmp.path().join("w")).unwrap();
    let editable = editable_set(&["**".to_string()]).unwrap();
    let patch = diff_editable(&tmp.path().join("p"), &tmp.path().join("w"), &editable).unwrap();
    assert!(patch.text.is_empty() && patch.files.is_empty());
}

/// A pristine source and a workspace copy of it, both with `src/lib.rs`.
fn pair() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (pristine, ws) = (tmp.path().join("p"), tmp.path().join("w"));
    for root in [&pristine, &ws] {
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/lib.rs"), "a\n").unwrap();
    }
    (tmp, pristine, ws)
}

#[track_caller]
fn rejected(result: Result<Patch, PatchError>) -> Rejection {
    match result {
        Err(PatchError::Rejected(r)) => r,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn a_fifo_at_an_editable_path_rejects_the_patch_without_blocking() {
    let (_tmp, pristine, ws) = pair();
    nix::unistd::mkfifo(&ws.join("src/pipe.rs"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let editable = editable_set(&["src/**".to_string()]).unwrap();
        let _ = tx.send(diff_editable(&pristine, &ws, &editable));
    });
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("the patch phase blocked on a FIFO");
    let r = rejected(result);
    assert_eq!(r.path, "src/pipe.rs");
    assert_eq!(r.to_string(), "src/pipe.rs: is a FIFO, not a regular file");
}

#[test]
fn a_huge_sparse_file_rejects_the_patch_by_its_size() {
    let (_tmp, pristine, ws) = pair();
    let huge = 2 * 1024 * 1024 * 1024u64;
    fs::File::create(ws.join("src/lib.rs"))
        .unwrap()
        .set_len(huge)
        .unwrap();
    let editable = editable_set(&["src/**".to_string()]).unwrap();
    let started = std::time::Instant::now();
    let r = rejected(diff_editable(&pristine, &ws, &editable));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(
        r.to_string(),
        format!("src/lib.rs: is {huge} bytes, over the cap of {FILE_CAP} bytes")
    );
}

#[test]
fn an_unchanged_file_over_the_cap_is_compared_without_being_loaded() {
    let (_tmp, pristine, ws) = pair();
    let big = vec![b'x'; usize::try_from(FILE_CAP).unwrap() + 1];
    for root in [&pristine, &ws] {
        fs::write(root.join("src/data.txt"), &big).unwrap();
    }
    fs::write(ws.join("src/lib.rs"), "b\n").unwrap();
    let editable = editable_set(&["src/**".to_string()]).unwrap();
    let patch = diff_editable(&pristine, &ws, &editable).unwrap();
    assert_eq!(patch.files, ["src/lib.rs"]);
}

#[test]
fn non_utf8_names_reject_the_patch_only_when_editable() {
    use std::os::unix::ffi::OsStringExt;
    let (_tmp, pristine, ws) = pair();
    let odd = std::ffi::OsString::from_vec(b"caf\xe9.rs".to_vec());
    fs::write(ws.join("src").join(&odd), "content").unwrap();
    fs::create_dir_all(ws.join("docs")).unwrap();
    fs::write(ws.join("docs").join(&odd), "not editable").unwrap();
    fs::write(ws.join("src/lib.rs"), "b\n").unwrap();

    // Not matched by any glob: ignored like any file outside `editable`.
    let rust_only = editable_set(&["src/*.txt".to_string(), "src/lib.rs".to_string()]).unwrap();
    let patch = diff_editable(&pristine, &ws, &rust_only).unwrap();
    assert_eq!(patch.files, ["src/lib.rs"]);

    // Matched as bytes: rejected, named exactly, never written as U+FFFD.
    let src = editable_set(&["src/**".to_string()]).unwrap();
    let r = rejected(diff_editable(&pristine, &ws, &src));
    assert_eq!(r.path, "src/caf\\xe9.rs");
    assert!(r.problem.contains("not UTF-8"), "{r}");
    // A directory with such a name is entered: its files are checked too.
    let dir = std::ffi::OsString::from_vec(b"src/d\xff".to_vec());
    fs::remove_file(ws.join("src").join(&odd)).unwrap();
    fs::create_dir_all(ws.join(&dir)).unwrap();
    fs::write(ws.join(&dir).join("x.rs"), "x").unwrap();
    assert_eq!(
        rejected(diff_editable(&pristine, &ws, &src)).path,
        "src/d\\xff/x.rs"
    );
}

#[test]
fn binary_content_rejects_the_patch_rather_than_changing_it() {
    let (_tmp, pristine, ws) = pair();
    fs::write(ws.join("src/blob.bin"), b"\x00\xff\xfe").unwrap();
    let editable = editable_set(&["src/**".to_string()]).unwrap();
    let r = rejected(diff_editable(&pristine, &ws, &editable));
    assert_eq!(
        r.to_string(),
        "src/blob.bin: is not UTF-8 text; a patch carries text only"
    );
}

#[test]
fn symlinks_in_the_workspace_are_neither_followed_nor_carried() {
    let (tmp, pristine, ws) = pair();
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.rs"), "SECRET").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("src/linked")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.rs"), ws.join("src/leak.rs")).unwrap();
    let editable = editable_set(&["src/**".to_string()]).unwrap();
    let patch = diff_editable(&pristine, &ws, &editable).unwrap();
    assert!(patch.files.is_empty() && patch.text.is_empty(), "{patch:?}");

    // A file where the source has a symlink cannot be patched faithfully.
    std::os::unix::fs::symlink("lib.rs", pristine.join("src/alias.rs")).unwrap();
    fs::write(ws.join("src/alias.rs"), "new").unwrap();
    let r = rejected(diff_editable(&pristine, &ws, &editable));
    assert_eq!(r.path, "src/alias.rs");
    assert!(
        r.problem
            .starts_with("in the source: is or passes through a symlink")
    );
}

#[test]
fn applying_never_writes_through_a_symlink() {
    let (tmp, _pristine, clean) = pair();
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("x.rs"), "a\n").unwrap();
    std::os::unix::fs::symlink(outside.join("x.rs"), clean.join("src/x.rs")).unwrap();
    std::os::unix::fs::symlink(&outside, clean.join("src/dir")).unwrap();
    let all = editable_set(&["**".to_string()]).unwrap();
    let modify = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n";
    assert!(matches!(
        apply_patch(&clean, modify, &all),
        Err(PatchError::Apply { .. })
    ));
    let through_dir = "--- /dev/null\n+++ b/src/dir/new.rs\n@@ -0,0 +1 @@\n+b\n";
    assert!(matches!(
        apply_patch(&clean, through_dir, &all),
        Err(PatchError::Apply { .. })
    ));
    // A created file replaces a symlink at its name.
    let create = "--- /dev/null\n+++ b/src/x.rs\n@@ -0,0 +1 @@\n+b\n";
    assert_eq!(apply_patch(&clean, create, &all).unwrap(), ["src/x.rs"]);
    assert_eq!(fs::read_to_string(clean.join("src/x.rs")).unwrap(), "b\n");
    assert_eq!(fs::read_to_string(outside.join("x.rs")).unwrap(), "a\n");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
}
