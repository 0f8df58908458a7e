//! A path walked as the kernel resolves it, from `/`: each directory entry
//! it goes through, and for a link the steps of its target (relative to
//! the link's directory) before the rest. Both the skeleton (the links a
//! granted path goes through, recreated inside the root) and the granted
//! paths' watcher (every entry whose change could make a path name
//! another file) read their answer from one walk.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The most links followed resolving one path (the kernel's limit).
pub(crate) const MAX_LINKS: usize = 40;

/// One entry the walk went through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    /// The directory reached so far.
    pub dir: PathBuf,
    /// The entry looked up in it.
    pub name: OsString,
    /// What the entry holds, when it is a link (followed next).
    pub link: Option<PathBuf>,
    /// The entry is not there (or could not be read); the walk goes on
    /// as if it were a directory, so later steps are missing too.
    pub missing: bool,
}

/// A whole walk.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// Every entry, in the order the kernel meets them.
    pub steps: Vec<Step>,
    /// It stopped at a link past [`MAX_LINKS`] (not among the steps).
    pub too_many_links: bool,
}

/// Walks `path` (a relative one from `/` too).
pub(crate) fn walk(path: &Path) -> Walk {
    let mut walk = Walk::default();
    let mut links = 0;
    // What is left to walk, the next part last.
    let mut left: Vec<PathBuf> = vec![path.to_path_buf()];
    let mut at = PathBuf::from("/");
    while let Some(next) = left.pop() {
        let mut components = next.components();
        let Some(first) = components.next() else {
            continue;
        };
        let rest: PathBuf = components.collect();
        if !rest.as_os_str().is_empty() {
            left.push(rest);
        }
        match first {
            Component::RootDir => at = PathBuf::from("/"),
            Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => {
                let here = at.join(name);
                let is_link = here
                    .symlink_metadata()
                    .map(|meta| meta.file_type().is_symlink());
                let link = match is_link {
                    Ok(true) => std::fs::read_link(&here).ok(),
                    _ => None,
                };
                let missing = match is_link {
                    Ok(true) => link.is_none(),
                    Ok(false) => false,
                    Err(_) => true,
                };
                if link.is_some() {
                    links += 1;
                    if links > MAX_LINKS {
                        walk.too_many_links = true;
                        return walk;
                    }
                }
                walk.steps.push(Step {
                    dir: at.clone(),
                    name: name.to_os_string(),
                    link: link.clone(),
                    missing,
                });
                match link {
                    // The target is walked from this directory (or the
                    // root, when absolute) before the rest.
                    Some(target) => left.push(target),
                    None => at = here,
                }
            }
        }
    }
    walk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_follows_links_goes_on_past_a_missing_entry_and_stops_at_a_loop() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real", root.join("link")).unwrap();
        let mine = |walk: &Walk| -> Vec<(PathBuf, String, bool, bool)> {
            walk.steps
                .iter()
                .filter(|s| s.dir.starts_with(&root))
                .map(|s| {
                    let name = s.name.to_string_lossy().into_owned();
                    (s.dir.clone(), name, s.link.is_some(), s.missing)
                })
                .collect()
        };
        let through = walk(&root.join("link/sub/gone/deeper"));
        assert!(!through.too_many_links);
        assert_eq!(
            mine(&through),
            [
                (root.clone(), "link".to_string(), true, false),
                (root.clone(), "real".to_string(), false, false),
                (root.join("real"), "sub".to_string(), false, false),
                (root.join("real/sub"), "gone".to_string(), false, true),
                (
                    root.join("real/sub/gone"),
                    "deeper".to_string(),
                    false,
                    true
                ),
            ]
        );
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        let looped = walk(&root.join("loop/x"));
        assert!(looped.too_many_links);
        assert_eq!(mine(&looped).len(), MAX_LINKS);
    }
}
