//! Integration tests: drive the real binary.
