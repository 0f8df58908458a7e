//! `cargo bench --bench bridge`: what the model bridge adds to a model
//! call. 1,000 scripted calls go through a running bridge as an agent
//! makes them (an HTTP POST of an Anthropic Messages request, read,
//! renamed, admitted and charged by the meter, answered by the scripted
//! provider, written back), and 1,000 more to the same provider directly;
//! the medians of each.
//!
//! Prints one line to stdout:
//! `BENCH bridge per_call_us=<n> direct_us=<n> added_us=<n>`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

const CALLS: usize = 1000;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let (bridged, direct) = agent_runtime::cli::bench::bridge_model_calls(CALLS).unwrap();
    let (bridged, direct) = (median(bridged), median(direct));
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "BENCH bridge per_call_us={:.1} direct_us={:.1} added_us={:.1}",
        us(bridged),
        us(direct),
        us(bridged.saturating_sub(direct))
    );
}
