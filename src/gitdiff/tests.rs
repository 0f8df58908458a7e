//! Round trips: a patch written here, applied to the old tree by
//! [`apply_to_tree`] and by `git apply`, gives the new tree byte for byte,
//! modes included.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

/// A file on one side: content and mode.
type File<'a> = (&'a str, &'a [u8], Mode);

/// Writes `files` under `root`.
fn lay(root: &Path, files: &[File<'_>]) {
    for (path, content, mode) in files {
        let at = root.join(path);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        fs::write(&at, content).unwrap();
        fs::set_permissions(&at, fs::Permissions::from_mode(mode.permissions())).unwrap();
    }
}

/// Every file under `root`: path, content and whether it is executable.
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
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string();
                out.push((rel, fs::read(&path).unwrap(), mode & 0o100 != 0));
            }
        }
    }
    out.sort();
    out
}

fn side<'a>(files: &[File<'a>], path: &str) -> Option<Side<'a>> {
    files.iter().find(|f| f.0 == path).map(|f| Side {
        content: f.1,
        mode: f.2,
    })
}

/// The patch from `old` to `new`, sections in path order.
fn patch(old: &[File<'_>], new: &[File<'_>]) -> String {
    let mut paths: Vec<&str> = old.iter().chain(new).map(|f| f.0).collect();
    paths.sort_unstable();
    paths.dedup();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut out = String::new();
    for path in paths {
        let diff = FileDiff {
            path,
            old: side(old, path),
            new: side(new, path),
        };
        write_file_diff(&diff, deadline, &mut out);
    }
    out
}

/// Applies the patch from `old` to `new` both ways and compares.
fn round_trip(old: &[File<'_>], new: &[File<'_>]) {
    let text = patch(old, new);
    let tmp = tempfile::tempdir().unwrap();
    let (ours, theirs, expected) = (
        tmp.path().join("ours"),
        tmp.path().join("git"),
        tmp.path().join("expected"),
    );
    for root in [&ours, &theirs, &expected] {
        fs::create_dir_all(root).unwrap();
    }
    lay(&ours, old);
    lay(&theirs, old);
    lay(&expected, new);
    apply_to_tree(&ours, text.as_bytes(), &|_| true, 1 << 26)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(files(&ours), files(&expected), "{text}");
    let patch_file = tmp.path().join("patch.diff");
    fs::write(&patch_file, &text).unwrap();
    match std::process::Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(&patch_file)
        .current_dir(&theirs)
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "git apply: {}\n{text}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(files(&theirs), files(&expected), "{text}");
        }
        Err(e) => {
            // libtest names each test's thread after the test.
            let test = std::thread::current()
                .name()
                .unwrap_or("round_trip")
                .to_string();
            agent_runtime_test_support::skip(
                agent_runtime_test_support::Need::Tool,
                &format!("{test} (git apply half)"),
                &format!("git does not run ({e})"),
            );
        }
    }
}

const R: Mode = Mode::Regular;
const X: Mode = Mode::Executable;

#[test]
fn created_deleted_and_mode_changed_files_round_trip() {
    round_trip(
        &[
            ("gone.txt", b"bye\n", R),
            ("gone-empty", b"", R),
            ("run.sh", b"echo hi\n", R),
            ("tool", b"#!/bin/sh\n", X),
        ],
        &[
            ("pkg/__init__.py", b"", R),
            ("new.sh", b"#!/bin/sh\necho\n", X),
            ("run.sh", b"echo hi\n", X),
            ("tool", b"#!/bin/sh\nexit 0\n", R),
        ],
    );
}

#[test]
fn line_endings_and_final_newlines_round_trip() {
    round_trip(
        &[
            ("crlf.txt", b"a\r\nb\r\nc\r\n", R),
            ("nofinal.txt", b"a\nb", R),
            ("gains.txt", b"x", R),
            ("loses.txt", b"x\n", R),
            ("lone-cr.txt", b"a\rb\n", R),
        ],
        &[
            ("crlf.txt", b"a\r\nB\r\nc\r\n", R),
            ("nofinal.txt", b"a\nc", R),
            ("gains.txt", b"x\n", R),
            ("loses.txt", b"x", R),
            ("lone-cr.txt", b"a\rc\n", R),
        ],
    );
}

#[test]
fn binary_and_non_utf8_content_round_trips() {
    let blob: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    let mut changed = blob.clone();
    changed[100] ^= 0xff;
    round_trip(
        &[
            ("data.bin", &blob, R),
            ("latin1.txt", b"caf\xe9\n", R),
            ("was-text.txt", b"text\n", R),
            ("old.bin", b"\x00\x01", R),
        ],
        &[
            ("data.bin", &changed, R),
            ("latin1.txt", b"caf\xe9s\n", R),
            ("was-text.txt", b"\x00now binary", X),
            ("new.bin", b"\x00\xff\x00", R),
        ],
    );
}

#[test]
fn odd_names_round_trip() {
    round_trip(
        &[("with space.txt", b"a\n", R)],
        &[
            ("with space.txt", b"b\n", R),
            ("caf\u{e9}/\u{1f980}.rs", b"fn f() {}\n", R),
            ("quote\"and\\back.txt", b"q\n", R),
            ("tab\there.txt", b"t\n", R),
        ],
    );
}

#[test]
fn scattered_edits_round_trip() {
    // A deterministic mix of changed, removed and added lines.
    let old: String = (0..2000).map(|i| format!("line {i}\n")).collect();
    let mut state = 7u64;
    let mut new = String::new();
    for line in old.lines() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        match state >> 60 {
            0 => {}
            1 => new.push_str("inserted\n"),
            2 => new.push_str(&format!("{line} changed\n")),
            _ => new.push_str(&format!("{line}\n")),
        }
        if state >> 60 == 1 {
            new.push_str(&format!("{line}\n"));
        }
    }
    round_trip(
        &[("a.txt", old.as_bytes(), R)],
        &[("a.txt", new.as_bytes(), R)],
    );
}

#[test]
fn a_diff_past_its_deadline_is_coarse_and_still_exact() {
    let old: String = (0..5000).map(|i| format!("{i}\n")).collect();
    let new: String = (0..5000).map(|i| format!("{}\n", i * 7 % 5000)).collect();
    let (old, new) = (old.as_bytes(), new.as_bytes());
    let mut text = String::new();
    let diff = FileDiff {
        path: "a.txt",
        old: Some(Side {
            content: old,
            mode: R,
        }),
        new: Some(Side {
            content: new,
            mode: R,
        }),
    };
    write_file_diff(&diff, Instant::now(), &mut text);
    let tmp = tempfile::tempdir().unwrap();
    lay(tmp.path(), &[("a.txt", old, R)]);
    apply_to_tree(tmp.path(), text.as_bytes(), &|_| true, 1 << 26).unwrap();
    assert_eq!(fs::read(tmp.path().join("a.txt")).unwrap(), new);
}
