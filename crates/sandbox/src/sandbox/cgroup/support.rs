//! What this machine offers for command cgroups, probed once per process:
//! the layout (v1 or v2), where new cgroups go, or why there is no place.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::unistd::{AccessFlags, Pid, access};

use super::error::CgroupError;
use super::fs;
use super::layout::{self, Detected};

/// The environment variable naming a delegated cgroup v2 directory for
/// command cgroups (one the user owns, with `memory` and `pids` enabled in
/// its `cgroup.subtree_control`, or enableable because it holds no process).
pub const CGROUP_ENV: &str = "AGENT_RUNTIME_CGROUP";

/// Name prefix of a command's cgroup in each v1 hierarchy.
pub(crate) const V1_PREFIX: &str = "agent-runtime-";
/// Name prefix of a command's cgroup under the v2 parent.
pub(crate) const V2_PREFIX: &str = "cmd-";
/// The runtime-owned v2 parent, at the root of the hierarchy (root only).
const V2_OWNED: &str = "agent-runtime";
/// The leaf a runner moves itself into when its own cgroup is delegated.
const V2_RUNNER_LEAF: &str = "agent-runtime-runner";

pub(crate) const HINT: &str = "run the runtime in a delegated cgroup, e.g. \
     `systemd-run --user --scope -p Delegate=yes agent-runtime ...`, or set \
     AGENT_RUNTIME_CGROUP to a cgroup v2 directory you own with memory and pids in its \
     cgroup.subtree_control";

/// Where command cgroups go on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupSupport {
    pub(crate) kind: Kind,
    /// Said by `describe`, e.g. that `AGENT_RUNTIME_CGROUP` was ignored.
    pub(crate) note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    V1(V1Dirs),
    V2(V2Parent),
}

/// The runner's own cgroup in each v1 hierarchy; command cgroups are made
/// inside them (v1 allows processes in non-leaf cgroups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct V1Dirs {
    pub(crate) memory: PathBuf,
    pub(crate) pids: PathBuf,
    pub(crate) freezer: Option<PathBuf>,
    /// Whether `memory.memsw.limit_in_bytes` exists (swap accounting).
    pub(crate) memsw: bool,
}

/// The v2 directory command cgroups are made in, and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct V2Parent {
    pub(crate) dir: PathBuf,
    pub(crate) origin: Origin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// `AGENT_RUNTIME_CGROUP`.
    Env,
    /// The runner's own cgroup, already offering memory and pids below it.
    Own,
    /// The runner's own delegated cgroup; the runner moved into a leaf.
    Delegated,
    /// `<v2 root>/agent-runtime`, made by a root runner.
    RuntimeOwned,
    #[cfg(test)]
    Test,
}

/// The probe, run on first use.
pub fn cgroup_support() -> &'static Result<CgroupSupport, CgroupError> {
    static SUPPORT: OnceLock<Result<CgroupSupport, CgroupError>> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let support = probe()?;
        support.remove_leftovers();
        Ok(support)
    })
}

impl CgroupSupport {
    /// The layer's name in reports.
    pub fn layer_name(&self) -> crate::sandbox::Layer {
        match self.kind {
            Kind::V1(_) => crate::sandbox::Layer::CgroupV1,
            Kind::V2(_) => crate::sandbox::Layer::CgroupV2,
        }
    }

    /// One line for `doctor`: version, controllers and where cgroups go.
    pub fn describe(&self) -> String {
        let mut text = match &self.kind {
            Kind::V1(v1) => {
                let mut text = format!(
                    "cgroup v1: memory{} in {}, pids in {}",
                    if v1.memsw { " (with swap)" } else { "" },
                    v1.memory.display(),
                    v1.pids.display()
                );
                match &v1.freezer {
                    Some(dir) => text.push_str(&format!(", freezer in {}", dir.display())),
                    None => text.push_str(", no freezer (kills are repeated until empty)"),
                }
                text
            }
            Kind::V2(parent) => format!(
                "cgroup v2: memory, pids; command cgroups in {} ({})",
                parent.dir.display(),
                match parent.origin {
                    Origin::Env => "from AGENT_RUNTIME_CGROUP",
                    Origin::Own => "the runner's own cgroup",
                    Origin::Delegated =>
                        "the runner's delegated cgroup; the runner moved to a leaf",
                    Origin::RuntimeOwned => "runtime-owned",
                    #[cfg(test)]
                    Origin::Test => "test",
                }
            ),
        };
        if let Some(note) = &self.note {
            text.push_str("; ");
            text.push_str(note);
        }
        text
    }

