#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests: drive the real binary.

mod validate;
