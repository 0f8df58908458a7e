//! The mount layer: each command sees a root file system that holds only
//! what its grants name.
//!
//! The root is a *skeleton*: a runner-owned host directory (one per user,
//! `$TMPDIR/.agent-runtime-root-<uid>`, mode 0700) holding nothing but
//! empty mount points for the paths commands may be granted, and the links
//! `/bin -> usr/bin` and `/dev/fd -> /proc/self/fd`. In a private mount
//! namespace the child binds the skeleton onto itself read-only, binds
//! every grant onto its own path (read-only unless writable), mounts a
//! fresh `/proc` for the command's PID namespace (its `keys` and `key-users`
//! hidden under `/dev/null`) and a fresh tmpfs at
//! [`SCRATCH`] for its `HOME` and `TMPDIR`, and pivots into it. Everything
//! else of the host — `/run`, `/tmp`, other workspaces, the data dir, the
//! unix sockets of host daemons — does not exist for the command, so it
//! cannot be opened, listed or `connect()`ed to, whatever Landlock says.
//!
//! Mount points live in the skeleton (made once, by the runner), not in a
//! per-command tmpfs, so the Landlock ruleset can name skeleton
//! directories above the mounts the child makes (Landlock ignores rules on
//! a mount point itself): see [`MountPlan::landlock_grants`].
//! The plan is built in the runner (paths resolved, every string
//! allocated); the child only walks it with system calls. Sources are
//! bound by canonical path: system and toolchain directories, and the
//! workspace, whose parents belong to the runner.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::error::SandboxError;
use super::sys;

/// Where a command's private `HOME` and `TMPDIR` live inside its root.
pub const SCRATCH: &str = "/tmp/scratch";

/// Files of `/proc` a command reads as empty, as under Docker: the kernel
/// keys every process of the user may view (their descriptions, such as
/// keys a host shell added), and the key quotas per user.
const MASKED_PROC: [&str; 2] = ["keys", "key-users"];

/// One grant to show inside the command's root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct MountGrant {
    pub path: PathBuf,
    pub writable: bool,
}

#[derive(Debug)]
struct Bind {
    source: CString,
    target: CString,
    read_only: bool,
    devices: bool,
}

/// Everything the child needs to build the root, ready to use.
#[derive(Debug)]
pub(crate) struct MountPlan {
    skeleton: CString,
    binds: Vec<Bind>,
    proc_dir: CString,
    /// Files of the fresh `/proc` hidden under `/dev/null`.
    masked: Vec<CString>,
    /// The scratch tmpfs and its `home` and `tmp` directories.
    scratch: Option<(CString, CString, CString)>,
}

fn setup(reason: String) -> SandboxError {
    SandboxError::Setup {
        layer: "mntns",
        reason,
    }
}

fn cstring(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| setup(format!("{} holds a NUL byte", path.display())))
}

fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Where the skeleton goes instead of `$TMPDIR`, when set before the
/// first command.
static SKELETON_BASE: OnceLock<PathBuf> = OnceLock::new();

/// Puts this process's skeleton under `dir` instead of `$TMPDIR` (e.g. a
/// scratch directory removed when the process is done). Only the first
/// call before the first sandboxed command counts; returns whether it did.
pub fn set_skeleton_base(dir: &Path) -> bool {
    SKELETON_BASE.set(dir.to_path_buf()).is_ok()
}

/// The skeleton directory, created and checked once per process: a
/// directory (not a link) owned by this user and writable by no one else.
pub(crate) fn skeleton() -> Result<&'static Path, String> {
    static SKELETON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
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
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o022 != 0 {
                return Err(format!(
                    "{} is not a private directory of this user; remove it",
                    dir.display()
                ));
            }
            for (name, target) in [
                ("dev/fd", "/proc/self/fd"),
                ("dev/stdin", "/proc/self/fd/0"),
                ("dev/stdout", "/proc/self/fd/1"),
                ("dev/stderr", "/proc/self/fd/2"),
            ] {
                make_link(&dir.join(name), Path::new(target))
                    .map_err(|e| format!("cannot prepare {}: {e}", dir.display()))?;
            }
            for name in ["proc", "tmp/scratch"] {
                make_dirs(&dir.join(name))
                    .map_err(|e| format!("cannot prepare {}: {e}", dir.display()))?;
            }
            Ok(dir)
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