    /// A v2 parent without controllers, for tests of the kill paths on a
    /// hybrid host's empty unified hierarchy.
    #[cfg(test)]
    pub(crate) fn v2_for_tests(dir: PathBuf) -> CgroupSupport {
        CgroupSupport {
            kind: Kind::V2(V2Parent {
                dir,
                origin: Origin::Test,
            }),
            note: None,
        }
    }

    /// Removes (rmdir only, so only empty ones) command cgroups left by
    /// runners that are no longer alive. Best effort.
    pub(crate) fn remove_leftovers(&self) {
        match &self.kind {
            Kind::V1(v1) => {
                let dirs = [Some(&v1.memory), Some(&v1.pids), v1.freezer.as_ref()];
                for dir in dirs.into_iter().flatten() {
                    remove_dead(dir, V1_PREFIX);
                }
            }
            Kind::V2(parent) => remove_dead(&parent.dir, V2_PREFIX),
        }
    }
}

fn probe() -> Result<CgroupSupport, CgroupError> {
    let read = |path: &'static str| {
        std::fs::read_to_string(path).map_err(|source| CgroupError::Read { path, source })
    };
    let detected = layout::detect(&read("/proc/self/mountinfo")?, &read("/proc/self/cgroup")?)?;
    let mut note = None;
    let kind = match detected {
        Detected::V1 {
            memory,
            pids,
            freezer,
        } => {
            for dir in [Some(&memory), Some(&pids), freezer.as_ref()]
                .into_iter()
                .flatten()
            {
                access(dir, AccessFlags::W_OK).map_err(|source| CgroupError::V1Access {
                    dir: dir.clone(),
                    source,
                })?;
            }
            let memsw = memory.join("memory.memsw.limit_in_bytes").exists();
            if std::env::var_os(CGROUP_ENV).is_some() {
                note = Some(format!(
                    "{CGROUP_ENV} is ignored: memory and pids are on cgroup v1"
                ));
            }
            Kind::V1(V1Dirs {
                memory,
                pids,
                freezer,
                memsw,
            })
        }
        Detected::V2 { mount, own } => {
            let env = std::env::var_os(CGROUP_ENV).map(PathBuf::from);
            Kind::V2(v2_parent(&mount, &own, env)?)
        }
    };
    Ok(CgroupSupport { kind, note })
}

/// The v2 parent, in order: `AGENT_RUNTIME_CGROUP`; the runner's own
/// cgroup if memory and pids are enabled below it; the runner's own cgroup
/// when it is delegated to this (non-root) user and the runner is its only
/// process (the runner then moves into a leaf, as the no-internal-process
/// rule demands); for root, `<root>/agent-runtime`.
fn v2_parent(mount: &Path, own: &Path, env: Option<PathBuf>) -> Result<V2Parent, CgroupError> {
    if let Some(dir) = env {
        if !dir.is_absolute() {
            return Err(CgroupError::EnvNotAbsolute { dir });
        }
        if let Err(reason) = enable_controllers(&dir) {
            return Err(CgroupError::EnvParent {
                dir,
                source: Box::new(reason),
            });
        }
        return Ok(V2Parent {
            dir,
            origin: Origin::Env,
        });
    }
    if missing_controllers(own, "cgroup.subtree_control").is_empty() {
        return Ok(V2Parent {
            dir: own.to_path_buf(),
            origin: Origin::Own,
        });
    }
    let root = nix::unistd::geteuid().is_root();
    if !root && is_delegated(own) {
        return move_into_leaf(own)
            .map(|()| V2Parent {
                dir: own.to_path_buf(),
                origin: Origin::Delegated,
            })
            .map_err(v2_parent_error);
    }
    if !root {
        return Err(CgroupError::NotDelegated {
            own: own.to_path_buf(),
        });
    }
    let dir = mount.join(V2_OWNED);
    enable_controllers(mount)
        .and_then(|()| match std::fs::create_dir(&dir) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(source) => Err(CgroupError::CreateDir {
                dir: dir.clone(),
                source,
            }),
        })
        .and_then(|()| enable_controllers(&dir))
        .map_err(v2_parent_error)?;
    Ok(V2Parent {
        dir,
        origin: Origin::RuntimeOwned,
    })
}

