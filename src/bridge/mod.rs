//! The model bridge: a local endpoint per attempt that answers an external
//! agent's model calls from the job's provider and serves the tool
//! gateway, so an unmodified agent runs on the runtime's leash.
//!
//! - `naming.rs`: the gateway's tools as the agent names them and as the
//!   runtime does, and the leash's strip of every other tool.
//! - `gateway.rs`: the tool gateway, an MCP server whose tools are the
//!   decision kinds.
//! - `server.rs`: the endpoint (axum on a tokio runtime of its own thread),
//!   passing each request on to the attempt's thread.
//!
//! - `bench.rs`: a model call's cost through the bridge and directly, for
//!   `cargo bench --bench bridge`.
//!
//! The dialects themselves are `wire/`'s; this module serves them.

#[doc(hidden)]
pub(crate) mod bench;
mod gateway;
mod naming;
mod server;

pub(crate) use naming::Naming;
pub(crate) use server::Bridge;
