//! Redactions for snapshots of what the binary prints: what differs
//! between machines and runs (temporary paths, the checkout, times,
//! durations, token estimates, pids) becomes a placeholder, so a snapshot
//! holds on any machine.

use std::path::Path;

/// Settings whose filters redact `tmp` (a test's temporary directory), the
/// checkout, and times, durations, token counts and pids.
pub fn redacted(tmp: Option<&Path>) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    if let Some(tmp) = tmp {
        // The directory as given and as the kernel resolves it (a /tmp
        // that is a link).
        if let Ok(real) = tmp.canonicalize() {
            settings.add_filter(&literal(&real.to_string_lossy()), "[TMP]");
        }
        settings.add_filter(&literal(&tmp.to_string_lossy()), "[TMP]");
    }
    settings.add_filter(&literal(env!("CARGO_MANIFEST_DIR")), "[REPO]");
    // What a command cost is the machine's: its figures, whichever are known.
    settings.add_filter(
        r"(, cpu \d+(\.\d+)? (ms|s))?(, memory peak \d+(\.\d+)? [KMG]?i?B)?(, pids peak \d+)?",
        "",
    );
    settings.add_filter(r"\b\d+(\.\d+)? (ms|s)\b", "[DURATION]");
    settings.add_filter(r"\b\d+ m \d+ s\b", "[DURATION]");
    settings.add_filter(r"\b\d+ in / \d+ out\b", "[N] in / [N] out");
    settings.add_filter(r"\bpid \d+\b", "pid [PID]");
    settings
}

/// A regular expression matching `text` literally.
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
