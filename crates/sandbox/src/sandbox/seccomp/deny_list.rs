//! What the filter denies, and why: the table `doctor` and
//! docs/sandbox.md show.

/// One group of denied calls and why.
#[derive(Debug, Clone, Copy)]
pub struct DeniedGroup {
    pub why: &'static str,
    pub calls: &'static [(&'static str, libc::c_long)],
}

/// Every call the filter denies with `EPERM` unconditionally, by group.
/// `clone` with namespace flags and `personality` other than the default
/// are denied too (by argument), and `clone3` gets `ENOSYS`.
pub const DENIED: &[DeniedGroup] = &[
    DeniedGroup {
        why: "kernel keyrings outlive commands and are shared by every process of the user: \
              a channel between attempts and to keys the host added",
        calls: &[
            ("keyctl", libc::SYS_keyctl),
            ("add_key", libc::SYS_add_key),
            ("request_key", libc::SYS_request_key),
        ],
    },
    DeniedGroup {
        why: "a large kernel attack surface that builds and tests do without",
        calls: &[
            ("bpf", libc::SYS_bpf),
            ("perf_event_open", libc::SYS_perf_event_open),
            ("userfaultfd", libc::SYS_userfaultfd),
            ("io_uring_setup", libc::SYS_io_uring_setup),
            ("io_uring_enter", libc::SYS_io_uring_enter),
            ("io_uring_register", libc::SYS_io_uring_register),
        ],
    },
    DeniedGroup {
        why: "tracing or reading other processes (debuggers are not supported inside commands)",
        calls: &[
            ("ptrace", libc::SYS_ptrace),
            ("process_vm_readv", libc::SYS_process_vm_readv),
            ("process_vm_writev", libc::SYS_process_vm_writev),
        ],
    },
    DeniedGroup {
        why: "a command must not rebuild or leave its root and namespaces \
              (a new user namespace would give it capabilities inside)",
        calls: &[
            ("mount", libc::SYS_mount),
            ("umount2", libc::SYS_umount2),
            ("pivot_root", libc::SYS_pivot_root),
            ("unshare", libc::SYS_unshare),
            ("setns", libc::SYS_setns),
            ("fsopen", libc::SYS_fsopen),
            ("fsconfig", libc::SYS_fsconfig),
            ("fsmount", libc::SYS_fsmount),
            ("fspick", libc::SYS_fspick),
            ("move_mount", libc::SYS_move_mount),
            ("open_tree", libc::SYS_open_tree),
            ("mount_setattr", libc::SYS_mount_setattr),
        ],
    },
    DeniedGroup {
        why: "opening files by handle skips the path checks of every other layer",
        calls: &[
            ("open_by_handle_at", libc::SYS_open_by_handle_at),
            ("name_to_handle_at", libc::SYS_name_to_handle_at),
        ],
    },
    DeniedGroup {
        why: "the kernel and the machine belong to the host",
        calls: &[
            ("kexec_load", libc::SYS_kexec_load),
            ("kexec_file_load", libc::SYS_kexec_file_load),
            ("init_module", libc::SYS_init_module),
            ("finit_module", libc::SYS_finit_module),
            ("delete_module", libc::SYS_delete_module),
            ("reboot", libc::SYS_reboot),
            ("swapon", libc::SYS_swapon),
            ("swapoff", libc::SYS_swapoff),
            ("acct", libc::SYS_acct),
            ("syslog", libc::SYS_syslog),
        ],
    },
    DeniedGroup {
        why: "the clock is the host's (reading it is allowed)",
        calls: &[
            ("settimeofday", libc::SYS_settimeofday),
            ("clock_settime", libc::SYS_clock_settime),
            ("clock_adjtime", libc::SYS_clock_adjtime),
            ("adjtimex", libc::SYS_adjtimex),
        ],
    },
];

/// `CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
/// CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET`: `clone` with any of them
/// is denied (Docker's mask, 0x7E020000).
pub(super) const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// `personality(0)` (the default, PER_LINUX) and `personality(0xffffffff)`
/// (a query) are the only ones allowed.
pub(super) const PERSONALITY_QUERY: u64 = 0xffff_ffff;

/// How many calls the deny list names (without `clone` and
/// `personality`, denied by argument, and `clone3`).
pub fn denied_count() -> usize {
    DENIED.iter().map(|group| group.calls.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_denied_call_is_named_once() {
        let mut numbers: Vec<libc::c_long> = DENIED
            .iter()
            .flat_map(|g| g.calls.iter().map(|(_, nr)| *nr))
            .collect();
        let count = numbers.len();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), count);
        assert_eq!(denied_count(), count);
        assert!(!numbers.contains(&libc::SYS_clone));
        assert!(!numbers.contains(&libc::SYS_clone3));
        assert!(!numbers.contains(&libc::SYS_personality));
        let mask = NAMESPACE_FLAGS.iter().fold(0, |m, f| m | *f as u32);
        assert_eq!(mask, 0x7E02_0000);
    }
}
