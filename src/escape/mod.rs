//! Text from outside the runtime made safe to show. Every string that came
//! from a model, a workspace or a command (paths, summaries, test names,
//! causes, error lines) passes through [`escape`] before it reaches a
//! terminal or a human report, and through [`to_json_pretty`] before it
//! reaches a JSON document: control characters (C0, DEL, C1) and the
//! characters that reorder or hide text (bidi embeddings, overrides and
//! isolates, directional marks, line and paragraph separators) never get
//! through raw.
//!
//! - `visible.rs`: the one escaping function: those characters as visible
//!   `\u{..}` escapes, one line or several.
//! - `json.rs`: a serde_json formatter that writes the same characters as
//!   `\uXXXX` (results.json, `status --json`, `check --json`).
//!
//! This module owns the set of such characters and how each is shown; it
//! never decides what a view contains.

mod json;
mod visible;

pub(crate) use json::{
    to_json_pretty, write_json_for_markup, write_json_for_markup_to, write_json_pretty,
};
pub(crate) use visible::{block, line};
