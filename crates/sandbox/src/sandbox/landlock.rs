//! The Landlock layer: built in the runner from path grants, applied in the
//! child right before exec.
//!
//! Read and execute: system directories, the toolchain, the search path and
//! any extra readable grant. Read, write and execute: the workspace, the
//! private scratch directory and extra writable grants. Everything else,
//! the runtime's data dir and acceptance dirs included, is not even
//! readable. With the network off, TCP bind and connect are denied too
//! (ABI 4+), and signals and abstract unix sockets are scoped to the
//! sandbox (ABI 6+).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::error::SandboxError;

/// The lowest ABI `required` accepts: ABI 3 is the first that also governs
/// truncation, without which a file outside the workspace could be emptied.
pub(crate) const MIN_REQUIRED_ABI: i32 = 3;

/// The newest ABI whose rights this layer asks for.
const TARGET_ABI: ABI = ABI::V6;

/// System locations every command may read and execute.
pub(crate) const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/sys/fs/cgroup",
    "/sys/devices/system/cpu",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    // From /etc only what programs and linkers commonly need; not the whole
    // directory, which may hold host secrets.
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/os-release",
    "/etc/ssl",
    "/etc/ca-certificates",
];

/// What a command allowed the network also needs to read: the resolver's
/// configuration (a link such as `/etc/resolv.conf ->
/// ../run/systemd/resolve/stub-resolv.conf` is granted with its target).
pub const NETWORK_READ: &[&str] = &[
    "/etc/resolv.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
];

/// System locations every command may write.
pub(crate) const SYSTEM_WRITE: &[&str] = &["/dev/null"];

/// Why the running kernel offers no Landlock ABI.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AbiError {
    #[error("odd Landlock ABI {0}")]
    Odd(libc::c_long),
    #[error("the kernel is built without Landlock")]
    NotBuilt,
    #[error("Landlock is built in but disabled at boot (add it to the lsm= list)")]
    Disabled,
    #[error("Landlock is not usable: {0}")]
    Unusable(#[source] std::io::Error),
}

/// The Landlock ABI of the running kernel, or why there is none.
pub(crate) fn kernel_abi() -> Result<i32, AbiError> {
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the
    // VERSION flag only returns a number; no memory is read or written.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if version >= 1 {
        return i32::try_from(version).map_err(|_| AbiError::Odd(version));
    }
    let errno = std::io::Error::last_os_error();
    Err(match errno.raw_os_error() {
        Some(libc::ENOSYS) => AbiError::NotBuilt,
        Some(libc::EOPNOTSUPP) => AbiError::Disabled,
        _ => AbiError::Unusable(errno),
    })
}

/// Rights under a writable grant: everything except creating device nodes,
/// which a root command could otherwise use to reach raw disks.
fn write_access() -> BitFlags<AccessFs> {
    AccessFs::from_all(TARGET_ABI) & !(AccessFs::MakeChar | AccessFs::MakeBlock)
}

/// Builds the ruleset and returns its descriptor, or `None` when the kernel
/// has no Landlock and `hard` is false. `hard` makes every right of
/// [`MIN_REQUIRED_ABI`] mandatory.
pub(crate) fn build(
    read: &[PathBuf],
    write: &[PathBuf],
    block_tcp: bool,
    hard: bool,
) -> Result<Option<OwnedFd>, SandboxError> {
    let setup = |err: landlock::RulesetError| SandboxError::Setup {
        layer: "landlock",
        reason: err.to_string(),
    };
    let level = if hard {
        CompatLevel::HardRequirement
    } else {
        CompatLevel::BestEffort
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(level)
        .handle_access(AccessFs::from_all(ABI::V3))
        .map_err(setup)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .map_err(setup)?;
    if block_tcp {
        // No rule grants a port, so every TCP bind and connect is denied.
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(setup)?;
    }
    ruleset = ruleset
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(setup)?;
    let created = ruleset
        .create()
        .map_err(setup)?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(TARGET_ABI)))
        .map_err(setup)?
        .add_rules(path_beneath_rules(write, write_access()))
        .map_err(setup)?
        .no_new_privs(true);
    let fd: Option<OwnedFd> = created.into();
    Ok(fd)
}

/// Restricts the calling (child) process with a ruleset built by
/// [`build`]. Async-signal-safe: two system calls, no allocation.
pub(crate) fn restrict_self(ruleset: RawFd) -> std::io::Result<()> {
    nix::sys::prctl::set_no_new_privs().map_err(std::io::Error::from)?;
    // SAFETY: landlock_restrict_self takes a descriptor and flags by value;
    // the descriptor stays open in this process until exec closes it.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The raw descriptor of a built ruleset, for the child.
pub(crate) fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}
