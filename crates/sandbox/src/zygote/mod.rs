//! The attempt's zygote: a small process that starts the commands, so a
//! spawn never copies the runner's address space.
//!
//! A sandboxed spawn from the runner forks it (`pre_exec` needs a fork),
//! and the PID namespace's waiter and init fork again: each fork copies
//! the page tables of a runner that holds a whole sweep's state, and the
//! runner then takes copy-on-write faults while the child sets up. The
//! cost of a step grew with the sweep. The zygote is a fresh exec of the
//! runner's binary ([`serve_if_asked`] at the top of its `main`), started
//! once per attempt's commands; the runner still decides and builds every
//! layer ([`prepare`](crate::sandbox::prepare)) and hands the result over
//! (`sandbox::Handoff`), and the zygote forks the command as the runner's
//! child (see `server.rs`): where every command has a cgroup and Landlock
//! scopes its signals, into the attempt's one PID namespace, which the
//! zygote makes when first asked (`sandbox/attempt_init.rs`).
//!
//! - `client.rs`: the runner's handle, started from a keeper thread that lives
//!   as long as it and ends it on drop.
//! - `server.rs`: the zygote's loop, which makes the attempt's PID namespace
//!   when first asked and clones each command as the runner's child
//!   (`CLONE_PARENT`), into that namespace where its setup says so, and applies
//!   the handed-over setup before exec.
//! - `warm.rs`: the warm init made while a command runs, in which the next
//!   command with the same sandbox starts, or in the attempt's namespace the
//!   next command's own process, every layer applied, waiting for its image.
//! - `wire.rs`: the request and reply with their descriptors over a
//!   `SOCK_SEQPACKET` pair.
//! - `sched.rs`: its scheduling: the zygote and the warm commands it makes rest
//!   as `SCHED_IDLE`, lifted before the runner waits on them or sends a warm
//!   command anything to run.
//!
//! A command cannot reach the zygote: in its PID namespace the zygote has
//! no pid; Landlock scopes its signals; it keeps no capability to trace;
//! the zygote is not dumpable and its socket never reaches a command.
//! If the zygote dies, [`Zygote::spawn`] says [`ZygoteError::Lost`] and
//! the executor starts that command and the later ones itself.
//!
//! It never decides a layer (the runner's `prepare` does), never holds a
//! command's output, and never outlives its runner.

mod client;
mod sched;
mod server;
mod warm;
mod wire;

pub use client::{Zygote, ZygoteError, available};

/// In a binary that may serve as its own zygote, call this first in
/// `main`: when this process was started as a zygote, it serves until its
/// runner closes the connection and returns the exit code; otherwise it
/// notes that this binary can serve and returns `None`.
pub fn serve_if_asked() -> Option<std::process::ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new(wire::ARG)) {
        client::SERVES.store(true, std::sync::atomic::Ordering::Relaxed);
        return None;
    }
    let runner = args
        .next()
        .and_then(|arg| arg.to_str()?.parse::<i32>().ok());
    Some(server::serve(runner))
}
