use super::*;

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
fn copies_source_without_git() {
    let (_tmp, ws) = setup();
    assert!(ws.root().join("src/lib.rs").is_file());
    assert!(!ws.root().join(".git").exists());
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
        Err(PathRefusal::Escapes(_))
    ));
    std::os::unix::fs::symlink("/nonexistent/x", ws.root().join("dangling")).unwrap();
    assert!(matches!(
        ws.read("dangling", 10),
        Err(PathRefusal::Escapes(_))
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
        Err(PathRefusal::Escapes(_))
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
