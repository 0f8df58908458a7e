//! `view`: start the local web viewer, print its URL, serve until Ctrl-C.

use std::path::{Path, PathBuf};

use super::exit::Completion;
use crate::view::Viewer;

pub(super) fn view(data: &[PathBuf], port: Option<u16>) -> anyhow::Result<Completion> {
    for dir in data {
        if let Some(owner) = reports_of(dir) {
            anyhow::bail!(
                "{}: a reports directory, not a data dir; its data dir is {} (view {})",
                dir.display(),
                owner.display(),
                owner.display()
            );
        }
    }
    let viewer = Viewer::bind(data, port)?;
    outln!("view: {}", viewer.url());
    errln!(
        "serving {} read-only on 127.0.0.1 (the token in the URL is the key; Ctrl-C to stop)",
        match data {
            [one] => one.display().to_string(),
            many => format!("{} data dirs", many.len()),
        }
    );
    viewer.serve()
}

/// The data dir `dir` holds the reports of, when `dir` is a reports
/// directory (its `results.json`, no log of its own) inside one.
fn reports_of(dir: &Path) -> Option<PathBuf> {
    if dir.join("events.log").exists() || !dir.join("results.json").is_file() {
        return None;
    }
    let parent = std::path::absolute(dir).ok()?.parent()?.to_path_buf();
    parent.join("events.log").is_file().then_some(parent)
}
