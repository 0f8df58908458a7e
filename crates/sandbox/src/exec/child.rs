//! The child between clone and exec, for the runner's own spawns and the
//! zygote's alike: standard streams, working directory, a process group
//! of its own, the sandbox's [`ChildSetup`], then exec.
//!
//! Where the setup never forks (no PID namespace chain), the child is made
//! with `CLONE_VM | CLONE_VFORK`, as `posix_spawn` does: it borrows the
//! parent's memory until it execs, so no page table is copied however
//! much the parent holds, and the parent sleeps until then. Every signal
//! is blocked across the clone, so no handler of the parent ever runs in
//! the child; the child resets every disposition before it unblocks them
//! (`ChildSetup::apply`). Otherwise the child is a fork-like copy.
//!
//! A close-on-exec pipe says whether exec happened (end of file) or the
//! errno of the step that failed.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::sandbox::ChildSetup;
use crate::sandbox::sys;

/// What the command execs, as the strings `execve` takes.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Image {
    pub program: CString,
    /// `argv[0]` first.
    pub argv: Vec<CString>,
    /// `NAME=value` strings.
    pub env: Vec<CString>,
    pub cwd: CString,
}

impl Image {
    /// `resolved` run as `argv` in `cwd` with `env`; EINVAL when a string
    /// holds a NUL byte.
    pub(crate) fn new(
        resolved: &Path,
        argv: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> std::io::Result<Image> {
        let nul = |_| std::io::Error::from_raw_os_error(libc::EINVAL);
        Ok(Image {
            program: CString::new(resolved.as_os_str().as_bytes()).map_err(nul)?,
            argv: argv
                .iter()
                .map(|arg| CString::new(arg.as_bytes()))
                .collect::<Result<_, _>>()
                .map_err(nul)?,
            env: env
                .iter()
                .map(|(name, value)| CString::new(format!("{name}={value}")))
                .collect::<Result<_, _>>()
                .map_err(nul)?,
            cwd: CString::new(cwd.as_os_str().as_bytes()).map_err(nul)?,
        })
    }
}

/// Why a child did not start: its pid if one was made (it has exited and
/// is the caller's, or with `sibling` the caller's parent's, to reap), and
/// an errno.
pub(crate) type NotStarted = (Option<i32>, i32);

fn errno_of(err: &std::io::Error) -> i32 {
    err.raw_os_error().unwrap_or(libc::EIO)
}

/// How a child is placed: whose child, in which process group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placement {
    /// The child is the caller's parent's (`CLONE_PARENT`: the zygote's
    /// commands are the runner's).
    pub sibling: bool,
    /// It leads a process group of its own (else it stays in the
    /// caller's, as a command in its init's group).
    pub own_group: bool,
}

