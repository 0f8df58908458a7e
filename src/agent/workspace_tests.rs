use super::*;
use std::fs;
use std::path::{Path, PathBuf};

fn setup() -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src-tree");
    fs::create_dir_all(src.join("src")).unwrap();
    fs::create_dir_all(src.join("tests")).unwrap();
    fs::create_dir_all(src.join(".git")).unwrap();
    fs::write(src.join("src/lib.rs"), "fn f() { 1..n }\n").unwrap();
    fs::write(src.join("tests/t.rs"), "#[test] fn t() {}\n").unwrap();
    fs::write(src.join(".git/config"), "secret").unwrap();
    fs::write(tmp.path().join("outside.txt"), "outside").unwrap();
    let ws = Workspace::create(&src, &tmp.path().join("ws"), &["src/**/*.rs".to_string()]).unwrap();
    (tmp, ws)
}

#[test]
fn copies_source_with_its_git_but_never_lists_it() {
    let (_tmp, ws) = setup();
    assert!(ws.root().join("src/lib.rs").is_file());
    assert!(ws.root().join(".git/config").is_file());
    let (files, complete) = ws.list(".").unwrap();
    assert!(complete);
    assert_eq!(files, ["src/", "src/lib.rs", "tests/", "tests/t.rs"]);
}

#[test]
fn reads_are_contained_and_capped() {
    let (tmp, ws) = setup();
    assert_eq!(
        ws.read("src/lib.rs", 1000).unwrap().text,
        "fn f() { 1..n }\n"
    );
    let capped = ws.read("./src/lib.rs", 4).unwrap();
    assert_eq!(capped.text, "fn f");
    assert!(capped.truncated);
    assert_eq!(capped.total_bytes, 16);
    assert!(matches!(
        ws.read("/etc/passwd", 10),
        Err(PathRefusal::Absolute(_))
    ));
    assert!(matches!(
        ws.read("../outside.txt", 10),
        Err(PathRefusal::ParentDir(_))
    ));
    assert!(matches!(
        ws.read("src/../../outside.txt", 10),
        Err(PathRefusal::ParentDir(_))
    ));
    assert!(matches!(
        ws.read(".git/config", 10),
        Err(PathRefusal::Git(_))
    ));
    assert!(matches!(
        ws.read("nope.rs", 10),
        Err(PathRefusal::NotFound(_))
    ));
    assert!(matches!(
        ws.read("src", 10),
        Err(PathRefusal::IsDirectory(_))
    ));
    assert!(matches!(ws.read("", 10), Err(PathRefusal::Empty)));
    std::os::unix::fs::symlink(
        tmp.path().join("outside.txt"),
        ws.root().join("src/link.rs"),
    )
    .unwrap();
    assert!(matches!(
        ws.read("src/link.rs", 10),
        Err(PathRefusal::Symlink(_))
    ));
    std::os::unix::fs::symlink("/nonexistent/x", ws.root().join("dangling")).unwrap();
    assert!(matches!(
        ws.read("dangling", 10),
        Err(PathRefusal::Symlink(_))
    ));
}

#[test]
fn writes_need_editable_and_no_symlinks() {
    let (tmp, ws) = setup();
    let edit = ws.write("src/new.rs", "pub fn g() {}\n").unwrap();
    assert_eq!(edit.path, "src/new.rs");
    assert_eq!(edit.before, None);
    assert_eq!(
        fs::read_to_string(ws.root().join("src/new.rs")).unwrap(),
        "pub fn g() {}\n"
    );
    let edit = ws.write("src/nested/deep.rs", "x").unwrap();
    assert_eq!(edit.path, "src/nested/deep.rs");

    assert!(matches!(
        ws.write("tests/t.rs", "x"),
        Err(PathRefusal::NotEditable(..))
    ));
    assert!(matches!(
        ws.write("Cargo.toml", "x"),
        Err(PathRefusal::NotEditable(..))
    ));
    assert!(matches!(
        ws.write("/tmp/x.rs", "x"),
        Err(PathRefusal::Absolute(_))
    ));
    assert!(matches!(
        ws.write("src/../tests/t.rs", "x"),
        Err(PathRefusal::ParentDir(_))
    ));

    // The target itself is a symlink, inside or outside.
    std::os::unix::fs::symlink(tmp.path().join("outside.txt"), ws.root().join("src/out.rs"))
        .unwrap();
    assert!(matches!(
        ws.write("src/out.rs", "x"),
        Err(PathRefusal::Symlink(_))
    ));
    assert_eq!(
        fs::read_to_string(tmp.path().join("outside.txt")).unwrap(),
        "outside"
    );
    std::os::unix::fs::symlink(ws.root().join("tests/t.rs"), ws.root().join("src/in.rs")).unwrap();
    assert!(matches!(
        ws.write("src/in.rs", "x"),
        Err(PathRefusal::Symlink(_))
    ));

    // A symlinked directory that makes a non-editable file look editable.
    std::os::unix::fs::symlink(ws.root().join("tests"), ws.root().join("src/sneaky")).unwrap();
    assert!(matches!(
        ws.write("src/sneaky/t.rs", "x"),
        Err(PathRefusal::Symlink(_))
    ));
    assert_eq!(
        fs::read_to_string(ws.root().join("tests/t.rs")).unwrap(),
        "#[test] fn t() {}\n"
    );
}

