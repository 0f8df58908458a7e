//! `[limits] memory` and `[limits] processes`: defaults, values, refusals,
//! and the content hash of manifests that do not use them.

use super::load_tests::{Fixture, MINIMAL, with};
use super::*;
use crate::protocol::units::ByteSize;

#[test]
fn defaults_are_the_sandbox_defaults() {
    let fx = Fixture::new();
    let m = fx.load(MINIMAL).unwrap();
    assert_eq!(m.limits.memory, ByteSize(4 << 30));
    assert_eq!(m.limits.processes, 512);
    assert_eq!(m.limits.memory.bytes(), crate::sandbox::DEFAULT_MEMORY);
    assert_eq!(m.limits.processes, crate::sandbox::DEFAULT_PROCESSES);
    assert_eq!(Limits::default().memory, DEFAULT_MEMORY);
    assert_eq!(Limits::default().processes, DEFAULT_PROCESSES);
}

#[test]
fn sizes_and_counts_are_read() {
    let fx = Fixture::new();
    let cases: &[(&str, u64, u64)] = &[
        ("memory = \"512MiB\"\nprocesses = 64\n", 512 << 20, 64),
        ("memory = \"16GiB\"\n", 16 << 30, 512),
        ("memory = 1048576\nprocesses = 1\n", 1 << 20, 1),
        ("memory = \"1MiB\"\nprocesses = 4194304\n", 1 << 20, 1 << 22),
    ];
    for (limits, memory, processes) in cases {
        let m = fx.load(&with(&format!("[limits]\n{limits}"))).unwrap();
        assert_eq!(m.limits.memory, ByteSize(*memory), "{limits}");
        assert_eq!(m.limits.processes, *processes, "{limits}");
    }
}

#[test]
fn refusals_name_file_line_column_and_field() {
    let fx = Fixture::new();
    let cases: &[(&str, &str)] = &[
        (
            "memory = 0",
            "jobs/job.toml:7:10: limits.memory: must be greater than zero",
        ),
        (
            "memory = \"512KiB\"",
            "jobs/job.toml:7:10: limits.memory: must be at least 1MiB (no program runs in less)",
        ),
        (
            "memory = \"4GB\"",
            "jobs/job.toml:7:10: limits.memory: invalid size \"4GB\" (use e.g. 512, 16KiB, 1MiB)",
        ),
        (
            "memory = -1",
            "jobs/job.toml:7:10: limits.memory: invalid size -1 (must not be negative)",
        ),
        (
            "memory = true",
            "jobs/job.toml:7:10: limits.memory: expected a size such as 512, \"16KiB\" or \"1MiB\", found boolean",
        ),
        (
            "memory = \"99999999999GiB\"",
            "jobs/job.toml:7:10: limits.memory: invalid size \"99999999999GiB\"",
        ),
        (
            "processes = 0",
            "jobs/job.toml:7:13: limits.processes: must be at least 1",
        ),
        (
            "processes = 4194305",
            "jobs/job.toml:7:13: limits.processes: must be at most 4194304 (the kernel's largest process id)",
        ),
        (
            "processes = 1000000000000",
            "jobs/job.toml:7:13: limits.processes: must be at most 4194304",
        ),
        (
            "processes = -5",
            "jobs/job.toml:7:13: limits.processes: invalid value: integer `-5`, expected u64",
        ),
        (
            "processes = \"512\"",
            "jobs/job.toml:7:13: limits.processes: invalid type: string \"512\", expected u64",
        ),
    ];
    for (limits, expected) in cases {
        let got = fx.error(&with(&format!("[limits]\n{limits}\n")));
        assert!(
            got.starts_with(expected),
            "for {limits:?}\n got: {got}\nwant: {expected}"
        );
    }
}

#[test]
fn manifests_without_the_keys_keep_their_stored_form_and_hash() {
    let fx = Fixture::new();
    let base = fx.load(MINIMAL).unwrap();
    // The stored form (and so the hash) is what it was before the keys
    // existed: snapshots already in logs still load and match.
    let snapshot = base.to_snapshot();
    let wire = serde_json::to_value(&snapshot).unwrap();
    let limits = wire["manifest"]["limits"].as_object().unwrap();
    assert!(!limits.contains_key("memory"), "{limits:?}");
    assert!(!limits.contains_key("processes"), "{limits:?}");
    let rebuilt = Manifest::from_snapshot(&snapshot).unwrap();
    assert_eq!(rebuilt.limits, base.limits);
    // Spelling the defaults out changes nothing.
    let spelled = fx
        .load(&with("[limits]\nmemory = \"4GiB\"\nprocesses = 512\n"))
        .unwrap();
    assert_eq!(spelled.hash(), base.hash());
}

#[test]
fn other_values_change_the_hash_and_survive_the_snapshot() {
    let fx = Fixture::new();
    let base = fx.load(MINIMAL).unwrap().hash();
    for limits in ["memory = \"2GiB\"", "processes = 64"] {
        let m = fx.load(&with(&format!("[limits]\n{limits}\n"))).unwrap();
        assert_ne!(m.hash(), base, "{limits}");
        let snapshot = m.to_snapshot();
        let rebuilt = Manifest::from_snapshot(&snapshot).unwrap();
        assert_eq!(rebuilt.limits, m.limits, "{limits}");
        assert_eq!(rebuilt.hash(), m.hash(), "{limits}");
    }
    let m = fx
        .load(&with("[limits]\nmemory = \"2GiB\"\nprocesses = 64\n"))
        .unwrap();
    let wire = serde_json::to_value(m.to_snapshot()).unwrap();
    assert_eq!(wire["manifest"]["limits"]["memory"], "2GiB");
    assert_eq!(wire["manifest"]["limits"]["processes"], 64);
}