/// Starts `image` with `stdio` as its descriptors 0, 1 and 2 (each is
/// duplicated; the caller keeps and closes its own), placed as `place`
/// says, after `setup`. Returns its pid once it has exec'd.
pub(crate) fn start(
    image: &Image,
    stdio: [RawFd; 3],
    setup: &ChildSetup,
    place: Placement,
) -> Result<i32, NotStarted> {
    let (report_read, report_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| (None, e as i32))?;
    let (stdio, moved) = above_stdio(stdio).map_err(|e| (None, errno_of(&e)))?;
    let argv = pointers(&image.argv);
    let env = pointers(&image.env);
    let child = Child {
        stdio,
        cwd: &image.cwd,
        program: &image.program,
        argv: &argv,
        env: &env,
        setup,
        own_group: place.own_group,
        report: report_write.as_raw_fd(),
    };
    let shares_memory = !setup.forks();
    let mut flags = libc::SIGCHLD;
    if place.sibling {
        flags |= libc::CLONE_PARENT;
    }
    if shares_memory {
        flags |= libc::CLONE_VM | libc::CLONE_VFORK;
    }
    let stack = Stack::new().map_err(|e| (None, errno_of(&e)))?;
    let clone = |namespaces: libc::c_int| {
        // SAFETY: `entry` runs `child` on `stack`, which outlives the
        // child's use of it (with CLONE_VFORK this returns only once the
        // child has exec'd or exited; without CLONE_VM the child has its
        // own copy). The child only makes system calls on data prepared
        // above, then execs or exits; every signal is blocked meanwhile.
        let pid = unsafe {
            libc::clone(
                entry,
                stack.top(),
                flags | namespaces,
                std::ptr::from_ref(&child).cast_mut().cast(),
            )
        };
        (pid, std::io::Error::last_os_error())
    };
    let (pid, clone_error) = {
        let _blocked = BlockedSignals::new().map_err(|e| (None, errno_of(&e)))?;
        match setup.direct() {
            // The init itself, cloned into its namespaces.
            Some(namespaces) => namespaces
                .clone_in(clone)
                .map_err(|e| (None, errno_of(&e)))?,
            None => clone(0),
        }
    };
    drop(report_write);
    drop(moved);
    if pid < 0 {
        return Err((None, errno_of(&clone_error)));
    }
    match read_report(report_read.as_raw_fd()) {
        None => Ok(pid),
        Some(errno) => Err((Some(pid), errno)),
    }
}

/// `stdio` with any descriptor among 0 to 2 moved above them (the first
/// dup2s onto 0, 1 and 2 would overwrite it), and the copies made.
fn above_stdio(mut stdio: [RawFd; 3]) -> std::io::Result<([RawFd; 3], Vec<OwnedFd>)> {
    let mut moved = Vec::new();
    for fd in &mut stdio {
        if *fd <= 2 {
            // SAFETY: F_DUPFD_CLOEXEC of a descriptor the caller holds
            // open; the copy is owned below.
            let high = unsafe { libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3) };
            if high < 0 {
                return Err(std::io::Error::last_os_error());
            }
            *fd = high;
            // SAFETY: a fresh descriptor nobody else owns.
            moved.push(unsafe { OwnedFd::from_raw_fd(high) });
        }
    }
    Ok((stdio, moved))
}

