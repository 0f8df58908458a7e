//! Which cgroup layout this machine uses and where the runner sits in it,
//! decided from the texts of `/proc/self/mountinfo` and `/proc/self/cgroup`
//! alone: pure functions, no I/O.

use std::path::{Path, PathBuf};

use super::error::LayoutError;

/// The controllers a command cgroup needs: limits on memory and processes.
const NEEDED: [&str; 2] = ["memory", "pids"];

/// Where the runner's own cgroups are, per layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Detected {
    /// `memory` and `pids` are bound to cgroup v1 hierarchies; each path is
    /// the runner's own cgroup directory in that hierarchy.
    V1 {
        memory: PathBuf,
        pids: PathBuf,
        freezer: Option<PathBuf>,
    },
    /// The unified hierarchy: its mount point and the runner's own cgroup
    /// directory in it. Which controllers it offers is read from the
    /// filesystem later.
    V2 { mount: PathBuf, own: PathBuf },
}

/// One cgroup filesystem mount from mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    /// The cgroup (relative to the hierarchy's root) mounted here.
    root: String,
    point: PathBuf,
    /// `None` for cgroup2, else the v1 controllers (and `name=`) bound to it.
    controllers: Option<Vec<String>>,
}

/// One line of `/proc/self/cgroup`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Membership {
    /// Empty for the unified (v2) hierarchy.
    controllers: Vec<String>,
    path: String,
}

/// Decides the layout, or says why there is no usable one.
pub(crate) fn detect(mountinfo: &str, proc_cgroup: &str) -> Result<Detected, LayoutError> {
    let mounts = parse_mountinfo(mountinfo);
    let members = parse_proc_cgroup(proc_cgroup);
    if mounts.is_empty() {
        return Err(LayoutError::NoMount);
    }
    let v1_bound = |name: &str| {
        mounts
            .iter()
            .any(|m| m.controllers.as_ref().is_some_and(|c| has(c, name)))
    };
    if v1_bound("memory") || v1_bound("pids") {
        let missing: Vec<&str> = NEEDED.into_iter().filter(|c| !v1_bound(c)).collect();
        if !missing.is_empty() {
            return Err(LayoutError::V1Incomplete {
                missing: missing.join(" and "),
            });
        }
        let memory = v1_own_dir(&mounts, &members, "memory")?;
        let pids = v1_own_dir(&mounts, &members, "pids")?;
        let freezer = if v1_bound("freezer") {
            Some(v1_own_dir(&mounts, &members, "freezer")?)
        } else {
            None
        };
        return Ok(Detected::V1 {
            memory,
            pids,
            freezer,
        });
    }
    let Some(path) = members
        .iter()
        .find(|m| m.controllers.is_empty())
        .map(|m| m.path.as_str())
    else {
        return Err(LayoutError::NoV2Membership);
    };
    let v2 = mounts.iter().filter(|m| m.controllers.is_none());
    for mount in v2 {
        if let Some(own) = own_dir(mount, path) {
            return Ok(Detected::V2 {
                mount: mount.point.clone(),
                own,
            });
        }
    }
    Err(LayoutError::V2Hidden {
        path: path.to_string(),
    })
}

/// The runner's directory in the v1 hierarchy that `controller` is bound to.
fn v1_own_dir(
    mounts: &[Mount],
    members: &[Membership],
    controller: &'static str,
) -> Result<PathBuf, LayoutError> {
    let Some(member) = members.iter().find(|m| has(&m.controllers, controller)) else {
        return Err(LayoutError::NoMembership { controller });
    };
    mounts
        .iter()
        .filter(|m| m.controllers.as_ref().is_some_and(|c| has(c, controller)))
        .find_map(|m| own_dir(m, &member.path))
        .ok_or_else(|| LayoutError::V1Hidden {
            controller,
            path: member.path.clone(),
        })
}

/// `point` plus the part of `path` below the mount's root, when the mount
/// shows it. With a cgroup namespace both are relative to the namespace
/// root, so `/` and `/` give the mount point itself.
fn own_dir(mount: &Mount, path: &str) -> Option<PathBuf> {
    let rest = Path::new(path).strip_prefix(&mount.root).ok()?;
    if rest
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return None;
    }
    Some(if rest.as_os_str().is_empty() {
        mount.point.clone()
    } else {
        mount.point.join(rest)
    })
}

fn has(list: &[String], name: &str) -> bool {
    list.iter().any(|item| item == name)
}

