//! The mount layer: each command sees a root file system that holds only
//! what its grants name.
//!
//! The root is a *skeleton* (see `skeleton.rs`): a runner-owned host
//! directory holding nothing but empty mount points for the paths commands
//! may be granted, and the links those paths go through on the host
//! (`/bin -> usr/bin`, `$CARGO_HOME/bin -> elsewhere`). In a private mount
//! namespace the child binds the skeleton onto itself read-only, binds
//! every grant onto its own path (read-only unless writable), mounts a
//! fresh `/proc` for the command's PID namespace and a fresh tmpfs at
//! [`SCRATCH`] for its `HOME` and `TMPDIR`, and pivots into it. Everything
//! else of the host — `/run`, `/tmp`, other workspaces, the data dir, the
//! unix sockets of host daemons — does not exist for the command, so it
//! cannot be opened, listed or `connect()`ed to, whatever Landlock says.
//!
//! As root the binds are made once per plan, in a mount namespace held
//! open by the runner ([`MountPlan::prepared_root`]); a command's
//! namespace is then a copy of it, and its init only mounts `/proc` and
//! the scratch ([`MountPlan::finish`]).
//!
//! Mount points live in the skeleton (made once, by the runner), not in a
//! per-command tmpfs, so the Landlock ruleset can name skeleton
//! directories above the mounts the child makes (Landlock ignores rules on
//! a mount point itself): see [`MountPlan::landlock_grants`].
//! The plan is built in the runner (paths resolved, every string
//! allocated); the child only walks it with system calls. Sources are
//! bound by canonical path: system and toolchain directories, and the
//! workspace, whose parents belong to the runner.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::SandboxError;
use super::skeleton::{PointKind, links_on, mount_point, skeleton, under};
use super::sys;

/// Where a command's private `HOME` and `TMPDIR` live inside its root.
pub const SCRATCH: &str = "/tmp/scratch";

/// One grant to show inside the command's root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct MountGrant {
    pub path: PathBuf,
    pub writable: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct Bind {
    source: CString,
    target: CString,
    read_only: bool,
    devices: bool,
}

/// Everything the child needs to build the root, ready to use. Plain
/// data, so a zygote can be handed it (see `handoff.rs`).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct MountPlan {
    skeleton: CString,
    binds: Vec<Bind>,
    /// The scratch tmpfs and its `home` and `tmp` directories, inside
    /// the root.
    scratch: Option<(CString, CString, CString)>,
}

fn setup(reason: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup {
        layer: "mntns",
        reason: reason.to_string(),
    }
}

fn cstring(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| setup(format!("{} holds a NUL byte", path.display())))
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
            // The path as given must resolve inside the root as it does
            // outside: every link on the way is recreated.
            for (link, to) in links_on(&grant.path) {
                mount_point(skeleton, &link, PointKind::Link(to)).map_err(setup)?;
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
                None => {
                    let kind = if path.is_dir() {
                        PointKind::Dir
                    } else {
                        PointKind::File
                    };
                    mount_point(skeleton, &path, kind).map_err(setup)?;
                }
            }
            binds.push(Bind {
                source: cstring(&path)?,
                target: cstring(&under(skeleton, &path))?,
                read_only: !writable,
                devices: path.starts_with("/dev"),
            });
            bound.push((path, writable));
        }
        let scratch_dir = Path::new(SCRATCH);
        Ok(MountPlan {
            skeleton: cstring(skeleton)?,
            binds,
            scratch: if scratch {
                Some((
                    cstring(scratch_dir)?,
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
    pub(crate) fn apply(&self, cwd: Option<&CString>) -> std::io::Result<()> {
        self.enter_root()?;
        self.finish(cwd)
    }

    /// In a mount namespace of its own: the binds of the root (nothing
    /// per command: no `/proc`, no scratch), then pivots into it.
    fn enter_root(&self) -> std::io::Result<()> {
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
        sys::pivot_into(&self.skeleton)
    }

    /// Inside the root (entered by [`enter_root`](Self::enter_root), or a
    /// fresh copy of a [`prepared_root`](Self::prepared_root)): the
    /// command's own `/proc` and scratch, then `cwd` (a warm init, which
    /// does not know it yet, enters none).
    pub(crate) fn finish(&self, cwd: Option<&CString>) -> std::io::Result<()> {
        // `hidepid=2`: a process the command could not trace (the
        // namespace's init, the next command's process made ahead, both
        // not dumpable) is not in its `/proc` at all, not even the list
        // of its descriptors, which the same uid could otherwise read.
        // `gid` names the group exempt from it, root's unless told: a
        // group no command is in. A kernel (or a user namespace, where
        // that group is not mapped) that refuses the options gets the
        // plain mount.
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        let proc = |options| sys::mount(Some(c"proc"), c"/proc", Some(c"proc"), flags, options);
        match proc(Some(c"hidepid=2,gid=4294967294")) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => proc(None)?,
            other => other?,
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
        match cwd {
            Some(cwd) => sys::chdir(cwd),
            None => Ok(()),
        }
    }

    /// The root built once, in a mount namespace of its own held by the
    /// descriptor returned: a command's waiter joins it and unshares a
    /// copy, whose init only adds `/proc` and the scratch
    /// ([`finish`](Self::finish)), so the binds are not made again per
    /// command. Built on a short-lived thread (the runner itself never
    /// changes namespace). `None` where it cannot be (then each command
    /// builds the whole root).
    pub(crate) fn prepared_root(&self) -> Option<OwnedFd> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    sys::unshare(libc::CLONE_FS | libc::CLONE_NEWNS).ok()?;
                    let fd = nix::fcntl::open(
                        "/proc/thread-self/ns/mnt",
                        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
                        nix::sys::stat::Mode::empty(),
                    )
                    .ok()?;
                    self.enter_root().ok()?;
                    Some(fd)
                })
                .join()
                .ok()
                .flatten()
        })
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
