//! The bounded executor: every command the runtime runs goes through here.
//!
//! It owns checking an argv against the allow rules, resolving the program
//! from a fixed search path, the scrubbed environment, spawning in an own
//! process group inside the sandbox, timeouts and cancels (SIGTERM, grace,
//! SIGKILL to the whole group), and bounded head/tail capture that drains
//! pipes to their end.
//!
//! - `allow.rs`: the allow rules.
//! - `search_path.rs`: the fixed search path, with a job's toolchain
//!   directories first; `resolve.rs`: the real paths behind its links, found by
//!   the runner and granted; `toolchain.rs`: the runner's Rust toolchain,
//!   located once.
//! - `env.rs`: the cleared environment and its small allowlisted set.
//! - `output.rs`: head/tail capture of one stream; `pipes.rs`: draining stdout
//!   and stderr with `poll`.
//! - `process.rs`: spawning in a process group, with a pidfd to wake on exit.
//! - `child.rs`: the child between clone and exec, `CLONE_VM` where its setup
//!   never forks, shared with the zygote.
//! - `scratch.rs`: the private `HOME` and `TMPDIR` of a command without its own
//!   root, made ahead and removed off the command's path.
//! - `run.rs`: one command: timeouts, TERM→grace→KILL, bounded drain.
//! - `request.rs`: what the executor is asked to run and reports back;
//!   `error.rs`: bad rules, refused argv and failures to run.
//! - `resources.rs`: what a command cost: CPU time from the `wait4` rusage of
//!   the reaped leader, memory and task peaks from its cgroup.
//! - `heap.rs`: the runner's one heap, set at start so freed memory is reused
//!   across its threads.
//!
//! It never interprets a shell string, never resolves a program from a
//! path or a `PATH` a model controls, never passes the runner's environment
//! through, never lets a child's output grow memory without bound, and
//! never prints.

mod allow;
mod child;
mod env;
mod error;
mod heap;
mod output;
mod pipes;
mod process;
mod request;
mod resolve;
mod resources;
mod run;
mod scratch;
mod search_path;
mod toolchain;

pub use allow::{AllowList, AllowRule};
pub(crate) use child::{
    Image, NotStarted, Placement, exec_here, start as start_child, start_attempt_init, start_warm,
};
pub use env::command_env;
pub use error::{AllowError, ExecError, Refusal};
pub use heap::share_one_heap;
pub use output::{Capture, Captured};
pub(crate) use process::{Spawned, Streams, pidfd, reap as reap_pid};
pub use request::{DEFAULT_KILL_GRACE, ExecOutcome, ExecRequest};
pub use resources::Resources;
pub use run::{CANCEL_GRACE, DRAIN_LIMIT, run};
pub use scratch::remove_pending_scratch;
pub use search_path::SearchPath;
pub use toolchain::Toolchain;
