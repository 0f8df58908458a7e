//! The skeleton every command's root is built on: a runner-owned host
//! directory (one per user, `$TMPDIR/.agent-runtime-root-<uid>`, mode
//! 0700) holding nothing but empty mount points for the paths commands
//! may be granted, and links: `/dev/fd -> /proc/self/fd`, and the links a
//! granted path goes through on the host (`/bin -> usr/bin`,
//! `$CARGO_HOME/bin -> /elsewhere/bin`), recreated so the path a command
//! is given resolves inside its root as it does outside.
//!
//! Everything here is made by the runner, never by a command, and is
//! made without following a link already in the skeleton: a host path
//! that changed type since (a link that became a directory) replaces the
//! stale entry instead of leading the runner out of the skeleton.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where the skeleton goes instead of `$TMPDIR`, when set before the
/// first command.
static SKELETON_BASE: OnceLock<PathBuf> = OnceLock::new();

/// Puts this process's skeleton under `dir` instead of `$TMPDIR` (e.g. a
/// scratch directory removed when the process is done). Only the first
/// call before the first sandboxed command counts; returns whether it did.
pub fn set_skeleton_base(dir: &Path) -> bool {
    SKELETON_BASE.set(dir.to_path_buf()).is_ok()
}

/// `path` (absolute, on the host) inside `root`.
pub(crate) fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Why the skeleton, or a mount point in it, cannot be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SkeletonError {
    #[error("cannot create {}: {source}", .dir.display())]
    Create {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a private directory of this user; remove it", .dir.display())]
    NotPrivate { dir: PathBuf },
    #[error("cannot prepare {}: {source}", .dir.display())]
    Prepare {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("a lock was poisoned")]
    Poisoned,
    #[error("cannot make the mount point {}: {source}", .target.display())]
    MountPoint {
        target: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The skeleton directory, created and checked once per process: a
/// directory (not a link) owned by this user and writable by no one else.
pub(crate) fn skeleton() -> Result<&'static Path, &'static SkeletonError> {
    static SKELETON: OnceLock<Result<PathBuf, SkeletonError>> = OnceLock::new();
    SKELETON
        .get_or_init(|| {
            let uid = nix::unistd::geteuid().as_raw();
            let base = SKELETON_BASE
                .get()
                .cloned()
                .unwrap_or_else(std::env::temp_dir);
            let dir = base.join(format!(".agent-runtime-root-{uid}"));
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
            let meta = dir
                .symlink_metadata()
                .map_err(|source| SkeletonError::Create {
                    dir: dir.clone(),
                    source,
                })?;
            if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o022 != 0 {
                return Err(SkeletonError::NotPrivate { dir });
            }
            let prepare = |source| SkeletonError::Prepare {
                dir: dir.clone(),
                source,
            };
            for (name, target) in [
                ("/dev/fd", "/proc/self/fd"),
                ("/dev/stdin", "/proc/self/fd/0"),
                ("/dev/stdout", "/proc/self/fd/1"),
                ("/dev/stderr", "/proc/self/fd/2"),
            ] {
                make(&dir, Path::new(name), &PointKind::Link(target.into())).map_err(prepare)?;
            }
            for name in ["/proc", "/tmp/scratch"] {
                make(&dir, Path::new(name), &PointKind::Dir).map_err(prepare)?;
            }
            Ok(dir)
        })
        .as_ref()
        .map(PathBuf::as_path)
}

/// What stands at a path of the skeleton.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PointKind {
    Dir,
    /// An empty file, to bind a file onto.
    File,
    /// A link holding this target, as the host's link at that path does.
    Link(PathBuf),
}

/// Paths of the skeleton made by this process, so each is made only once.
fn known() -> &'static Mutex<BTreeMap<PathBuf, PointKind>> {
    static KNOWN: OnceLock<Mutex<BTreeMap<PathBuf, PointKind>>> = OnceLock::new();
    KNOWN.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Makes `path` (a host path) in `skeleton` as `kind`; returns the
/// skeleton path. Made once per process while the kind stays the same.
pub(crate) fn mount_point(
    skeleton: &Path,
    path: &Path,
    kind: PointKind,
) -> Result<PathBuf, SkeletonError> {
    let target = under(skeleton, path);
    let mut known = known().lock().map_err(|_| SkeletonError::Poisoned)?;
    if known.get(&target) == Some(&kind) {
        return Ok(target);
    }
    make(skeleton, path, &kind).map_err(|source| SkeletonError::MountPoint {
        target: target.clone(),
        source,
    })?;
    known.insert(target.clone(), kind);
    Ok(target)
}

/// Makes `path`'s parents as real directories and `path` as `kind`,
/// replacing whatever stale entry of another kind stands in the way.
fn make(skeleton: &Path, path: &Path, kind: &PointKind) -> std::io::Result<()> {
    let target = under(skeleton, path);
    let mut at = skeleton.to_path_buf();
    let relative = target.strip_prefix(skeleton).unwrap_or(&target);
    let mut parts = relative.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        let last = parts.peek().is_none();
        let want = if last { kind } else { &PointKind::Dir };
        let existing = match at.symlink_metadata() {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(meta) = existing {
            let fits = match want {
                PointKind::Dir => meta.is_dir(),
                PointKind::File => meta.is_file(),
                PointKind::Link(to) => {
                    meta.file_type().is_symlink() && std::fs::read_link(&at).is_ok_and(|t| t == *to)
                }
            };
            if fits {
                continue;
            }
            // A stale mount point or link: empty by construction (rmdir
            // refuses anything else).
            if meta.is_dir() {
                std::fs::remove_dir(&at)?;
            } else {
                std::fs::remove_file(&at)?;
            }
        }
        let made = match want {
            PointKind::Dir => std::fs::DirBuilder::new().mode(0o755).create(&at),
            PointKind::File => std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&at)
                .map(drop),
            PointKind::Link(to) => std::os::unix::fs::symlink(to, &at),
        };
        match made {
            // Another runner of this user made the same entry meanwhile.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            other => other?,
        }
    }
    Ok(())
}

/// The links met resolving `path` from `/`, each with the target it
/// holds, in the order the kernel meets them (at most
/// [`MAX_LINKS`](super::path_walk::MAX_LINKS)). A component that does not
/// exist ends the walk.
pub(crate) fn links_on(path: &Path) -> Vec<(PathBuf, PathBuf)> {
    super::path_walk::walk(path)
        .steps
        .into_iter()
        .take_while(|step| !step.missing)
        .filter_map(|step| Some((step.dir.join(&step.name), step.link?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_on_a_path_are_found_in_order_through_relative_and_absolute_targets() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/bin")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("abs")).unwrap();
        std::fs::create_dir(root.join("home")).unwrap();
        std::os::unix::fs::symlink("../abs/bin", root.join("home/bin")).unwrap();
        let links = links_on(&root.join("home/bin"));
        assert_eq!(
            links,
            [
                (root.join("home/bin"), PathBuf::from("../abs/bin")),
                (root.join("abs"), root.join("real")),
            ]
        );
        assert!(links_on(&root.join("real/bin")).is_empty());
        assert!(links_on(&root.join("missing/x")).is_empty());
    }

    #[test]
    fn a_stale_entry_of_another_kind_is_replaced_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let skeleton = tmp.path().join("skeleton");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&skeleton).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        // A link left where a directory now belongs, pointing out.
        make(
            &skeleton,
            Path::new("/opt/tool"),
            &PointKind::Link(outside.clone()),
        )
        .unwrap();
        make(&skeleton, Path::new("/opt/tool/bin"), &PointKind::Dir).unwrap();
        assert!(skeleton.join("opt/tool/bin").is_dir());
        assert!(!skeleton.join("opt/tool").is_symlink());
        assert!(!outside.join("bin").exists(), "followed the stale link");
        // And an empty directory where a link now belongs.
        make(&skeleton, Path::new("/opt/link"), &PointKind::Dir).unwrap();
        make(
            &skeleton,
            Path::new("/opt/link"),
            &PointKind::Link("tool".into()),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_link(skeleton.join("opt/link")).unwrap(),
            PathBuf::from("tool")
        );
    }
}
