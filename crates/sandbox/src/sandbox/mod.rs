//! The Linux sandbox around each command: Landlock (filesystem, TCP and
//! signal scoping), a private network namespace, and resource limits.
//!
//! It owns deciding which layers a policy gets on this machine (`off`,
//! `auto` takes what is available, `required` fails closed with
//! `sandbox_unavailable`), building them in the runner, and the small
//! allocation-free step that applies them in the child just before exec.
//! It never spawns commands itself (the executor does), never widens a
//! grant it was not given, and never silently drops a layer `required`
//! asked for.

mod caps;
mod error;
mod landlock;
mod network;
mod policy;
mod prepare;
mod probe;
mod rlimits;

pub use caps::protect_runner;
pub use error::SandboxError;
pub use network::NetIsolation;
pub use policy::{DEFAULT_MEMORY, DEFAULT_PROCESSES, ResourceLimits, SandboxMode, SandboxPolicy};
pub use prepare::{ChildSetup, Grants, Prepared, prepare};
pub use probe::{LayerStatus, Probe, probe};
