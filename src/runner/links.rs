//! Which symlinks a patch carries: a link the agent made (or changed) in
//! the workspace is carried, as git's mode 120000, only when its target is
//! relative and, resolved lexically from the link's directory (no link
//! followed), names a regular file inside the tree that no other link
//! leads to and that the check copy will have (a file of the source, or an
//! editable one the patch carries). A link at a harness file's or a
//! startup file's name, at or above where the hidden test files are laid,
//! to a directory, absolute, or leaving the tree is a rejection naming it.
//!
//! The pure half ([`lexical`]) is the lexical rule, which laying the copy
//! on the check copy and applying an oracle's patch check too; [`check_target`] asks
//! the workspace, through [`crate::beneath`], never following a link.

use std::ffi::OsStr;
use std::path::Path;

use crate::beneath::{Dir, Error as Beneath, Kind};
use crate::gitdiff::LinkRefused;

/// Where `target`, written in the link at `rel` (a tree-relative path),
/// leads, as a tree-relative path resolved lexically: `.` dropped, `..`
/// taking back one name. Why not, in words, when it is not UTF-8, empty,
/// absolute, or leaves the tree (or names the tree itself).
fn resolve(rel: &str, target: &OsStr) -> Result<String, LinkRefused> {
    let Some(text) = target.to_str() else {
        return Err(LinkRefused("is a symlink whose target is not UTF-8".into()));
    };
    if text.is_empty() {
        return Err(LinkRefused("is a symlink with an empty target".into()));
    }
    if text.starts_with('/') {
        return Err(LinkRefused(format!(
            "is a symlink to the absolute path {text}; a patch carries only links whose relative target stays inside the tree"
        )));
    }
    let mut names: Vec<&str> = rel.split('/').collect();
    names.pop();
    for name in text.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                if names.pop().is_none() {
                    return Err(LinkRefused(format!(
                        "is a symlink to {text}, which leaves the tree; a patch carries only links whose target stays inside it"
                    )));
                }
            }
            name => names.push(name),
        }
    }
    if names.is_empty() {
        return Err(LinkRefused(format!(
            "is a symlink to {text}, the tree's root, a directory; a patch carries only links to regular files"
        )));
    }
    Ok(names.join("/"))
}

/// The lexical rule, the same wherever a link is made: where the link at
/// `rel` to `target` leads ([`resolve`]), when it may be there at all
/// ([`check_place`]).
pub(crate) fn lexical(rel: &str, target: &OsStr) -> Result<String, LinkRefused> {
    let resolved = resolve(rel, target)?;
    check_place(rel)?;
    Ok(resolved)
}

/// Why the link at `rel` may not be where it is: a harness file's name or
/// a file an interpreter runs at startup.
fn check_place(rel: &str) -> Result<(), LinkRefused> {
    if crate::lang::is_harness_file(rel) {
        return Err(LinkRefused(
            "is a symlink at a test harness file's name; a patch never carries one there".into(),
        ));
    }
    if crate::lang::is_startup_file(rel) {
        return Err(LinkRefused(
            "is a symlink at the name of a file an interpreter runs at startup; a patch never carries one there".into(),
        ));
    }
    Ok(())
}

/// Whether the link at `rel` to `target` (resolved: `resolved`) leads, in
/// `tree`, to a regular file reached through no link.
fn check_in(tree: &Dir, target: &str, resolved: &str) -> Result<(), LinkRefused> {
    match tree.kind(Path::new(resolved)) {
        Ok(Kind::File) => Ok(()),
        Ok(Kind::Dir) => Err(LinkRefused(format!(
            "is a symlink to {target}, a directory; a patch carries only links to regular files"
        ))),
        Ok(Kind::Symlink) | Err(Beneath::Symlink) => Err(LinkRefused(format!(
            "is a symlink to {target}, which is reached through another link; a patch carries only links to regular files no link leads to"
        ))),
        Ok(other) => Err(LinkRefused(format!(
            "is a symlink to {target}, which is {}; a patch carries only links to regular files",
            other.describe()
        ))),
        Err(Beneath::NotFound) => Err(LinkRefused(format!(
            "is a symlink to {target}, which does not exist ({resolved})"
        ))),
        Err(e) => Err(LinkRefused(format!("is a symlink to {target}: {e}"))),
    }
}

/// The workspace's side: the target is a regular file there, reached
/// through no link, and the check copy will have it (`carried`: the
/// patch carries that path, or the source has it as a regular file).
pub(crate) fn check_target(
    workspace: &Dir,
    source: &Dir,
    target: &str,
    resolved: &str,
    carried: bool,
) -> Result<(), LinkRefused> {
    check_in(workspace, target, resolved)?;
    if carried || matches!(source.kind(Path::new(resolved)), Ok(Kind::File)) {
        return Ok(());
    }
    Err(LinkRefused(format!(
        "is a symlink to {target}, a file the check copy will not have (not in the source, and not an editable file the patch carries)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rel: &str, target: &str) -> Result<String, LinkRefused> {
        resolve(rel, OsStr::new(target))
    }

    #[test]
    fn a_relative_target_resolves_lexically_from_the_links_directory() {
        assert_eq!(at("src/alias.rs", "lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(at("src/alias.rs", "./lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(at("src/a/b.rs", "../lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(at("alias.py", "pkg//mod.py").unwrap(), "pkg/mod.py");
        assert_eq!(at("a/b/c", "../../x/../y").unwrap(), "y");
    }

    #[test]
    fn absolute_escaping_and_root_targets_are_refused() {
        assert!(
            at("src/alias.rs", "/etc/passwd")
                .unwrap_err()
                .0
                .contains("absolute path /etc/passwd")
        );
        assert!(
            at("src/alias.rs", "../../etc/passwd")
                .unwrap_err()
                .0
                .contains("leaves the tree")
        );
        assert!(at("alias", "..").unwrap_err().0.contains("leaves the tree"));
        // Back in the tree after leaving it is still leaving it.
        assert!(
            at("src/alias.rs", "../../src/lib.rs")
                .unwrap_err()
                .0
                .contains("leaves the tree")
        );
        assert!(
            at("src/alias", "..")
                .unwrap_err()
                .0
                .contains("the tree's root")
        );
        assert!(at("alias", "").unwrap_err().0.contains("empty target"));
        use std::os::unix::ffi::OsStrExt;
        assert!(
            resolve("a", OsStr::from_bytes(b"\xff"))
                .unwrap_err()
                .0
                .contains("not UTF-8")
        );
    }

    #[test]
    fn harness_and_startup_names_take_no_link() {
        assert!(check_place("conftest.py").is_err());
        assert!(check_place("tests/conftest.py").is_err());
        assert!(check_place("sitecustomize.py").is_err());
        assert!(check_place("src/alias.rs").is_ok());
    }
}