/// The cgroup and cgroup2 mounts of a mountinfo text. Format, per line:
/// `id parent major:minor root point options [optional...] - fstype source super-options`.
fn parse_mountinfo(text: &str) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut left = left.split(' ');
        let (Some(root), Some(point)) = (left.nth(3), left.next()) else {
            continue;
        };
        let mut right = right.split(' ');
        let (Some(fstype), Some(_source), Some(options)) =
            (right.next(), right.next(), right.next())
        else {
            continue;
        };
        let controllers = match fstype {
            "cgroup2" => None,
            "cgroup" => Some(
                options
                    .split(',')
                    .filter(|o| !is_mount_flag(o))
                    .map(str::to_string)
                    .collect(),
            ),
            _ => continue,
        };
        mounts.push(Mount {
            root: unescape(root),
            point: PathBuf::from(unescape(point)),
            controllers,
        });
    }
    mounts
}

/// Super-block options of a v1 cgroup mount that are not controllers.
fn is_mount_flag(option: &str) -> bool {
    matches!(
        option,
        "rw" | "ro" | "noprefix" | "clone_children" | "xattr" | "cpuset_v2_mode"
    ) || option.starts_with("release_agent=")
}

/// `/proc/self/cgroup`: `hierarchy-id:controllers:path` per line.
fn parse_proc_cgroup(text: &str) -> Vec<Membership> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some(Membership {
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// Undoes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes.get(i), octal) {
            (Some(b'\\'), Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (Some(byte), _) => {
                out.push(*byte);
                i += 1;
            }
            (None, _) => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine: v1 controllers, an empty unified hierarchy beside them.
    const HYBRID_MOUNTINFO: &str = "\
23 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const HYBRID_CGROUP: &str = "\
9:name=systemd:/
8:pids:/
6:freezer:/
4:memory:/process_api/d980abe3
2:cpuacct:/
1:cpu:/
0::/
";

    #[test]
    fn hybrid_uses_the_v1_controllers() {
        assert_eq!(
            detect(HYBRID_MOUNTINFO, HYBRID_CGROUP),
            Ok(Detected::V1 {
                memory: PathBuf::from("/sys/fs/cgroup/memory/process_api/d980abe3"),
                pids: PathBuf::from("/sys/fs/cgroup/pids"),
                freezer: Some(PathBuf::from("/sys/fs/cgroup/freezer")),
            })
        );
    }

    #[test]
    fn pure_v2_with_systemd() {
        let mountinfo = "\
25 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";
        let cgroup = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n";
        assert_eq!(
            detect(mountinfo, cgroup),
            Ok(Detected::V2 {
                mount: PathBuf::from("/sys/fs/cgroup"),
                own: PathBuf::from(
                    "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"
                ),
            })
        );
    }

    #[test]
    fn v2_in_a_container_with_a_cgroup_namespace() {
        let mountinfo = "\
612 530 0:190 / / rw,relatime master:230 - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
622 620 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate
";
        assert_eq!(
            detect(mountinfo, "0::/\n"),
            Ok(Detected::V2 {
                mount: PathBuf::from("/sys/fs/cgroup"),
                own: PathBuf::from("/sys/fs/cgroup"),
            })
        );
        // A mount made outside the namespace shows a root the runner's
        // path is not under: no placement rather than a wrong one.
        let outside = "622 620 0:30 /.. /sys/fs/cgroup rw - cgroup2 cgroup rw\n";
        assert!(detect(outside, "0::/\n").is_err());
    }

    #[test]
    fn v1_only_with_comounted_controllers_and_a_bind_mounted_root() {
        // A container without a cgroup namespace: each hierarchy's mount
        // root is the container's cgroup.
        let mountinfo = "\
1 0 8:1 / / rw - ext4 /dev/sda1 rw
20 18 0:17 / /sys/fs/cgroup rw - tmpfs tmpfs rw
21 20 0:18 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
22 20 0:19 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
23 20 0:20 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
24 20 0:21 /docker/abc /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,release_agent=/x,name=systemd
";
        let cgroup = "\
5:name=systemd:/docker/abc
4:pids:/docker/abc/job
3:memory:/docker/abc
2:cpu,cpuacct:/docker/abc
";
        assert_eq!(
            detect(mountinfo, cgroup),
            Ok(Detected::V1 {
                memory: PathBuf::from("/sys/fs/cgroup/memory"),
                pids: PathBuf::from("/sys/fs/cgroup/pids/job"),
                freezer: None,
            })
        );
    }

    #[test]
    fn v1_without_pids_is_refused() {
        let mountinfo = "22 20 0:19 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        let err = detect(mountinfo, "3:memory:/\n").unwrap_err().to_string();
        assert!(err.contains("pids"), "{err}");
    }

    #[test]
    fn none_mounted() {
        let mountinfo = "23 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n";
        assert_eq!(detect(mountinfo, "0::/\n"), Err(LayoutError::NoMount));
        assert!(detect("", "").is_err());
    }

    #[test]
    fn escaped_mount_points() {
        let mountinfo = "35 24 0:30 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            detect(mountinfo, "0::/a b\n"),
            Ok(Detected::V2 {
                mount: PathBuf::from("/mnt/cg two"),
                own: PathBuf::from("/mnt/cg two/a b"),
            })
        );
    }
}
