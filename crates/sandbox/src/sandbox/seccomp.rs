//! The seccomp layer: a deny list of system calls in the spirit of
//! Docker's default profile, and a fresh session keyring per command.
//!
//! Denied calls return `EPERM`, so programs degrade as they do in a
//! container (libuv without io_uring, a test without perf counters);
//! `clone3` returns `ENOSYS`, as under Docker: its flags sit in memory a
//! filter cannot read, and libc falls back to `clone`, whose flags it can
//! (`EPERM` there would break every thread). Calls through a non-native
//! ABI (i386's `int 0x80`, x32's numbers) are refused before anything
//! else, so none of the rules can be sidestepped by a second syscall
//! table.
//!
//! The filter is compiled once per runner process with `seccompiler`; the
//! child only installs it, after Landlock and after dropping capabilities,
//! as its last step before exec: the init and waiter of the PID namespace
//! stay unfiltered, the command and everything it starts are filtered.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

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
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
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
const PERSONALITY_QUERY: u64 = 0xffff_ffff;

/// The architecture this runner was built for, as the kernel names it in
/// `seccomp_data.arch`.
#[cfg(target_arch = "x86_64")]
const NATIVE: Option<(TargetArch, u32)> = Some((TargetArch::x86_64, 0xc000_003e));
#[cfg(target_arch = "aarch64")]
const NATIVE: Option<(TargetArch, u32)> = Some((TargetArch::aarch64, 0xc000_00b7));
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NATIVE: Option<(TargetArch, u32)> = None;

/// x32 system calls come in on x86_64's arch with this bit set in the
/// number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: Option<u32> = Some(0x4000_0000);
#[cfg(not(target_arch = "x86_64"))]
const X32_SYSCALL_BIT: Option<u32> = None;

// Classic BPF opcodes (linux/bpf_common.h) for the few instructions
// seccompiler's rules cannot say: one filter has one match action, and it
// does not look at the x32 bit.
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

fn errno(code: libc::c_int) -> u32 {
    libc::SECCOMP_RET_ERRNO | (code as u32 & libc::SECCOMP_RET_DATA)
}

/// The checks before the deny list: a non-native ABI and x32 get `EPERM`,
/// `clone3` gets `ENOSYS`. Leaves the syscall number loaded.
fn prologue(audit_arch: u32) -> Vec<sock_filter> {
    let mut program = vec![
        stmt(LD_W_ABS, DATA_ARCH),
        jump(JEQ_K, audit_arch, 1, 0),
        stmt(RET_K, errno(libc::EPERM)),
        stmt(LD_W_ABS, DATA_NR),
    ];
    if let Some(bit) = X32_SYSCALL_BIT {
        program.push(jump(JGE_K, bit, 0, 1));
        program.push(stmt(RET_K, errno(libc::EPERM)));
    }
    program.push(jump(JEQ_K, libc::SYS_clone3 as u32, 0, 1));
    program.push(stmt(RET_K, errno(libc::ENOSYS)));
    program
}

fn rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::BackendError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED
        .iter()
        .flat_map(|group| group.calls.iter())
        .map(|(_, nr)| (*nr, Vec::new()))
        .collect();
    // Rules of one call are alternatives: any namespace flag denies.
    let clone = NAMESPACE_FLAGS
        .iter()
        .map(|flag| {
            let flag = *flag as u32 as u64;
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone);
    // Conditions of one rule all hold: neither the default nor the query.
    let personality = SeccompRule::new(vec![
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0)?,
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            PERSONALITY_QUERY,
        )?,
    ])?;
    rules.insert(libc::SYS_personality, vec![personality]);
    Ok(rules)
}

fn build() -> Result<BpfProgram, String> {
    let (arch, audit) = NATIVE.ok_or("no filter for this architecture")?;
    let filter = SeccompFilter::new(
        rules().map_err(|e| format!("cannot build the filter: {e}"))?,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| format!("cannot build the filter: {e}"))?;
    let body: BpfProgram = filter
        .try_into()
        .map_err(|e| format!("cannot compile the filter: {e}"))?;
    let mut program = prologue(audit);
    program.extend(body);
    Ok(program)
}

/// The compiled filter, built on first use and shared by every command.
pub(crate) fn filter() -> Result<&'static [sock_filter], String> {
    static FILTER: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    FILTER.get_or_init(build).as_deref().map_err(Clone::clone)
}

/// Whether this kernel filters system calls and the filter compiles here;
/// the number of instructions when it does.
pub(crate) fn probe() -> Result<usize, String> {
    let action = libc::SECCOMP_RET_ERRNO;
    // SAFETY: seccomp(GET_ACTION_AVAIL) only reads the u32 on this frame.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return Err(match err.raw_os_error() {
            Some(libc::ENOSYS) | Some(libc::EINVAL) => {
                "the kernel is built without seccomp filters".to_string()
            }
            _ => format!("seccomp is not usable: {err}"),
        });
    }
    filter().map(<[sock_filter]>::len)
}

/// Installs `program` on the calling (child) process, with
/// `no_new_privs` (which Landlock already set when it is on). Two system
/// calls, no allocation.
pub(crate) fn install(program: &[sock_filter]) -> std::io::Result<()> {
    seccompiler::apply_filter(program).map_err(|err| match err {
        seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
        _ => std::io::Error::from_raw_os_error(libc::EINVAL),
    })
}

/// `KEYCTL_JOIN_SESSION_KEYRING` (keyutils.h).
const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
/// `KEYCTL_GET_KEYRING_ID` and `KEY_SPEC_SESSION_KEYRING`.
const KEYCTL_GET_KEYRING_ID: libc::c_long = 0;
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
/// keyring, so keys of the runner's session (a key a host shell added) are
/// not in reach. One system call.
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

/// How many calls the deny list names (without `clone` and
/// `personality`, denied by argument, and `clone3`).
pub fn denied_count() -> usize {
    DENIED.iter().map(|group| group.calls.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_and_starts_with_the_abi_checks() {
        let Ok(program) = filter() else {
            return; // an architecture without a filter
        };
        assert!(program.len() < 4096, "{} instructions", program.len());
        let (_, audit) = NATIVE.unwrap();
        assert_eq!(program[0], stmt(LD_W_ABS, DATA_ARCH));
        assert_eq!(program[1], jump(JEQ_K, audit, 1, 0));
        assert_eq!(program[2].k, errno(libc::EPERM));
        // clone3's ENOSYS comes before any rule.
        assert!(
            program
                .iter()
                .take(10)
                .any(|i| i.code == RET_K && i.k == errno(libc::ENOSYS))
        );
    }

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
    }
}
