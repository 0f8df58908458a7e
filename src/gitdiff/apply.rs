//! Applying a patch to a tree: git's format (`diff --git` sections with
//! created, deleted, renamed and copied files, mode changes and `GIT
//! binary patch` blocks, literal or delta) or a plain unified diff, parsed
//! by `diffy`. Every file is read and replaced through descriptors beneath
//! the root, never through a symlink (a created file replaces a symlink at
//! its name rather than writing through it).

use std::path::Path;

use diffy::patch_set::{FileMode, FileOperation, FilePatch, ParseOptions, PatchKind, PatchSet};

use crate::beneath::{Dir, Error as Beneath};

/// Permission bits of a file a patch creates without saying its mode.
const NEW_FILE_MODE: u32 = 0o644;

/// What a patch did to a tree, paths in the order the patch names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Applied {
    /// Files created or changed (a rename's or copy's destination too).
    pub written: Vec<String>,
    /// Files removed (a rename's source too).
    pub deleted: Vec<String>,
}

/// Why a patch was not applied.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApplyError {
    #[error("the patch does not parse: {0}")]
    Parse(String),
    #[error("the patch names {0:?}, which is not a plain relative path")]
    BadPath(String),
    #[error("the patch touches {0:?}, which it may not change")]
    NotAllowed(String),
    #[error("the patch does not apply to {path}: {message}")]
    Apply { path: String, message: String },
    #[error("failed to apply the patch to {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Why a link is not made (or carried), in words that name what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct LinkRefused(pub String);

/// Whether a link the patch creates at a path, with a target, may be made
/// (the caller's rule), and why not.
pub(crate) type LinkRule<'a> = &'a dyn Fn(&str, &std::ffi::OsStr) -> Result<(), LinkRefused>;

/// Applies `text` to the tree at `root`. `allowed` says which paths the
/// patch may touch (every path it names is checked before anything is
/// written); files are read up to `cap` bytes. A link the patch creates
/// (mode 120000) is refused.
pub(crate) fn apply_to_tree(
    root: &Path,
    text: &[u8],
    allowed: &dyn Fn(&str) -> bool,
    cap: u64,
) -> Result<Applied, ApplyError> {
    apply_with_links(
        root,
        text,
        allowed,
        &|_, _| Err(LinkRefused("symlinks are not applied".into())),
        cap,
    )
}

/// [`apply_to_tree`], creating each new link (mode 120000) that `links`
/// lets it make, as a link, never written through.
pub(crate) fn apply_with_links(
    root: &Path,
    text: &[u8],
    allowed: &dyn Fn(&str) -> bool,
    links: LinkRule<'_>,
    cap: u64,
) -> Result<Applied, ApplyError> {
    let mut applied = Applied::default();
    if text.trim_ascii().is_empty() {
        return Ok(applied);
    }
    let git = text
        .split(|&b| b == b'\n')
        .any(|line| line.starts_with(b"diff --git "));
    let options = if git {
        ParseOptions::gitdiff()
    } else {
        ParseOptions::unidiff()
    };
    let files = PatchSet::parse_bytes(text, options)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApplyError::Parse(e.to_string()))?;
    let plans = files
        .iter()
        .map(|file| plan(file, allowed))
        .collect::<Result<Vec<_>, _>>()?;
    let dir = Dir::open(root).map_err(|source| ApplyError::Io {
        path: root.display().to_string(),
        source,
    })?;
    for (file, plan) in files.iter().zip(plans) {
        apply_one(&dir, file, &plan, cap, links, &mut applied)?;
    }
    Ok(applied)
}

/// Where one file's patch reads and writes.
struct Plan {
    /// The file the patch starts from (none for a created file).
    from: Option<String>,
    /// The file it writes (none for a deleted file).
    to: Option<String>,
    /// Whether `from` goes away (a rename).
    moves: bool,
}

