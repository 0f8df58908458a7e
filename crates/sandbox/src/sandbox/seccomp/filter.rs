//! The filter program: built once per runner process, installed by the
//! child with one `seccomp` call (after `no_new_privs`, which Landlock
//! already set when it is on).
//!
//! Three parts, run in order:
//!
//! 1. The ABI checks: a call through another architecture (i386's
//!    `int 0x80`) or with x32's number bit gets `EPERM`.
//! 2. A binary search over the numbers of the deny list: a denied call
//!    returns `EPERM` (`clone3` `ENOSYS`), a call not on it returns
//!    `ALLOW`, and `clone` and `personality`, which are judged by their
//!    arguments, go on to part 3.
//! 3. Their argument rules, compiled by `seccompiler` (which handles the
//!    comparisons of argument words): allowed as Docker allows them,
//!    `EPERM` otherwise.
//!
//! Parts 1 and 2 are a few hand-built classic BPF instructions because
//! one seccompiler filter has a single match action (no `ENOSYS` beside
//! `EPERM`), does not look at the x32 bit, and tests the numbers one after
//! the other: the kernel emulates every system call number through a new
//! filter to build its cache of always-allowed calls, and over a linear
//! chain of ~45 numbers that alone cost about a quarter of a millisecond
//! per command; over the search it costs a tenth of that.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::deny_list::{DENIED, NAMESPACE_FLAGS, PERSONALITY_QUERY};

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

// Classic BPF opcodes (linux/bpf_common.h).
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
/// Numbers tested one by one at the leaves of the search.
const LEAF: usize = 4;

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

/// What the search decides for one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Deny,
    NoSys,
    /// Judged by its arguments, in part 3.
    Arguments,
}

/// Part 1: leaves the syscall number loaded.
fn abi_checks(audit_arch: u32) -> Vec<sock_filter> {
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
    program
}

/// Why the filter cannot be built on this machine.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FilterError {
    #[error("no filter for this architecture")]
    NoArchitecture,
    #[error("cannot build the filter: {0}")]
    Rules(#[source] seccompiler::BackendError),
    #[error("cannot compile the filter: {0}")]
    Compile(#[source] seccompiler::BackendError),
    #[error("the search is too deep for a jump")]
    TooDeep,
    #[error("the search is too long for a jump")]
    TooLong,
    #[error("the filter has {0} instructions")]
    TooBig(usize),
}

/// Why this kernel cannot filter system calls with the filter.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError {
    #[error("the kernel is built without seccomp filters")]
    NotBuilt,
    #[error("seccomp is not usable: {0}")]
    Unusable(#[source] std::io::Error),
    #[error(transparent)]
    Filter(&'static FilterError),
}

/// One instruction of part 2 before its jumps are resolved.
#[derive(Debug, Clone)]
enum Step {
    Insn(sock_filter),
    /// `nr` goes to the shared end for `verdict`.
    Match(u32, Verdict),
}

/// Part 2 for `numbers` (sorted): a search whose every path ends in
/// `ALLOW` or a jump to one of the shared ends that follow it.
fn search(numbers: &[(u32, Verdict)]) -> Result<Vec<Step>, FilterError> {
    let mut steps = Vec::new();
    if numbers.len() <= LEAF {
        steps.extend(
            numbers
                .iter()
                .map(|(nr, verdict)| Step::Match(*nr, *verdict)),
        );
        steps.push(Step::Insn(stmt(RET_K, libc::SECCOMP_RET_ALLOW)));
        return Ok(steps);
    }
    let (low, high) = numbers.split_at(numbers.len() / 2);
    let low = search(low)?;
    let skip = u8::try_from(low.len()).map_err(|_| FilterError::TooDeep)?;
    steps.push(Step::Insn(jump(JGE_K, high[0].0, skip, 0)));
    steps.extend(low);
    steps.extend(search(high)?);
    Ok(steps)
}

/// Part 2 resolved: the search, then its shared ends (`EPERM`, `ENOSYS`);
/// part 3 follows right after.
fn resolve(steps: Vec<Step>) -> Result<Vec<sock_filter>, FilterError> {
    let count = steps.len();
    let end = |verdict: Verdict| match verdict {
        Verdict::Deny => count,
        Verdict::NoSys => count + 1,
        Verdict::Arguments => count + 2,
    };
    let mut program = Vec::with_capacity(count + 2);
    for (at, step) in steps.into_iter().enumerate() {
        program.push(match step {
            Step::Insn(insn) => insn,
            Step::Match(nr, verdict) => {
                let offset =
                    u8::try_from(end(verdict) - at - 1).map_err(|_| FilterError::TooLong)?;
                jump(JEQ_K, nr, offset, 0)
            }
        });
    }
    program.push(stmt(RET_K, errno(libc::EPERM)));
    program.push(stmt(RET_K, errno(libc::ENOSYS)));
    Ok(program)
}

/// Part 3, which only `clone` and `personality` reach: allowed when no
/// namespace flag is set (Docker's rule) and when the default or the
/// query, `EPERM` otherwise (and for anything else, which cannot get
/// here).
fn argument_rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::BackendError> {
    let mask = NAMESPACE_FLAGS
        .iter()
        .fold(0u64, |mask, flag| mask | *flag as u32 as u64);
    let clone = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(mask),
        0,
    )?])?;
    // Rules of one call are alternatives.
    let personality = [0, PERSONALITY_QUERY]
        .into_iter()
        .map(|value| {
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                value,
            )?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BTreeMap::from([
        (libc::SYS_clone, vec![clone]),
        (libc::SYS_personality, personality),
    ]))
}

