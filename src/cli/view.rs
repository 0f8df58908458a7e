//! `view`: start the local web viewer, print its URL, serve until Ctrl-C.

use std::path::PathBuf;

use super::exit::Completion;
use crate::view::Viewer;

pub(super) fn view(data: &[PathBuf], port: Option<u16>) -> anyhow::Result<Completion> {
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
