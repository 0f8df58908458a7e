//! What `cargo bench --bench bridge` and `--bench agent` measure, reached
//! from outside the crate: not part of the command line.

use std::path::Path;
use std::time::Duration;

/// Per-call times of `calls` scripted model calls through a running model
/// bridge, then to the same provider directly.
pub fn bridge_model_calls(calls: usize) -> std::io::Result<(Vec<Duration>, Vec<Duration>)> {
    crate::bridge::bench::model_calls(calls)
}

/// The time from launching agent `name` installed in `install` (leashed,
/// or `contained`) to its first model request, in its own sandbox or bare.
pub fn agent_start(
    name: &str,
    contained: bool,
    install: &Path,
    sandboxed: bool,
) -> std::io::Result<Duration> {
    let mode = if contained {
        crate::agents::Mode::Contained
    } else {
        crate::agents::Mode::Leashed
    };
    crate::runner::bench_agent_start(name, mode, install, sandboxed)
}
