//! Operations beneath a directory against symlinks, FIFOs, huge sparse
//! files and names that are not UTF-8.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::fs::OFlags;

use super::dir::components;
use super::*;

/// `root/` with `src/lib.rs`, and `outside/` with a secret next to it.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(root.join("src/lib.rs"), "fn f() {}\n").unwrap();
    fs::write(outside.join("secret"), "SECRET").unwrap();
    (tmp, root, outside)
}

/// Every file under `dir` with its content (symlinks as their targets).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_symlink() {
                let target = fs::read_link(entry.path()).unwrap();
                out.push((entry.path(), target.into_os_string().into_vec()));
            } else if kind.is_file() {
                out.push((entry.path(), fs::read(entry.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Runs `f` on another thread and fails the test (instead of hanging it)
/// if it takes more than a few seconds.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the operation blocked")
}

#[test]
fn symlinks_are_refused_in_the_middle_and_at_the_end() {
    let (_tmp, root, outside) = setup();
    symlink(&outside, root.join("mid")).unwrap();
    symlink(outside.join("secret"), root.join("leaf")).unwrap();
    symlink("lib.rs", root.join("src/inside")).unwrap();
    let before = snapshot(&outside);
    let dir = Dir::open(&root).unwrap();

    for rel in ["mid/secret", "leaf", "src/inside"] {
        let rel = Path::new(rel);
        assert!(matches!(dir.open_file(rel), Err(Error::Symlink)), "{rel:?}");
        assert!(matches!(dir.read_capped(rel, 100), Err(Error::Symlink)));
        assert!(matches!(dir.read_head(rel, 100), Err(Error::Symlink)));
        // The fallback walk (no openat2) refuses the same way.
        let names = components(rel).unwrap();
        let walked = dir.open_walking(&names, OFlags::RDONLY | OFlags::NONBLOCK);
        assert!(matches!(walked, Err(Error::Symlink)), "{rel:?}: {walked:?}");
    }
    assert!(matches!(
        dir.open_dir(Path::new("mid")),
        Err(Error::Symlink)
    ));
    assert!(matches!(
        dir.open_dir(Path::new("mid/x")),
        Err(Error::Symlink)
    ));
    assert!(matches!(dir.kind(Path::new("leaf")), Ok(Kind::Symlink)));
    assert!(matches!(
        dir.kind(Path::new("mid/secret")),
        Err(Error::Symlink)
    ));
    assert!(matches!(
        dir.open_subdir(OsStr::new("mid")),
        Err(Error::Symlink)
    ));
    for bad in ["../outside/secret", "/etc/passwd", "src/../../outside"] {
        assert!(matches!(dir.open_file(Path::new(bad)), Err(Error::BadPath)));
    }

    // Writes: a symlinked parent is refused; a symlink at the name is
    // replaced, never written through.
    assert!(matches!(
        dir.write_file(Path::new("mid/new"), b"x", 0o644),
        Err(Error::Symlink)
    ));
    assert!(matches!(
        dir.write_file(Path::new("mid/sub/new"), b"x", 0o644),
        Err(Error::Symlink)
    ));
    dir.write_file(Path::new("leaf"), b"replaced", 0o644)
        .unwrap();
    assert!(fs::symlink_metadata(root.join("leaf")).unwrap().is_file());
    assert_eq!(fs::read(root.join("leaf")).unwrap(), b"replaced");
    assert_eq!(snapshot(&outside), before, "something outside changed");

    // The walk lists symlinks and never enters them.
    let names: Vec<OsString> = dir.entries().unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["leaf", "mid", "src"]);
    struct Collect(Vec<PathBuf>);
    impl Visitor for Collect {
        type Error = AtPath;
        fn visit(&mut self, found: &Found<'_>) -> Result<Step, AtPath> {
            self.0.push(found.rel.to_path_buf());
            Ok(Step::Descend)
        }
    }
    let mut seen = Collect(Vec::new());
    assert!(walk(&dir, &mut seen).unwrap());
    assert_eq!(
        seen.0,
        ["leaf", "mid", "src", "src/inside", "src/lib.rs"].map(PathBuf::from)
    );
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let (_tmp, root, _outside) = setup();
    nix::unistd::mkfifo(&root.join("src/pipe.rs"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let dir = Dir::open(&root).unwrap();
    assert!(matches!(dir.kind(Path::new("src/pipe.rs")), Ok(Kind::Fifo)));
    let results = within_seconds(move || {
        let rel = Path::new("src/pipe.rs");
        (
            dir.open_file(rel).map(|_| ()),
            dir.read_capped(rel, 100).map(|_| ()),
            dir.read_head(rel, 100).map(|_| ()),
        )
    });
    for result in [results.0, results.1, results.2] {
        assert!(
            matches!(result, Err(Error::NotRegular(Kind::Fifo))),
            "{result:?}"
        );
    }
}

/// Peak resident memory of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_sparse_file_over_the_cap_is_refused_before_it_is_read() {
    let (_tmp, root, _outside) = setup();
    let huge = 2 * 1024 * 1024 * 1024u64;
    fs::File::create(root.join("src/huge.rs"))
        .unwrap()
        .set_len(huge)
        .unwrap();
    let dir = Dir::open(&root).unwrap();
    let started = Instant::now();
    let cap = 16 * 1024 * 1024;
    assert!(matches!(
        dir.read_capped(Path::new("src/huge.rs"), cap),
        Err(Error::TooLarge { size, cap: c }) if size == huge && c == cap
    ));
    let (head, meta) = dir.read_head(Path::new("src/huge.rs"), 1000).unwrap();
    assert_eq!((head.len(), meta.size), (1000, huge));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        peak_rss_kib() < 1024 * 1024,
        "peak RSS {} KiB: the file was read",
        peak_rss_kib()
    );
}

#[test]
fn copy_tree_carries_names_as_bytes_and_symlinks_as_links() {
    let (tmp, src, outside) = setup();
    let odd = OsString::from_vec(b"caf\xe9.rs".to_vec());
    let odd_dir = OsString::from_vec(b"d\xff\xfe".to_vec());
    fs::write(src.join("src").join(&odd), b"latin-1 name").unwrap();
    fs::create_dir(src.join(&odd_dir)).unwrap();
    fs::write(src.join(&odd_dir).join("inner.rs"), b"inner").unwrap();
    fs::write(src.join("run.sh"), b"#!/bin/sh\n").unwrap();
    fs::set_permissions(src.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    symlink(outside.join("secret"), src.join("abs-link")).unwrap();
    symlink("missing/target", src.join("dangling")).unwrap();
    symlink(&outside, src.join("dir-link")).unwrap();
    nix::unistd::mkfifo(&src.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    fs::create_dir(src.join(".git")).unwrap();
    fs::write(src.join(".git/config"), b"x").unwrap();

    let dest = tmp.path().join("copy");
    let handle = within_seconds({
        let (src, dest) = (src.clone(), dest.clone());
        move || copy_tree(&src, &dest, &[".git"]).map(|_| ())
    });
    handle.unwrap();

    let rel = |p: &Path, base: &Path| p.strip_prefix(base).unwrap().to_path_buf();
    let want: Vec<_> = snapshot(&src)
        .into_iter()
        .map(|(p, b)| (rel(&p, &src), b))
        .filter(|(p, _)| !p.starts_with(".git"))
        .collect();
    let got: Vec<_> = snapshot(&dest)
        .into_iter()
        .map(|(p, b)| (rel(&p, &dest), b))
        .collect();
    assert_eq!(got, want);
    assert!(
        got.iter()
            .any(|(p, _)| p.as_os_str() == Path::new("src").join(&odd).as_os_str())
    );
    for link in ["abs-link", "dangling", "dir-link"] {
        assert!(
            fs::symlink_metadata(dest.join(link))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    assert!(!dest.join("pipe").exists(), "a FIFO is not copied");
    assert_eq!(
        fs::metadata(dest.join("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o755
    );
    // The dangling link's target was never created, nothing outside moved.
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
}

#[test]
fn overlay_replaces_links_and_never_writes_through_them() {
    let (tmp, dest, outside) = setup();
    let acceptance = tmp.path().join("acceptance");
    fs::create_dir_all(acceptance.join("tests")).unwrap();
    fs::create_dir_all(acceptance.join("more")).unwrap();
    fs::write(acceptance.join("tests/acc.rs"), "hidden test").unwrap();
    fs::write(acceptance.join("more/m.rs"), "more").unwrap();
    fs::create_dir_all(dest.join("tests")).unwrap();
    symlink(outside.join("secret"), dest.join("tests/acc.rs")).unwrap();
    symlink(&outside, dest.join("more")).unwrap();
    let before = snapshot(&outside);

    overlay(&acceptance, &dest).unwrap();
    assert_eq!(snapshot(&outside), before, "written through a symlink");
    assert!(
        fs::symlink_metadata(dest.join("tests/acc.rs"))
            .unwrap()
            .is_file()
    );
    assert_eq!(
        fs::read_to_string(dest.join("tests/acc.rs")).unwrap(),
        "hidden test"
    );
    assert!(fs::symlink_metadata(dest.join("more")).unwrap().is_dir());
    assert_eq!(fs::read_to_string(dest.join("more/m.rs")).unwrap(), "more");
    // The acceptance dir is only read.
    assert_eq!(fs::read_dir(acceptance.join("tests")).unwrap().count(), 1);
}

#[test]
fn replacing_leaves_no_temporary_file_behind() {
    let (_tmp, root, _outside) = setup();
    let dir = Dir::open(&root).unwrap();
    dir.write_file(Path::new("src/new/deep.rs"), b"deep", 0o600)
        .unwrap();
    assert_eq!(fs::read(root.join("src/new/deep.rs")).unwrap(), b"deep");
    assert!(matches!(
        dir.write_file(Path::new("src/new"), b"x", 0o644),
        Err(Error::IsDirectory)
    ));
    let (parent, leaf) = dir.create_parents(Path::new("src/lib.rs")).unwrap();
    parent.replace_file(leaf, b"new", 0o644).unwrap();
    let names: Vec<_> = fs::read_dir(root.join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.as_bytes().starts_with(b".agent-runtime")),
        "{names:?}"
    );
}

#[test]
fn names_that_are_not_utf8_are_escaped_exactly() {
    let name = OsString::from_vec(b"caf\xe9/\xc3\xa9\\\n.rs".to_vec());
    assert_eq!(escape_name(&name), "caf\\xe9/é\\\\\\n.rs");
    assert_eq!(escape_name(OsStr::new("src/lib.rs")), "src/lib.rs");
}

#[test]
fn remove_tree_removes_a_directory_and_never_follows_its_links() {
    let (_tmp, root, outside) = setup();
    fs::create_dir_all(root.join("gone/deeper")).unwrap();
    fs::write(root.join("gone/deeper/file"), "x").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("gone/link")).unwrap();
    let before = snapshot(&outside);
    let dir = Dir::open(&root).unwrap();
    dir.remove_tree(std::ffi::OsStr::new("gone")).unwrap();
    assert!(!root.join("gone").exists());
    assert_eq!(snapshot(&outside), before);
    // A file or a link alone is removed as itself.
    fs::write(root.join("plain"), "x").unwrap();
    dir.remove_tree(std::ffi::OsStr::new("plain")).unwrap();
    assert!(!root.join("plain").exists());
}
