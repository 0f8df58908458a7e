//! Integration tests: drive the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod exec;
mod sandbox;
