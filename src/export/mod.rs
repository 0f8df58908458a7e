//! Runs out to the viewers people already use, written beside the reports: an
//! Inspect AI log per family and model (`inspect/<family>@<model>.eval`, what
//! `inspect_ai.log.read_eval_log` reads and `inspect view` shows), a Harbor
//! ATIF trajectory per attempt (`atif/<instance>/<attempt>.json`), and
//! SWE-bench predictions (`predictions/<model>.jsonl`) for imported SWE-bench
//! instances; an external agent's runs are logs of their own, `<model>+<agent>`
//! (the ATIF `agent` names it and its version). Everything comes from the report's rows, the state's detail fold
//! (each step's provider call and the log's words for what it did), the
//! manifest snapshots (the prompt, `[metadata]`) and the attempts' artifacts
//! (transcripts, patches).
//!
//! - `trace.rs`: the per-step model both formats read: each attempt's provider
//!   calls as the detail fold recorded them, the log's words for what each step
//!   did, the transcript's reply and observation with `trace = "full"`, the
//!   model's name.
//! - `inspect.rs`: Inspect AI's `.eval` members: header, summaries, one sample
//!   per instance with its score, messages and usage.
//! - `inspect_events.rs`: a sample's events: a model event per step, a tool
//!   event per decision carried out.
//! - `atif.rs`: Harbor's ATIF v1.4 trajectory per attempt.
//! - `predictions.rs`: SWE-bench predictions for instances with an
//!   `instance_id`.
//! - `write.rs`: the one I/O edge: reading the logs and artifacts, zipping,
//!   writing atomically, pruning files of earlier exports.
//! - `error.rs`: what can go wrong exporting.
//!
//! The renderers are pure. Never reads a workspace or the network, keeps no
//! reading of the log of its own (steps and words come from the state's detail
//! fold), and writes nothing outside its three folders of the report directory.

mod atif;
mod error;
mod inspect;
mod inspect_events;
mod predictions;
mod trace;
mod write;

pub(crate) use error::ExportError;
pub(crate) use write::write_exports;

/// `name` as one file name: characters outside `[A-Za-z0-9._@#+-]` become
/// `_` (a model named `org/model` is `org_model`).
pub(crate) fn file_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._@#+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "_".to_string(),
        _ => cleaned,
    }
}
