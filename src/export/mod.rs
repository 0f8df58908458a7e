//! Runs out to the viewers people already use, written beside the reports:
//! an Inspect AI log per family and model (`inspect/<family>@<model>.eval`,
//! what `inspect_ai.log.read_eval_log` reads and `inspect view` shows), a
//! Harbor ATIF trajectory per attempt (`atif/<instance>/<attempt>.json`),
//! and SWE-bench predictions (`predictions/<model>.jsonl`) for imported
//! SWE-bench instances. Everything comes from the report's rows, the
//! state's detail fold (each step's provider call and the log's words for
//! what it did), the manifest snapshots (the prompt, `[metadata]`) and the
//! attempts' artifacts (transcripts, patches). The renderers (`inspect.rs`,
//! `atif.rs`, `predictions.rs`, over the model of `trace.rs`) are pure;
//! `write.rs` is the only I/O. Never reads a workspace or the network, and
//! writes nothing outside its three folders of the report directory.

mod atif;
mod error;
mod inspect;
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
