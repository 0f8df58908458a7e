//! A fresh session keyring per command: keys of the runner's session (a
//! key a host shell added with `keyctl add ... @s`) and of earlier
//! commands' sessions are not in reach. The uid's user keyring stays
//! nameable by the kernel; the filter's deny on `keyctl`, `add_key` and
//! `request_key` is what keeps it out of reach.

/// `KEYCTL_GET_KEYRING_ID` and `KEYCTL_JOIN_SESSION_KEYRING`
/// (linux/keyctl.h).
const KEYCTL_GET_KEYRING_ID: libc::c_long = 0;
const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
/// `KEY_SPEC_SESSION_KEYRING`.
const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;

/// Whether the kernel has keyrings at all (without them there is nothing
/// to hide).
pub(crate) fn keyrings_present() -> bool {
    // SAFETY: keyctl(GET_KEYRING_ID, session, no create) takes integers.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_GET_KEYRING_ID,
            KEY_SPEC_SESSION_KEYRING,
            0,
        )
    };
    rc >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
}

/// Gives the calling (child) process a new, empty, anonymous session
/// keyring. One system call; before the filter, which denies it.
pub(crate) fn join_fresh_session_keyring() -> std::io::Result<()> {
    // SAFETY: keyctl(JOIN_SESSION_KEYRING, NULL) makes an anonymous keyring;
    // the null name pointer is what asks for that.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