/// `stdio` (each above 2: see [`above_stdio`]) as descriptors 0, 1 and 2.
fn onto_stdio(stdio: &[RawFd; 3]) -> std::io::Result<()> {
    for (target, fd) in stdio.iter().enumerate() {
        // SAFETY: dup2 of a descriptor above 2 onto 0, 1 or 2.
        if unsafe { libc::dup2(*fd, target as libc::c_int) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// In a *warm command* (see `zygote/warm.rs`), the process made ahead for
/// a command, every layer applied, once its command is known: `stdio` as
/// descriptors 0 to 2, the working directory, then exec of `image` in
/// this very process. Returns only if that failed, with why.
pub(crate) fn exec_here(image: &Image, stdio: [RawFd; 3]) -> std::io::Error {
    let (stdio, _moved) = match above_stdio(stdio) {
        Ok(lifted) => lifted,
        Err(err) => return err,
    };
    if let Err(err) = onto_stdio(&stdio).and_then(|()| sys::chdir(&image.cwd)) {
        return err;
    }
    let argv = pointers(&image.argv);
    let env = pointers(&image.env);
    // SAFETY: NUL-terminated program path and NULL-terminated arrays of
    // NUL-terminated strings, all alive until exec.
    unsafe { libc::execve(image.program.as_ptr(), argv.as_ptr(), env.as_ptr()) };
    std::io::Error::last_os_error()
}

extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Child` that `start` passed to clone, alive
    // until the child has exec'd or exited.
    let child = unsafe { &*arg.cast::<Child<'_>>() };
    child.run()
}

/// The child's stack: mapped for the clone, with an inaccessible page
/// below it so an overflow faults rather than writes into the parent.
struct Stack {
    base: *mut libc::c_void,
}

/// Size of the child's stack, guard page included; pages are only backed
/// once touched.
const STACK: usize = 256 * 1024;
const GUARD: usize = 4096;

impl Stack {
    fn new() -> std::io::Result<Stack> {
        // SAFETY: a fresh private anonymous mapping; nothing else uses it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                STACK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let stack = Stack { base };
        // SAFETY: the lowest page of the mapping made above.
        if unsafe { libc::mprotect(base, GUARD, libc::PROT_NONE) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The stack grows down from here (16-byte aligned: page aligned).
    fn top(&self) -> *mut libc::c_void {
        self.base.wrapping_byte_add(STACK)
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer used by any child.
        unsafe { libc::munmap(self.base, STACK) };
    }
}

/// Every signal blocked in this thread until dropped, when the previous
/// mask comes back.
struct BlockedSignals {
    previous: libc::sigset_t,
}

impl BlockedSignals {
    fn new() -> std::io::Result<BlockedSignals> {
        // SAFETY: both sets live on this frame; sigfillset only writes into
        // `all`, pthread_sigmask into `previous`.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let rc = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous);
            if rc != 0 {
                return Err(std::io::Error::from_raw_os_error(rc));
            }
            Ok(BlockedSignals { previous })
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut()) };
    }
}

/// A NULL-terminated array of pointers into `strings`.
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// The errno the child wrote before it exited, or `None` once its exec
/// closed the pipe.
fn read_report(fd: RawFd) -> Option<i32> {
    let mut word = [0u8; 4];
    let mut at = 0;
    while at < word.len() {
        // SAFETY: reads into the rest of a local buffer.
        let got = unsafe { libc::read(fd, word[at..].as_mut_ptr().cast(), word.len() - at) };
        if got < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if got <= 0 {
            break;
        }
        at += got as usize;
    }
    match at {
        0 => None,
        4 => Some(i32::from_ne_bytes(word)),
        _ => Some(libc::EIO),
    }
}

/// What the cloned child needs, all prepared before the clone.
struct Child<'a> {
    stdio: [RawFd; 3],
    cwd: &'a CString,
    program: &'a CString,
    argv: &'a [*const libc::c_char],
    env: &'a [*const libc::c_char],
    setup: &'a ChildSetup,
    own_group: bool,
    report: RawFd,
}

impl Child<'_> {
    /// In the child: streams, directory, group, sandbox, exec. System
    /// calls only; never returns.
    fn run(&self) -> ! {
        let errno = match self.prepare() {
            // SAFETY: NUL-terminated program path and NULL-terminated
            // arrays of NUL-terminated strings, all alive until exec.
            Ok(()) => unsafe {
                libc::execve(self.program.as_ptr(), self.argv.as_ptr(), self.env.as_ptr());
                errno_of(&std::io::Error::last_os_error())
            },
            Err(err) => errno_of(&err),
        };
        let word = errno.to_ne_bytes();
        // SAFETY: writes a local buffer to the report pipe.
        unsafe { libc::write(self.report, word.as_ptr().cast(), word.len()) };
        sys::exit(127)
    }

    fn prepare(&self) -> std::io::Result<()> {
        onto_stdio(&self.stdio)?;
        // A direct init is already in the copy of its root, where the
        // directory is entered once the root is finished.
        if self.setup.direct().is_none() {
            sys::chdir(self.cwd)?;
        }
        if self.own_group {
            set_own_group()?;
        }
        self.setup.apply()
    }
}

fn set_own_group() -> std::io::Result<()> {
    // SAFETY: setpgid with integers: a group of its own.
    if unsafe { libc::setpgid(0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Starts a *warm* init for `setup`, which must be direct
/// ([`ChildSetup::direct`]): cloned into its namespaces as the caller's
/// parent's child and the leader of a process group of its own, it
/// applies what comes before the namespaces and its own steps, then runs
/// `serve` (which starts the command; see `Namespaces::serve_warm`).
/// Returns its pid as soon as it is made.
pub(crate) fn start_warm(
    setup: &ChildSetup,
    serve: &dyn Fn() -> Option<libc::pid_t>,
) -> std::io::Result<i32> {
    let Some(namespaces) = setup.direct() else {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    };
    let warm = Warm { setup, serve };
    let stack = Stack::new()?;
    let (pid, clone_error) = {
        let _blocked = BlockedSignals::new()?;
        namespaces.clone_in(|flags| {
            // SAFETY: as in `start`, without CLONE_VM: the child runs on
            // its own copy of `stack` and of `warm`, and never returns.
            let pid = unsafe {
                libc::clone(
                    warm_entry,
                    stack.top(),
                    libc::SIGCHLD | libc::CLONE_PARENT | flags,
                    std::ptr::from_ref(&warm).cast_mut().cast(),
                )
            };
            (pid, std::io::Error::last_os_error())
        })?
    };
    if pid < 0 {
        return Err(clone_error);
    }
    Ok(pid)
}

/// Clones the init of the attempt's PID namespace (see
/// `sandbox::attempt_init`) as the caller's parent's child, of which
/// `runner` is a pidfd; returns what the caller holds of it.
pub(crate) fn start_attempt_init(
    runner: Option<RawFd>,
) -> std::io::Result<crate::sandbox::AttemptNamespace> {
    let init = AttemptInit {
        runner,
        image: crate::sandbox::runner_image(),
    };
    let stack = Stack::new()?;
    let _blocked = BlockedSignals::new()?;
    crate::sandbox::make_attempt_namespace(|flags| {
        // SAFETY: as in `start_warm`: without CLONE_VM the child runs on
        // its own copy of `stack` and of `init`, and never returns.
        let pid = unsafe {
            libc::clone(
                attempt_init_entry,
                stack.top(),
                libc::SIGCHLD | flags,
                std::ptr::from_ref(&init).cast_mut().cast(),
            )
        };
        (pid, std::io::Error::last_os_error())
    })
}

struct AttemptInit {
    runner: Option<RawFd>,
    image: Option<crate::sandbox::InitImage>,
}

extern "C" fn attempt_init_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is this process's copy of the `AttemptInit` that
    // `start_attempt_init` passed to clone.
    let init = unsafe { &*arg.cast::<AttemptInit>() };
    crate::sandbox::serve_attempt_init(init.runner, init.image)
}

struct Warm<'a> {
    setup: &'a ChildSetup,
    serve: &'a dyn Fn() -> Option<libc::pid_t>,
}

extern "C" fn warm_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is this process's copy of the `Warm` that `start_warm`
    // passed to clone.
    let warm = unsafe { &*arg.cast::<Warm<'_>>() };
    let Some(namespaces) = warm.setup.direct() else {
        sys::exit(1)
    };
    if set_own_group().is_err() || warm.setup.apply_head().is_err() {
        sys::exit(1);
    }
    // The zygote's socket to the runner and its /dev/null: the runner sees
    // the zygote go when it goes, whatever warm init is left.
    for fd in 0..3 {
        // SAFETY: closing this process's copies of descriptors 0 to 2.
        unsafe { libc::close(fd) };
    }
    if namespaces.shared_pid {
        // The command itself, in the attempt's PID namespace: its root
        // finished and every layer of its own applied (none depends on
        // what it will run: capabilities, Landlock, keyring, seccomp, in
        // that order, as any command applies them before exec), it waits
        // for its image and execs it (`serve` returns only if it could
        // not). What it still does then the filter allows: receive,
        // `dup2`, `chdir`, exec.
        if namespaces.finish_warm_root().is_err() || warm.setup.apply_tail().is_err() {
            sys::exit(1);
        }
        (warm.serve)();
        sys::exit(127)
    }
    namespaces.serve_warm(warm.serve)
}
