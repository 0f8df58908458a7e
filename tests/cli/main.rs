//! Integration tests: drive the real binary in temporary directories.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod acceptance_bypass;
mod batch;
mod build_cache;
mod check;
mod containment;
mod controls;
mod cost;
mod deps_job;
mod exec;
mod harness;
mod help;
mod hostile;
mod infra;
mod lifecycle;
mod log_integrity;
mod mock_model;
mod modules;
mod outage;
mod patch_rejected;
mod preflight;
mod python_job;
mod race;
mod replay;
mod replies;
mod reports;
mod resume;
mod sandbox;
mod seccomp;
mod seed;
mod setup;
mod stats;
mod toolchains;
mod validate;
