//! `status` and `watch`: read-only views of the log.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use super::exit::Completion;
use crate::lifecycle::{DataDir, stale_attempts};
use crate::log::read_snapshot;
use crate::state::{Snapshot, State};
use crate::status::{StatusView, render_json, render_notes, render_text};

/// Replays the log and asks the OS which open attempts still have a runner.
fn view(dir: &DataDir) -> anyhow::Result<StatusView> {
    let snapshot: Snapshot = read_snapshot::<State>(&dir.log())?;
    Ok(view_of(dir, &snapshot))
}

/// `(job, attempt)` of the open attempts whose runner is gone.
pub(super) fn stale_set(dir: &DataDir, snapshot: &Snapshot) -> HashSet<(String, u32)> {
    stale_attempts(dir, &snapshot.state)
        .into_iter()
        .map(|(id, attempt, _)| (id, attempt))
        .collect()
}

fn view_of(dir: &DataDir, snapshot: &Snapshot) -> StatusView {
    StatusView::new(snapshot, &stale_set(dir, snapshot))
}

pub fn status(data: &Path, json: bool) -> anyhow::Result<Completion> {
    let dir = DataDir::new(data);
    let snapshot = read_snapshot::<State>(&dir.log())?;
    let view = view_of(&dir, &snapshot);
    if json {
        outln!("{}", render_json(&view));
    } else {
        out!("{}", render_text(&view, table_width()));
        for note in render_notes(&view) {
            errln!("{note}");
        }
    }
    // The process ends next: let the OS reclaim a large view at once
    // instead of freeing a million small strings first.
    std::mem::forget(view);
    std::mem::forget(snapshot);
    Ok(Completion::Success)
}

pub fn watch(data: &Path, interval: Duration) -> anyhow::Result<Completion> {
    let dir = DataDir::new(data);
    let tty = std::io::stdout().is_terminal();
    let mut last = String::new();
    loop {
        let view = view(&dir)?;
        let mut frame = render_text(&view, table_width());
        for note in render_notes(&view) {
            frame.push_str(&note);
            frame.push('\n');
        }
        if frame != last {
            let mut out = std::io::stdout().lock();
            if tty {
                // Home the cursor and clear the screen, then draw the frame.
                write!(out, "\x1b[H\x1b[2J{frame}")?;
            } else {
                if !last.is_empty() {
                    writeln!(out)?;
                }
                write!(out, "{frame}")?;
            }
            out.flush()?;
            last = frame;
        }
        if view.all_terminal() {
            return Ok(Completion::Success);
        }
        std::thread::sleep(interval);
    }
}

/// How wide tables may be: `COLUMNS` when set, else the width of the
/// terminal standard output is, else no limit (a pipe or a file).
pub(super) fn table_width() -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= 20)
    {
        return Some(columns);
    }
    let stdout = std::io::stdout();
    if !rustix::termios::isatty(&stdout) {
        return None;
    }
    rustix::termios::tcgetwinsize(&stdout)
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|&c| c >= 20)
}