fn plan(file: &FilePatch<'_, [u8]>, allowed: &dyn Fn(&str) -> bool) -> Result<Plan, ApplyError> {
    // Names from `---`/`+++` and `diff --git` lines carry git's `a/` and
    // `b/`; those of `rename from` and `copy from` lines do not.
    let (from, to, moves) = match file.operation() {
        FileOperation::Create(path) => (None, Some(name(path, true)?), false),
        FileOperation::Delete(path) => (Some(name(path, true)?), None, false),
        FileOperation::Modify { modified, .. } => {
            let path = name(modified, true)?;
            (Some(path.clone()), Some(path), false)
        }
        FileOperation::Rename { from, to } => {
            (Some(name(from, false)?), Some(name(to, false)?), true)
        }
        FileOperation::Copy { from, to } => {
            (Some(name(from, false)?), Some(name(to, false)?), false)
        }
    };
    for path in from.iter().chain(&to) {
        if !allowed(path) {
            return Err(ApplyError::NotAllowed(path.clone()));
        }
    }
    Ok(Plan { from, to, moves })
}

/// A path of the patch as a plain relative path: UTF-8, no root, no `.`,
/// `..` or `.git` component.
fn name(raw: &[u8], prefixed: bool) -> Result<String, ApplyError> {
    let text = String::from_utf8_lossy(raw);
    let bad = || ApplyError::BadPath(text.to_string());
    let path = std::str::from_utf8(raw).map_err(|_| bad())?;
    let path = if prefixed {
        path.strip_prefix("a/")
            .or_else(|| path.strip_prefix("b/"))
            .unwrap_or(path)
    } else {
        path
    };
    let plain = !path.is_empty()
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && c != ".git");
    if plain {
        Ok(path.to_string())
    } else {
        Err(bad())
    }
}