/// Every number part 2 decides, sorted.
fn numbers() -> Vec<(u32, Verdict)> {
    let mut numbers: Vec<(u32, Verdict)> = DENIED
        .iter()
        .flat_map(|group| group.calls.iter())
        .map(|(_, nr)| (*nr as u32, Verdict::Deny))
        .collect();
    numbers.push((libc::SYS_clone3 as u32, Verdict::NoSys));
    numbers.push((libc::SYS_clone as u32, Verdict::Arguments));
    numbers.push((libc::SYS_personality as u32, Verdict::Arguments));
    numbers.sort_unstable_by_key(|(nr, _)| *nr);
    numbers.dedup_by_key(|(nr, _)| *nr);
    numbers
}

fn build() -> Result<BpfProgram, FilterError> {
    let (arch, audit) = NATIVE.ok_or(FilterError::NoArchitecture)?;
    let arguments: BpfProgram = SeccompFilter::new(
        argument_rules().map_err(FilterError::Rules)?,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
        arch,
    )
    .and_then(BpfProgram::try_from)
    .map_err(FilterError::Compile)?;
    let mut program = abi_checks(audit);
    program.extend(resolve(search(&numbers())?)?);
    program.extend(arguments);
    if program.len() > usize::from(u16::MAX) {
        return Err(FilterError::TooBig(program.len()));
    }
    Ok(program)
}

/// The compiled filter, built on first use and shared by every command.
pub(crate) fn filter() -> Result<&'static [sock_filter], &'static FilterError> {
    static FILTER: OnceLock<Result<BpfProgram, FilterError>> = OnceLock::new();
    FILTER.get_or_init(build).as_deref()
}

/// Whether this kernel filters system calls and the filter compiles here;
/// the number of instructions when it does.
pub(crate) fn probe() -> Result<usize, ProbeError> {
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
            Some(libc::ENOSYS) | Some(libc::EINVAL) => ProbeError::NotBuilt,
            _ => ProbeError::Unusable(err),
        });
    }
    filter()
        .map(<[sock_filter]>::len)
        .map_err(ProbeError::Filter)
}

/// Installs `program` on the calling (child) process, with
/// `no_new_privs`. Two system calls, no allocation.
pub(crate) fn install(program: &[sock_filter]) -> std::io::Result<()> {
    seccompiler::apply_filter(program).map_err(|err| match err {
        seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
        _ => std::io::Error::from_raw_os_error(libc::EINVAL),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a run of parts 1 and 2 ends in.
    #[derive(Debug, PartialEq, Eq)]
    enum End {
        Ret(u32),
        Arguments,
    }

    /// Runs the filter as the kernel would up to part 3, for a call `nr`
    /// through `arch`.
    fn run(program: &[sock_filter], arguments_at: usize, arch: u32, nr: u32) -> End {
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            if pc == arguments_at {
                return End::Arguments;
            }
            let insn = &program[pc];
            pc += 1;
            match insn.code {
                LD_W_ABS if insn.k == DATA_ARCH => acc = arch,
                LD_W_ABS if insn.k == DATA_NR => acc = nr,
                JEQ_K | JGE_K => {
                    let taken = if insn.code == JEQ_K {
                        acc == insn.k
                    } else {
                        acc >= insn.k
                    };
                    pc += usize::from(if taken { insn.jt } else { insn.jf });
                }
                RET_K => return End::Ret(insn.k),
                other => panic!("unexpected instruction {other:#x} at {}", pc - 1),
            }
        }
    }

    #[test]
    fn every_number_gets_its_verdict_and_other_abis_are_refused() {
        let Ok(program) = filter() else {
            return; // an architecture without a filter
        };
        let (_, audit) = NATIVE.unwrap();
        let arguments_at = abi_checks(audit).len() + search(&numbers()).unwrap().len() + 2;
        let denied: Vec<u32> = DENIED
            .iter()
            .flat_map(|g| g.calls.iter().map(|(_, nr)| *nr as u32))
            .collect();
        for nr in 0..1024u32 {
            let want = if denied.contains(&nr) {
                End::Ret(errno(libc::EPERM))
            } else if nr == libc::SYS_clone3 as u32 {
                End::Ret(errno(libc::ENOSYS))
            } else if nr == libc::SYS_clone as u32 || nr == libc::SYS_personality as u32 {
                End::Arguments
            } else {
                End::Ret(libc::SECCOMP_RET_ALLOW)
            };
            assert_eq!(run(program, arguments_at, audit, nr), want, "call {nr}");
        }
        // i386 (or arm) through the other arch, and x32 numbers, whatever
        // the call.
        for nr in [0, libc::SYS_getpid as u32, libc::SYS_keyctl as u32] {
            assert_eq!(
                run(program, arguments_at, 0x4000_0003, nr),
                End::Ret(errno(libc::EPERM))
            );
            if X32_SYSCALL_BIT.is_some() {
                assert_eq!(
                    run(program, arguments_at, audit, 0x4000_0000 | nr),
                    End::Ret(errno(libc::EPERM))
                );
            }
        }
        assert!(program.len() < 110, "{} instructions", program.len());
    }
}
