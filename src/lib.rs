//! agent-runtime: runs automated coding tasks with language models on a
//! short leash. See `docs/architecture.md` for the module map.

pub mod agent;
pub mod batch;
pub mod cancel;
pub mod cli;
pub mod exec;
pub mod hash;
pub mod lifecycle;
pub mod log;
pub mod manifest;
pub mod provider;
pub mod report;
pub mod runner;
pub mod sandbox;
pub mod state;
pub mod status;
pub mod units;
