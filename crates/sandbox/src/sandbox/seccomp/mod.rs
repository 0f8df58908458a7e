//! The seccomp layer: a deny list of system calls in the spirit of
//! Docker's default profile (`deny_list.rs`), compiled once per runner
//! process (`filter.rs`) and installed by the child as its last step
//! before exec, and a fresh session keyring per command (`keyring.rs`).
//!
//! Denied calls return `EPERM`, so programs degrade as they do in a
//! container (libuv without io_uring, a test without perf counters);
//! `clone3` returns `ENOSYS`, as under Docker: its flags sit in memory a
//! filter cannot read, and libc falls back to `clone`, whose flags it can
//! (`EPERM` there would break every thread). Calls through a non-native
//! ABI (i386's `int 0x80`, x32's numbers) are refused before anything
//! else, so no rule can be sidestepped through a second syscall table.
//!
//! The init and waiter of the PID namespace stay unfiltered; the command
//! and everything it starts are filtered. Nothing here runs a command,
//! and the child only makes system calls on what the runner built.

mod deny_list;
mod filter;
mod keyring;

pub use deny_list::{DENIED, DeniedGroup, denied_count};
pub(crate) use filter::{filter, install, probe};
pub(crate) use keyring::{join_fresh_session_keyring, keyrings_present};
