//! The capability layer: a sandboxed command started by root keeps none of
//! root's capabilities. Without them, root's usual bypasses are gone: file
//! permission overrides, and reading another root process's memory-backed
//! `/proc` files (such as `/proc/<runner>/environ`, which holds the
//! runner's secrets) when that process is not dumpable.

/// Highest capability number to drop; the kernel ignores unknown ones.
const CAP_LAST: libc::c_ulong = 63;
/// `_LINUX_CAPABILITY_VERSION_3`.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Whether the runner is root, so there is something to drop.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Drops every capability from the bounding set (so exec cannot grant any)
/// and from the current sets. Runs in the child between fork and exec:
/// system calls only.
pub fn drop_all() -> std::io::Result<()> {
    for cap in 0..=CAP_LAST {
        // SAFETY: prctl with plain integer arguments; EINVAL for numbers the
        // kernel does not know is expected and ignored.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINVAL) {
                return Err(err);
            }
        }
    }
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a valid header and two data structs (version 3
    // layout) that live on this stack frame for the whole call.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this process holds capability `cap` in its effective set.
pub(crate) fn effective(cap: u32) -> bool {
    let (word, bit) = ((cap / 32) as usize, cap % 32);
    capget().is_ok_and(|data| {
        data.get(word)
            .is_some_and(|d| d.effective & (1 << bit) != 0)
    })
}

/// Makes the calling process non-dumpable, so processes without
/// `CAP_SYS_PTRACE` (every sandboxed command) cannot read its `/proc` files
/// such as `environ`. The runner calls this once at start.
pub fn protect_runner() {
    let _ = nix::sys::prctl::set_dumpable(false);
}

/// Root's permission overrides: `CAP_DAC_OVERRIDE` and
/// `CAP_DAC_READ_SEARCH`.
#[cfg(feature = "test-hooks")]
const PERMISSION_OVERRIDES: u32 = (1 << 1) | (1 << 2);

/// This process's capability sets.
fn capget() -> std::io::Result<[CapData; 2]> {
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capget reads a valid header and writes two data structs
    // (version 3 layout) that live on this stack frame for the whole call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &header as *const CapHeader,
            data.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(data)
}

#[cfg(feature = "test-hooks")]
fn capset(data: &[CapData; 2]) -> std::io::Result<()> {
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    // SAFETY: capset reads a valid header and two data structs (version 3
    // layout) that live on this stack frame for the whole call.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// While alive, the calling thread (capabilities are per thread) lacks
/// root's permission overrides; dropped, it has them back. A test hook.
#[cfg(feature = "test-hooks")]
#[derive(Debug)]
#[must_use = "the overrides are back as soon as this is dropped"]
pub struct WithoutPermissionOverrides {
    effective: u32,
}

/// Takes root's permission overrides out of this thread's effective set,
/// so a test of what a file's permissions refuse means the same run by
/// root as by anyone else (a test hook: compiled only with the
/// `test-hooks` feature). Nothing changes for a thread without them.
#[cfg(feature = "test-hooks")]
pub fn without_permission_overrides() -> std::io::Result<WithoutPermissionOverrides> {
    let mut data = capget()?;
    let effective = data[0].effective;
    data[0].effective &= !PERMISSION_OVERRIDES;
    capset(&data)?;
    Ok(WithoutPermissionOverrides { effective })
}

#[cfg(feature = "test-hooks")]
impl Drop for WithoutPermissionOverrides {
    fn drop(&mut self) {
        if let Ok(mut data) = capget() {
            data[0].effective = self.effective;
            let _ = capset(&data);
        }
    }
}

#[cfg(all(test, feature = "test-hooks"))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn without_permission_overrides_a_file_s_permissions_hold_for_root_too() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("closed");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        {
            let _dropped = without_permission_overrides().unwrap();
            let err = std::fs::read(&file).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
        }
        // Back: root reads it again (anyone else still cannot).
        let root = capget().unwrap()[0].effective & PERMISSION_OVERRIDES != 0;
        assert_eq!(std::fs::read(&file).is_ok(), root);
    }
}