/// Paths of the skeleton known to exist, so each is made only once.
fn known() -> &'static Mutex<BTreeSet<PathBuf>> {
    static KNOWN: OnceLock<Mutex<BTreeSet<PathBuf>>> = OnceLock::new();
    KNOWN.get_or_init(|| Mutex::new(BTreeSet::new()))
}

fn make_dirs(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(path)
}

fn make_link(link: &Path, target: &Path) -> std::io::Result<()> {
    if let Some(parent) = link.parent() {
        make_dirs(parent)?;
    }
    match std::os::unix::fs::symlink(target, link) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// Makes the mount point for `path` in the skeleton: a directory, an
/// empty file, or (for a host link such as `/bin`) the same link.
fn mount_point(skeleton: &Path, path: &Path, kind: PointKind) -> Result<(), SandboxError> {
    let target = under(skeleton, path);
    let mut known = known()
        .lock()
        .map_err(|_| setup("a lock was poisoned".into()))?;
    if known.contains(&target) {
        return Ok(());
    }
    let made =
        match &kind {
            PointKind::Dir => make_dirs(&target),
            PointKind::File => target.parent().map_or(Ok(()), make_dirs).and_then(|()| {
                match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)
                {
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
                    _ => Ok(()),
                }
            }),
            PointKind::Link(to) => make_link(&target, to),
        };
    made.map_err(|e| {
        setup(format!(
            "cannot make the mount point {}: {e}",
            target.display()
        ))
    })?;
    known.insert(target);
    Ok(())
}

enum PointKind {
    Dir,
    File,
    Link(PathBuf),
}

impl MountPlan {
    /// Plans a root holding `grants`; with `scratch`, a fresh tmpfs at
    /// [`SCRATCH`] too. Grants that do not exist are skipped; `/proc` is
    /// always a fresh mount, never the host's.
    pub(crate) fn new(grants: &[MountGrant], scratch: bool) -> Result<MountPlan, SandboxError> {
        let skeleton = skeleton().map_err(setup)?;
        // Canonical grants, parents first; a grant nested in an earlier
        // one with the same rights is already visible through it.
        let mut resolved: Vec<(PathBuf, bool)> = Vec::new();
        for grant in grants {
            if grant.path == Path::new("/proc") {
                continue;
            }
            if let Ok(meta) = grant.path.symlink_metadata()
                && meta.file_type().is_symlink()
                && let Ok(to) = std::fs::read_link(&grant.path)
            {
                mount_point(skeleton, &grant.path, PointKind::Link(to))?;
            }
            let Ok(real) = grant.path.canonicalize() else {
                continue;
            };
            if real == Path::new("/")
                || Path::new(SCRATCH).starts_with(&real)
                || real.starts_with(SCRATCH)
            {
                return Err(setup(format!(
                    "cannot grant {} inside a private root",
                    real.display()
                )));
            }
            match resolved.iter_mut().find(|(p, _)| *p == real) {
                Some(existing) => existing.1 |= grant.writable,
                None => resolved.push((real, grant.writable)),
            }
        }
        resolved.sort();
        let mut binds = Vec::new();
        let mut bound: Vec<(PathBuf, bool)> = Vec::new();
        for (path, writable) in resolved {
            let inside = bound
                .iter()
                .filter(|(b, _)| path.starts_with(b))
                .max_by_key(|(b, _)| b.as_os_str().len());
            match inside {
                Some((_, rights)) if *rights == writable => continue,
                // The mount point exists inside the outer grant.
                Some(_) => {}
                None => mount_point(
                    skeleton,
                    &path,
                    if path.is_dir() {
                        PointKind::Dir
                    } else {
                        PointKind::File
                    },
                )?,
            }
            binds.push(Bind {
                source: cstring(&path)?,
                target: cstring(&under(skeleton, &path))?,
                read_only: !writable,
                devices: path.starts_with("/dev"),
            });
            bound.push((path, writable));
        }
        let scratch_dir = under(skeleton, Path::new(SCRATCH));
        Ok(MountPlan {
            skeleton: cstring(skeleton)?,
            binds,
            proc_dir: cstring(&skeleton.join("proc"))?,
            masked: MASKED_PROC
                .iter()
                .map(|name| cstring(&skeleton.join("proc").join(name)))
                .collect::<Result<_, _>>()?,
            scratch: if scratch {
                Some((
                    cstring(&scratch_dir)?,
                    cstring(&scratch_dir.join("home"))?,
                    cstring(&scratch_dir.join("tmp"))?,
                ))
            } else {
                None
            },
        })
    }