#[test]
fn replace_needs_exactly_one_occurrence() {
    let (_tmp, ws) = setup();
    let edit = ws.replace("src/lib.rs", "1..n", "1..=n").unwrap();
    assert!(edit.before.is_some());
    assert_eq!(
        fs::read_to_string(ws.root().join("src/lib.rs")).unwrap(),
        "fn f() { 1..=n }\n"
    );
    assert_eq!(
        ws.replace("src/lib.rs", "absent", "x"),
        Err(PathRefusal::Occurrences {
            path: "src/lib.rs".into(),
            count: 0
        })
    );
    ws.write("src/two.rs", "a a").unwrap();
    assert_eq!(
        ws.replace("src/two.rs", "a", "b"),
        Err(PathRefusal::Occurrences {
            path: "src/two.rs".into(),
            count: 2
        })
    );
    assert!(matches!(
        ws.replace("src/none.rs", "a", "b"),
        Err(PathRefusal::NotFound(_))
    ));
}

/// Every file under `dir` and its bytes (FIFOs and symlinks by name only).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(tree(&entry.path()));
        } else if kind.is_file() {
            out.push((entry.path(), fs::read(entry.path()).unwrap()));
        } else {
            out.push((entry.path(), Vec::new()));
        }
    }
    out.sort();
    out
}

#[test]
fn symlinks_anywhere_in_a_path_are_refused_and_nothing_outside_is_touched() {
    let (tmp, ws) = setup();
    let outside = tmp.path().join("outside");
    fs::create_dir_all(outside.join("sub")).unwrap();
    fs::write(outside.join("sub/secret.rs"), "SECRET").unwrap();
    let before = tree(tmp.path());
    std::os::unix::fs::symlink(&outside, ws.root().join("src/sub")).unwrap();
    std::os::unix::fs::symlink(outside.join("sub/secret.rs"), ws.root().join("src/leaf.rs"))
        .unwrap();
    for path in ["src/sub/sub/secret.rs", "src/leaf.rs"] {
        assert!(
            matches!(ws.read(path, 100), Err(PathRefusal::Symlink(_))),
            "{path}"
        );
        assert!(matches!(ws.check_read(path), Err(PathRefusal::Symlink(_))));
        assert!(matches!(ws.check_write(path), Err(PathRefusal::Symlink(_))));
        assert!(matches!(
            ws.replace(path, "SECRET", "x"),
            Err(PathRefusal::Symlink(_))
        ));
    }
    for path in ["src/sub/sub/new.rs", "src/sub/new.rs", "src/sub/x/y.rs"] {
        assert!(
            matches!(ws.write(path, "x"), Err(PathRefusal::Symlink(_))),
            "{path}"
        );
    }
    for path in ["src/sub", "src/sub/sub"] {
        assert!(
            matches!(ws.list(path), Err(PathRefusal::Symlink(_))),
            "{path}"
        );
    }
    // Listed by name, never entered.
    let (files, _) = ws.list("src").unwrap();
    assert_eq!(files, ["src/leaf.rs", "src/lib.rs", "src/sub"]);
    // A write racing a symlink onto its name replaces the link itself.
    let (parent, leaf) = ws.dir.create_parents(Path::new("src/leaf.rs")).unwrap();
    parent.replace_file(leaf, b"mine", 0o644).unwrap();
    assert_eq!(fs::read(ws.root().join("src/leaf.rs")).unwrap(), b"mine");
    fs::remove_file(ws.root().join("src/leaf.rs")).unwrap();
    fs::remove_file(ws.root().join("src/sub")).unwrap();
    let after: Vec<_> = tree(tmp.path())
        .into_iter()
        .filter(|(p, _)| !p.starts_with(ws.root()))
        .collect();
    let before: Vec<_> = before
        .into_iter()
        .filter(|(p, _)| !p.starts_with(ws.root()))
        .collect();
    assert_eq!(after, before, "something outside the workspace changed");
}

#[test]
fn fifos_are_refused_without_blocking() {
    let (_tmp, ws) = setup();
    nix::unistd::mkfifo(
        &ws.root().join("src/pipe.rs"),
        nix::sys::stat::Mode::S_IRWXU,
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send((
            ws.read("src/pipe.rs", 100).map(|_| ()),
            ws.write("src/pipe.rs", "x").map(|_| ()),
            ws.replace("src/pipe.rs", "a", "b").map(|_| ()),
        ));
    });
    let (read, write, replace) = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("a file action on a FIFO blocked");
    let fifo = |r: &Result<_, PathRefusal>| matches!(r, Err(PathRefusal::NotRegular { kind, .. }) if *kind == "a FIFO");
    assert!(fifo(&read), "{read:?}");
    assert!(fifo(&write), "{write:?}");
    assert!(fifo(&replace), "{replace:?}");
}

#[test]
fn a_huge_sparse_file_is_refused_by_size_before_it_is_read() {
    let (_tmp, ws) = setup();
    let huge = 2 * 1024 * 1024 * 1024u64;
    fs::File::create(ws.root().join("src/huge.rs"))
        .unwrap()
        .set_len(huge)
        .unwrap();
    let started = std::time::Instant::now();
    let head = ws.read("src/huge.rs", 64).unwrap();
    assert!(head.truncated && head.total_bytes == huge && head.text.len() == 64);
    let too_large = |r: Result<EditRecord, PathRefusal>| matches!(r, Err(PathRefusal::TooLarge { size, cap, .. }) if size == huge && cap == EDIT_CAP);
    assert!(too_large(ws.replace("src/huge.rs", "a", "b")));
    assert!(too_large(ws.write("src/huge.rs", "small")));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn names_that_are_not_utf8_are_listed_escaped_and_marked() {
    use std::os::unix::ffi::OsStringExt;
    let (_tmp, ws) = setup();
    let odd = std::ffi::OsString::from_vec(b"caf\xe9.rs".to_vec());
    fs::write(ws.root().join("src").join(&odd), "x").unwrap();
    let (files, complete) = ws.list("src").unwrap();
    assert!(complete);
    assert_eq!(
        files,
        [
            "src/caf\\xe9.rs [name is not UTF-8; not accessible]",
            "src/lib.rs"
        ]
    );
}