fn apply_one(
    dir: &Dir,
    file: &FilePatch<'_, [u8]>,
    plan: &Plan,
    cap: u64,
    links: LinkRule<'_>,
    applied: &mut Applied,
) -> Result<(), ApplyError> {
    let failed = |path: &str| {
        let path = path.to_string();
        move |e: Beneath| match e {
            Beneath::Io(source) => ApplyError::Io { path, source },
            e => ApplyError::Apply {
                path,
                message: e.to_string(),
            },
        }
    };
    let unsupported = |path: &str, what: &str| ApplyError::Apply {
        path: path.to_string(),
        message: format!("{what} are not applied"),
    };
    let (base, base_mode) = match &plan.from {
        None => (Vec::new(), None),
        Some(from) if file.old_mode() == Some(&FileMode::Symlink) => {
            if plan.to.is_some() {
                return Err(unsupported(from, "symlinks"));
            }
            (Vec::new(), None)
        }
        Some(from) => match dir.read_capped(Path::new(from), cap) {
            Ok((bytes, meta)) => (bytes, Some(meta.mode)),
            // A changed file the tree lacks starts empty, as a plain
            // unified diff of a new file without `/dev/null` expects.
            Err(Beneath::NotFound) if plan.to == plan.from => (Vec::new(), None),
            Err(e) => return Err(failed(from)(e)),
        },
    };
    let at = plan
        .to
        .as_deref()
        .or(plan.from.as_deref())
        .unwrap_or_default();
    let result = match file.patch() {
        PatchKind::Text(patch) => diffy::apply_bytes(&base, patch).map_err(|e| e.to_string()),
        PatchKind::Binary(binary) => binary.apply(&base).map_err(|e| e.to_string()),
    };
    let content = result.map_err(|message| ApplyError::Apply {
        path: at.to_string(),
        message,
    })?;
    match &plan.to {
        Some(to) => {
            let mode = match file.new_mode() {
                Some(FileMode::Regular) => 0o644,
                Some(FileMode::Executable) => 0o755,
                Some(FileMode::Symlink) => {
                    // A new link: its content is its target.
                    if base_mode.is_some() || plan.from.is_some() {
                        return Err(unsupported(to, "changes of a file into a symlink"));
                    }
                    let target = std::os::unix::ffi::OsStrExt::from_bytes(&content[..]);
                    let target: &std::ffi::OsStr = target;
                    links(to, target).map_err(|refused| ApplyError::Apply {
                        path: to.clone(),
                        message: refused.0,
                    })?;
                    let (parent, leaf) = dir.create_parents(Path::new(to)).map_err(failed(to))?;
                    parent.replace_symlink(leaf, target).map_err(failed(to))?;
                    applied.written.push(to.clone());
                    return Ok(());
                }
                Some(FileMode::Gitlink) => return Err(unsupported(to, "submodules")),
                None => base_mode.unwrap_or(NEW_FILE_MODE),
            };
            let (parent, leaf) = dir.create_parents(Path::new(to)).map_err(failed(to))?;
            parent
                .replace_file(leaf, &content, mode)
                .map_err(failed(to))?;
            applied.written.push(to.clone());
        }
        None if !content.is_empty() => {
            return Err(ApplyError::Apply {
                path: at.to_string(),
                message: "the file to delete holds more than the patch removes".into(),
            });
        }
        None => {}
    }
    if let Some(from) = &plan.from
        && (plan.to.is_none() || (plan.moves && plan.to.as_ref() != Some(from)))
    {
        let (parent, leaf) = dir.open_parent(Path::new(from)).map_err(failed(from))?;
        parent.remove_entry(leaf).map_err(failed(from))?;
        applied.deleted.push(from.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    const CAP: u64 = 1 << 20;

    fn tree() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("src")).unwrap();
        fs::write(tmp.path().join("src/lib.rs"), "a\nb\n").unwrap();
        fs::write(tmp.path().join("old.txt"), "gone\n").unwrap();
        tmp
    }

    fn all(_: &str) -> bool {
        true
    }

    #[test]
    fn git_sections_create_delete_rename_and_change_modes() {
        let tmp = tree();
        let patch = concat!(
            "diff --git a/pkg/__init__.py b/pkg/__init__.py\n",
            "new file mode 100644\n",
            "index 0000000..e69de29\n",
            "diff --git a/old.txt b/old.txt\n",
            "deleted file mode 100644\n",
            "index 1111111..0000000\n",
            "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n",
            "diff --git a/src/lib.rs b/src/main.rs\n",
            "similarity index 50%\nrename from src/lib.rs\nrename to src/main.rs\n",
            "--- a/src/lib.rs\n+++ b/src/main.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
            "diff --git a/run.sh b/run.sh\n",
            "new file mode 100755\n",
            "--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1 @@\n+echo\n\\ No newline at end of file\n",
        );
        let applied = apply_to_tree(tmp.path(), patch.as_bytes(), &all, CAP).unwrap();
        assert_eq!(
            applied.written,
            ["pkg/__init__.py", "src/main.rs", "run.sh"]
        );
        assert_eq!(applied.deleted, ["old.txt", "src/lib.rs"]);
        let root = tmp.path();
        assert_eq!(fs::read(root.join("pkg/__init__.py")).unwrap(), b"");
        assert!(!root.join("old.txt").exists() && !root.join("src/lib.rs").exists());
        assert_eq!(
            fs::read_to_string(root.join("src/main.rs")).unwrap(),
            "a\nc\n"
        );
        assert_eq!(fs::read(root.join("run.sh")).unwrap(), b"echo");
        let mode = fs::metadata(root.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    #[test]
    fn a_plain_unified_diff_still_applies() {
        let tmp = tree();
        let patch = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n\
                     --- /dev/null\n+++ b/src/new.rs\n@@ -0,0 +1 @@\n+x\n";
        let applied = apply_to_tree(tmp.path(), patch.as_bytes(), &all, CAP).unwrap();
        assert_eq!(applied.written, ["src/lib.rs", "src/new.rs"]);
        assert_eq!(
            fs::read_to_string(tmp.path().join("src/lib.rs")).unwrap(),
            "a\nB\n"
        );
    }

    #[test]
    fn paths_outside_the_allowed_set_or_the_tree_are_refused_before_any_write() {
        let tmp = tree();
        let patch = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n\
                     --- a/tests/t.rs\n+++ b/tests/t.rs\n@@ -1 +1 @@\n-x\n+y\n";
        let src_only = |p: &str| p.starts_with("src/");
        assert!(matches!(
            apply_to_tree(tmp.path(), patch.as_bytes(), &src_only, CAP),
            Err(ApplyError::NotAllowed(p)) if p == "tests/t.rs"
        ));
        assert_eq!(
            fs::read_to_string(tmp.path().join("src/lib.rs")).unwrap(),
            "a\nb\n"
        );
        for bad in ["../x", ".git/config", "/etc/passwd"] {
            let patch = format!("--- a/{bad}\n+++ b/{bad}\n@@ -1 +1 @@\n-x\n+y\n");
            assert!(
                matches!(
                    apply_to_tree(tmp.path(), patch.as_bytes(), &all, CAP),
                    Err(ApplyError::BadPath(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn applying_never_writes_through_a_symlink() {
        let tmp = tree();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("x.rs"), "a\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.rs"), tmp.path().join("src/x.rs"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("src/dir")).unwrap();
        let modify = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(matches!(
            apply_to_tree(tmp.path(), modify.as_bytes(), &all, CAP),
            Err(ApplyError::Apply { .. })
        ));
        let through_dir = "--- /dev/null\n+++ b/src/dir/new.rs\n@@ -0,0 +1 @@\n+b\n";
        assert!(matches!(
            apply_to_tree(tmp.path(), through_dir.as_bytes(), &all, CAP),
            Err(ApplyError::Apply { .. })
        ));
        // A created file replaces a symlink at its name.
        let create = "--- /dev/null\n+++ b/src/x.rs\n@@ -0,0 +1 @@\n+b\n";
        let applied = apply_to_tree(tmp.path(), create.as_bytes(), &all, CAP).unwrap();
        assert_eq!(applied.written, ["src/x.rs"]);
        assert_eq!(
            fs::read_to_string(tmp.path().join("src/x.rs")).unwrap(),
            "b\n"
        );
        assert_eq!(
            fs::read_to_string(outside.path().join("x.rs")).unwrap(),
            "a\n"
        );
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_deletion_that_does_not_match_the_file_is_refused() {
        let tmp = tree();
        let patch = "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n\
                     --- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-other\n";
        assert!(matches!(
            apply_to_tree(tmp.path(), patch.as_bytes(), &all, CAP),
            Err(ApplyError::Apply { .. })
        ));
        assert!(tmp.path().join("old.txt").exists());
    }

    #[test]
    fn nothing_to_apply_is_no_change() {
        let tmp = tree();
        assert_eq!(
            apply_to_tree(tmp.path(), b"  \n", &all, CAP).unwrap(),
            Applied::default()
        );
        assert!(matches!(
            apply_to_tree(tmp.path(), b"not a patch\n", &all, CAP),
            Err(ApplyError::Parse(_))
        ));
    }

    #[test]
    fn a_created_link_is_made_only_where_the_rule_allows_it() {
        let tmp = tree();
        let patch = "diff --git a/src/alias.rs b/src/alias.rs\n\
            new file mode 120000\n\
            index 0000000..1111111\n\
            --- /dev/null\n\
            +++ b/src/alias.rs\n\
            @@ -0,0 +1 @@\n\
            +lib.rs\n\
            \\ No newline at end of file\n";
        // By default a link is refused, and nothing is written.
        let refused = apply_to_tree(tmp.path(), patch.as_bytes(), &all, CAP);
        assert!(
            matches!(&refused, Err(ApplyError::Apply { message, .. }) if message.contains("symlinks")),
            "{refused:?}"
        );
        assert!(tmp.path().join("src/alias.rs").symlink_metadata().is_err());
        // The caller's rule is asked with the path and the target.
        let no =
            |_: &str, t: &std::ffi::OsStr| Err(LinkRefused(format!("not {}", t.to_string_lossy())));
        assert!(matches!(
            apply_with_links(tmp.path(), patch.as_bytes(), &all, &no, CAP),
            Err(ApplyError::Apply { message, .. }) if message == "not lib.rs"
        ));
        let yes = |_: &str, _: &std::ffi::OsStr| Ok(());
        let applied = apply_with_links(tmp.path(), patch.as_bytes(), &all, &yes, CAP).unwrap();
        assert_eq!(applied.written, ["src/alias.rs"]);
        assert_eq!(
            fs::read_link(tmp.path().join("src/alias.rs")).unwrap(),
            Path::new("lib.rs")
        );
    }
}