/// Why a v2 parent could not be set up, with the hint on delegation.
fn v2_parent_error(reason: CgroupError) -> CgroupError {
    CgroupError::V2Parent {
        source: Box::new(reason),
    }
}

/// Controllers among memory and pids not listed in `dir/file`.
fn missing_controllers(dir: &Path, file: &str) -> Vec<&'static str> {
    let text = fs::read_small(&dir.join(file)).unwrap_or_default();
    ["memory", "pids"]
        .into_iter()
        .filter(|c| !text.split_whitespace().any(|word| word == *c))
        .collect()
}

/// Makes memory and pids available to sub-cgroups of `dir`, writing its
/// `cgroup.subtree_control` only when one is missing. That fails (EBUSY)
/// when `dir` holds processes, which the no-internal-process rule forbids.
fn enable_controllers(dir: &Path) -> Result<(), CgroupError> {
    if !dir.join("cgroup.controllers").exists() {
        return Err(CgroupError::NotV2 {
            dir: dir.to_path_buf(),
        });
    }
    let unavailable = missing_controllers(dir, "cgroup.controllers");
    if !unavailable.is_empty() {
        return Err(CgroupError::Unavailable {
            missing: unavailable.join(" and "),
            dir: dir.to_path_buf(),
        });
    }
    let missing = missing_controllers(dir, "cgroup.subtree_control");
    if missing.is_empty() {
        return Ok(());
    }
    let value: Vec<String> = missing.iter().map(|c| format!("+{c}")).collect();
    fs::write_value(
        &dir.join("cgroup.subtree_control"),
        value.join(" ").as_bytes(),
    )
    .map_err(|reason| CgroupError::Enable {
        source: Box::new(reason),
    })
}

/// Whether this user may manage `dir`: it owns the directory and can write
/// its `cgroup.procs` and `cgroup.subtree_control`, as systemd's
/// `Delegate=yes` arranges; and the runner is its only process.
fn is_delegated(dir: &Path) -> bool {
    let owned =
        std::fs::metadata(dir).is_ok_and(|meta| meta.uid() == nix::unistd::geteuid().as_raw());
    let writable = ["cgroup.procs", "cgroup.subtree_control"]
        .iter()
        .all(|file| access(&dir.join(file), AccessFlags::W_OK).is_ok());
    let me = std::process::id();
    let mut others = 0usize;
    let listed = fs::for_each_pid(&dir.join("cgroup.procs"), |pid| {
        if u32::try_from(pid).ok() != Some(me) {
            others += 1;
        }
    });
    owned && writable && listed.is_ok() && others == 0
}

/// Moves the runner from `own` into `own/agent-runtime-runner`, then
/// enables memory and pids below `own`; undoes the move on failure.
fn move_into_leaf(own: &Path) -> Result<(), CgroupError> {
    let leaf = own.join(V2_RUNNER_LEAF);
    match std::fs::create_dir(&leaf) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(CgroupError::CreateDir { dir: leaf, source }),
    }
    let me = std::process::id().to_string();
    fs::write_value(&leaf.join("cgroup.procs"), me.as_bytes())?;
    enable_controllers(own).inspect_err(|_| {
        let _ = fs::write(&own.join("cgroup.procs"), me.as_bytes());
        let _ = std::fs::remove_dir(&leaf);
    })
}