    /// The skeleton directories a Landlock ruleset must grant for the
    /// mounts the child makes (rules on a mount point itself are ignored,
    /// so they go on its parent): the skeleton's root, read (the fresh
    /// `/proc`, and every grant, which is all the root holds), and the
    /// parent of [`SCRATCH`], write (the scratch tmpfs; anything else
    /// there is on the read-only skeleton or a read-only bind).
    pub(crate) fn landlock_grants() -> Option<(PathBuf, PathBuf)> {
        let skeleton = skeleton().ok()?;
        let scratch = under(skeleton, Path::new(SCRATCH));
        Some((skeleton.to_path_buf(), scratch.parent()?.to_path_buf()))
    }

    /// Builds the root and enters it, then changes to `cwd`. Runs in the
    /// child (the PID namespace's first process, so the fresh `/proc` is
    /// its own), between fork and exec: system calls only.
    pub(crate) fn apply(&self, cwd: &CString) -> std::io::Result<()> {
        // Nothing done here may reach the host's mount table.
        sys::mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
        sys::mount(
            Some(&self.skeleton),
            &self.skeleton,
            None,
            libc::MS_BIND,
            None,
        )?;
        sys::make_read_only(&self.skeleton, true)?;
        for bind in &self.binds {
            sys::mount(
                Some(&bind.source),
                &bind.target,
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )?;
            if bind.read_only {
                sys::make_read_only(&bind.target, !bind.devices)?;
            }
        }
        sys::mount(
            Some(c"proc"),
            &self.proc_dir,
            Some(c"proc"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            None,
        )?;
        for file in &self.masked {
            match sys::mount(Some(c"/dev/null"), file, None, libc::MS_BIND, None) {
                // A kernel without keyrings has no such file to hide.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                other => other?,
            }
        }
        if let Some((dir, home, tmp)) = &self.scratch {
            sys::mount(
                Some(c"tmpfs"),
                dir,
                Some(c"tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV,
                Some(c"mode=0755"),
            )?;
            sys::mkdir(home)?;
            sys::mkdir(tmp)?;
        }
        sys::pivot_into(&self.skeleton)?;
        sys::chdir(cwd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(path: &str, writable: bool) -> MountGrant {
        MountGrant {
            path: PathBuf::from(path),
            writable,
        }
    }

    #[test]
    fn nested_grants_with_the_same_rights_are_bound_once() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        let plan = MountPlan::new(
            &[
                grant("/usr", false),
                grant("/usr/bin", false),
                grant(ws.to_str().unwrap(), true),
                grant(ws.join("src").to_str().unwrap(), true),
                grant(ws.join("src").to_str().unwrap(), false),
                grant("/proc", false),
                grant("/no/such/path", false),
            ],
            true,
        )
        .unwrap();
        assert_eq!(plan.binds.len(), 2, "{:?}", plan.binds);
        assert!(plan.binds.iter().any(|b| b.read_only));
        let skeleton = skeleton().unwrap();
        assert!(under(skeleton, &ws.canonicalize().unwrap()).is_dir());
    }

    #[test]
    fn the_root_itself_cannot_be_granted() {
        assert!(MountPlan::new(&[grant("/", false)], false).is_err());
    }
}
