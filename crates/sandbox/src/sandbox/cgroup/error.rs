//! What can fail finding where command cgroups go, and making, filling
//! and removing one.

use std::io;
use std::path::PathBuf;

use super::support::{CGROUP_ENV, HINT};

/// Why the texts of `/proc/self/mountinfo` and `/proc/self/cgroup` show
/// no usable layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("no cgroup filesystem is mounted")]
    NoMount,
    /// `missing` names the needed controllers without a v1 hierarchy.
    #[error(
        "cgroup v1 is in use but the {missing} controller is not mounted on a v1 hierarchy \
         (mixing v1 and v2 controllers is not supported)"
    )]
    V1Incomplete { missing: String },
    #[error("the {controller} controller is mounted but /proc/self/cgroup has no line for it")]
    NoMembership { controller: &'static str },
    #[error("no mount of the {controller} hierarchy shows the runner's cgroup `{path}`")]
    V1Hidden {
        controller: &'static str,
        path: String,
    },
    #[error(
        "memory and pids are on no v1 hierarchy, and the runner is in no cgroup v2 \
         (no `0::` line in /proc/self/cgroup)"
    )]
    NoV2Membership,
    #[error(
        "no cgroup2 mount shows the runner's cgroup `{path}` (memory and pids are on no v1 \
         hierarchy either)"
    )]
    V2Hidden { path: String },
}

/// Why this machine has no place for command cgroups, or why one could
/// not be made or removed.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error("failed to read {path}: {source}")]
    Read {
        path: &'static str,
        #[source]
        source: io::Error,
    },
    #[error(
        "cgroup v1: cannot create cgroups in {}: {source} (cgroup v1 needs root \
         or a directory delegated to this user)",
        .dir.display()
    )]
    V1Access {
        dir: PathBuf,
        #[source]
        source: nix::errno::Errno,
    },
    #[error("{env}={} is not an absolute path", .dir.display(), env = CGROUP_ENV)]
    EnvNotAbsolute { dir: PathBuf },
    /// The directory `AGENT_RUNTIME_CGROUP` names cannot be the parent.
    #[error("{env}={}: {source}", .dir.display(), env = CGROUP_ENV)]
    EnvParent {
        dir: PathBuf,
        #[source]
        source: Box<CgroupError>,
    },
    /// The runner's own or a runtime-owned v2 parent cannot be set up.
    #[error("cgroup v2: {source}; {hint}", hint = HINT)]
    V2Parent {
        #[source]
        source: Box<CgroupError>,
    },
    #[error(
        "cgroup v2: the runner's cgroup {} does not enable memory and pids for \
         sub-cgroups and is not delegated to this user; {hint}",
        .own.display(),
        hint = HINT
    )]
    NotDelegated { own: PathBuf },
    #[error("{} is not a cgroup v2 directory", .dir.display())]
    NotV2 { dir: PathBuf },
    /// `missing` names the controllers `dir` does not offer.
    #[error(
        "the {missing} controller is not available in {} (enable it in the parent's \
         cgroup.subtree_control)",
        .dir.display()
    )]
    Unavailable { missing: String, dir: PathBuf },
    /// Writing `cgroup.subtree_control` failed.
    #[error(
        "{source} (a cgroup with processes of its own cannot enable controllers for sub-cgroups)"
    )]
    Enable {
        #[source]
        source: Box<CgroupError>,
    },
    /// A directory beside the command cgroups (a parent or the runner's
    /// leaf) cannot be made.
    #[error("failed to create {}: {source}", .dir.display())]
    CreateDir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to write `{value}` to {}: {source}", .path.display())]
    Write {
        value: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to create the cgroup {}: {source}", .dir.display())]
    Create {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to open {}: {source}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// `survived` is empty or says that processes survived the kill.
    #[error("failed to remove the cgroup {}: {source}{survived}", .dir.display())]
    Remove {
        dir: PathBuf,
        survived: &'static str,
        #[source]
        source: io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wording `doctor` shows, word for word.
    #[test]
    fn messages_read_as_sentences() {
        let dir = PathBuf::from("/sys/fs/cgroup/x");
        let cases = [
            (
                CgroupError::from(LayoutError::V1Incomplete {
                    missing: "pids".to_string(),
                }),
                "cgroup v1 is in use but the pids controller is not mounted on a v1 hierarchy \
                 (mixing v1 and v2 controllers is not supported)"
                    .to_string(),
            ),
            (
                LayoutError::NoV2Membership.into(),
                "memory and pids are on no v1 hierarchy, and the runner is in no cgroup v2 (no \
                 `0::` line in /proc/self/cgroup)"
                    .to_string(),
            ),
            (
                CgroupError::V1Access {
                    dir: dir.clone(),
                    source: nix::errno::Errno::EACCES,
                },
                "cgroup v1: cannot create cgroups in /sys/fs/cgroup/x: EACCES: Permission denied \
                 (cgroup v1 needs root or a directory delegated to this user)"
                    .to_string(),
            ),
            (
                CgroupError::EnvParent {
                    dir: dir.clone(),
                    source: Box::new(CgroupError::NotV2 { dir: dir.clone() }),
                },
                "AGENT_RUNTIME_CGROUP=/sys/fs/cgroup/x: /sys/fs/cgroup/x is not a cgroup v2 \
                 directory"
                    .to_string(),
            ),
            (
                CgroupError::V2Parent {
                    source: Box::new(CgroupError::Enable {
                        source: Box::new(CgroupError::Write {
                            value: "+pids".to_string(),
                            path: dir.join("cgroup.subtree_control"),
                            source: io::Error::from_raw_os_error(libc::EBUSY),
                        }),
                    }),
                },
                format!(
                    "cgroup v2: failed to write `+pids` to /sys/fs/cgroup/x/cgroup.subtree_control: \
                     {} (a cgroup with processes of its own cannot enable controllers for \
                     sub-cgroups); {HINT}",
                    io::Error::from_raw_os_error(libc::EBUSY)
                ),
            ),
            (
                CgroupError::Remove {
                    dir,
                    survived: " (processes survived the kill)",
                    source: io::Error::from_raw_os_error(libc::EBUSY),
                },
                format!(
                    "failed to remove the cgroup /sys/fs/cgroup/x: {} (processes survived the kill)",
                    io::Error::from_raw_os_error(libc::EBUSY)
                ),
            ),
        ];
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
        }
    }
}
