//! Integration tests: drive the real binary in temporary directories.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod batch;
mod containment;
mod controls;
mod exec;
mod harness;
mod hostile;
mod lifecycle;
mod log_integrity;
mod patch_rejected;
mod preflight;
mod race;
mod replies;
mod reports;
mod resume;
mod sandbox;
mod seed;
mod validate;