/// Removes `<dir>/<prefix><pid>-<n>` directories whose runner is dead.
/// Called before this process made any, so those named with its own pid
/// are leftovers of an earlier process that had the same pid.
fn remove_dead(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| leftover_pid(name, prefix)) else {
            continue;
        };
        if u32::try_from(pid).ok() != Some(me) && is_alive(pid) {
            continue;
        }
        // Fails (EBUSY) while processes are inside: those are left alone.
        let _ = std::fs::remove_dir(entry.path());
    }
}

/// The runner pid in a command cgroup's name, `<prefix><pid>-<counter>`.
pub(crate) fn leftover_pid(name: &str, prefix: &str) -> Option<i32> {
    let (pid, counter) = name.strip_prefix(prefix)?.split_once('-')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(pid) || !all_digits(counter) {
        return None;
    }
    pid.parse().ok()
}

fn is_alive(pid: i32) -> bool {
    !matches!(
        nix::sys::signal::kill(Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_names() {
        assert_eq!(leftover_pid("agent-runtime-123-4", V1_PREFIX), Some(123));
        assert_eq!(leftover_pid("cmd-77-0", V2_PREFIX), Some(77));
        assert_eq!(leftover_pid("agent-runtime-runner", V1_PREFIX), None);
        assert_eq!(leftover_pid("cmd-77-", V2_PREFIX), None);
        assert_eq!(leftover_pid("cmd-x-1", V2_PREFIX), None);
        assert_eq!(leftover_pid("user.slice", V2_PREFIX), None);
    }

    #[test]
    fn dead_runners_lose_their_cgroups_live_ones_keep_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        for name in [
            format!("cmd-{dead}-0"),
            format!("cmd-{me}-0"),
            "cmd-1-0".to_string(),
            "other".to_string(),
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        remove_dead(dir.path(), V2_PREFIX);
        assert!(!dir.path().join(format!("cmd-{dead}-0")).exists());
        assert!(!dir.path().join(format!("cmd-{me}-0")).exists());
        assert!(dir.path().join("cmd-1-0").exists());
        assert!(dir.path().join("other").exists());
    }

    /// The cgroup2 mount, if any (the controller-less `unified` one here).
    fn cgroup2_mount() -> Option<PathBuf> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        mountinfo
            .lines()
            .filter_map(|line| line.split_once(" - "))
            .find(|(_, right)| right.starts_with("cgroup2 "))
            .and_then(|(left, _)| left.split(' ').nth(4))
            .map(PathBuf::from)
    }

    #[test]
    fn a_v2_parent_needs_a_cgroup_dir_offering_memory_and_pids() {
        let not_cgroup = tempfile::tempdir().unwrap();
        let err = v2_parent(
            Path::new("/sys/fs/cgroup"),
            Path::new("/sys/fs/cgroup"),
            Some(not_cgroup.path().to_path_buf()),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("is not a cgroup v2 directory"), "{err}");
        let err = v2_parent(Path::new("/"), Path::new("/"), Some("rel".into()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an absolute path"), "{err}");

        let Some(mount) = cgroup2_mount() else {
            return agent_runtime_test_support::skip(
                agent_runtime_test_support::Need::Layer,
                "a_v2_parent_needs_a_cgroup_dir_offering_memory_and_pids",
                "no cgroup2 mount",
            );
        };
        if !missing_controllers(&mount, "cgroup.controllers").is_empty() {
            // A hybrid host: v2 without controllers refuses, and creates nothing.
            let err = v2_parent(&mount, &mount, Some(mount.clone()))
                .unwrap_err()
                .to_string();
            assert!(err.contains("controller is not available"), "{err}");
            if nix::unistd::geteuid().is_root() {
                let err = v2_parent(&mount, &mount, None).unwrap_err().to_string();
                assert!(err.contains("controller is not available"), "{err}");
                assert!(!mount.join(V2_OWNED).exists());
            }
        }
    }
}
