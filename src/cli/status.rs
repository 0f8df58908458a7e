//! `status` and `watch`: read-only views of the log.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use super::exit::Completion;
use crate::lifecycle::{DataDir, stale_attempts};
use crate::log::{Snapshot, read_snapshot, read_snapshot_full};
use crate::state::{OpenAttempt, Summaries};
use crate::status::{
    Screen, StatusView, checkpoint_note, render_frame, render_json, render_notes, render_text,
};

/// `(job, attempt)` of the open attempts whose runner is gone.
pub(super) fn stale_set<'a>(
    dir: &DataDir,
    open: impl IntoIterator<Item = (&'a str, OpenAttempt)>,
) -> HashSet<(String, u32)> {
    stale_attempts(dir, open)
        .into_iter()
        .map(|(id, attempt, _)| (id, attempt))
        .collect()
}

/// The summaries of the log of `dir`, read from the writers' checkpoint
/// unless `full`.
fn summaries(dir: &DataDir, full: bool) -> anyhow::Result<Snapshot<Summaries>> {
    Ok(if full {
        read_snapshot_full(&dir.log())?
    } else {
        read_snapshot(&dir.log())?
    })
}

/// `(job, attempt)` of the open attempts of `summaries` whose runner is gone.
fn stale_of(dir: &DataDir, summaries: &Summaries) -> HashSet<(String, u32)> {
    // Rows may be made on the fly: the ids are kept while the leases are asked.
    let open: Vec<(String, OpenAttempt)> = summaries
        .rows()
        .filter_map(|row| row.open.map(|open| (row.id.clone(), open)))
        .collect();
    stale_set(dir, open.iter().map(|(id, open)| (id.as_str(), *open)))
}

pub(super) fn status(data: &Path, json: bool, full: bool) -> anyhow::Result<Completion> {
    let dir = DataDir::new(data);
    let snapshot = summaries(&dir, full)?;
    let stale = stale_of(&dir, &snapshot.state);
    let view = StatusView::new(snapshot, &stale);
    if json {
        outln!("{}", render_json(&view));
    } else {
        // The table can be large: written as it is, through the escaping
        // function, without a copy.
        let text = render_text(&view, table_width());
        std::io::stdout().write_all(crate::escape::block(&text).as_bytes())?;
        for note in render_notes(&view)
            .into_iter()
            .chain(checkpoint_note(&view))
        {
            errln_wrapped(&note);
        }
    }
    // The process ends next: let the OS reclaim a large view at once
    // instead of freeing a million small strings first.
    std::mem::forget(view);
    Ok(Completion::Success)
}

/// How long queued jobs may wait with no runner before `watch` says so:
/// long enough that a batch between enqueueing and claiming is not taken
/// for none.
const IDLE_NOTE_AFTER: Duration = Duration::from_secs(2);

pub(super) fn watch(data: &Path, interval: Duration) -> anyhow::Result<Completion> {
    let dir = DataDir::new(data);
    let tty = std::io::stdout().is_terminal();
    let mut last = String::new();
    let mut idle_since: Option<Instant> = None;
    loop {
        let snapshot = summaries(&dir, false)?;
        let stale = stale_of(&dir, &snapshot.state);
        let waiting = unattended(&snapshot.state, &stale);
        let view = StatusView::new(snapshot, &stale);
        idle_since = match (waiting.is_empty(), idle_since) {
            (true, _) => None,
            (false, None) => Some(Instant::now()),
            (false, since) => since,
        };
        let idle = idle_since
            .is_some_and(|since| since.elapsed() >= IDLE_NOTE_AFTER)
            .then(|| crate::escape::line(&idle_note(data, &waiting)).into_owned());
        // The screen is asked again for each frame: a terminal can be resized.
        let screen = Screen {
            columns: table_width(),
            lines: table_lines(),
        };
        let frame = render_frame(&view, screen, idle.as_deref());
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

/// The queued jobs when no runner holds any attempt of the log (no live
/// lease): nothing will start them until someone runs a command.
fn unattended(summaries: &Summaries, stale: &HashSet<(String, u32)>) -> Vec<String> {
    let running = summaries.rows().any(|row| {
        row.open
            .is_some_and(|open| !stale.contains(&(row.id.clone(), open.attempt)))
    });
    if running {
        return Vec::new();
    }
    summaries
        .rows()
        .filter(|row| row.state == crate::state::JobState::Queued)
        .map(|row| row.id.clone())
        .collect()
}

/// `nothing is running the 3 queued jobs (a, b, c): ...`
fn idle_note(data: &Path, queued: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut names = queued
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if queued.len() > SHOWN {
        names.push_str(&format!(" and {} more", queued.len() - SHOWN));
    }
    let (what, pronoun) = match queued.len() {
        1 => ("the queued job".to_string(), "it"),
        n => (format!("the {n} queued jobs"), "them"),
    };
    let data = data.display();
    format!(
        "nothing is running {what} ({names}): no runner holds {pronoun}. Start one with `agent-runtime batch {data} JOBS...` (or `agent-runtime run {data} ID` for one job); watch goes on waiting (Ctrl-C to stop)."
    )
}

/// Writes `text` as lines on stderr: on a terminal, broken at spaces to
/// its width (never inside a word; a word wider than the terminal, such
/// as a long job id, cut in the middle); whole otherwise.
pub(super) fn errln_wrapped(text: &str) {
    for line in fitted(text) {
        errln!("{line}");
    }
}

/// [`errln_wrapped`] on stdout.
pub(super) fn outln_wrapped(text: &str) -> std::io::Result<()> {
    for line in fitted(text) {
        outln!("{line}");
    }
    Ok(())
}

/// `text` as the lines a terminal of [`table_width`] shows it in.
fn fitted(text: &str) -> Vec<String> {
    match table_width() {
        Some(width) => crate::table::wrap(text, width)
            .iter()
            .map(|line| crate::table::cut_middle(line, width).into_owned())
            .collect(),
        None => vec![text.to_string()],
    }
}

/// How wide tables may be: `COLUMNS` when set, else the width of the
/// terminal standard output is, else no limit (a pipe or a file).
pub(super) fn table_width() -> Option<usize> {
    terminal_size("COLUMNS", 20, |w| w.ws_col)
}

/// How many lines `watch`'s frame may take: `LINES` when set, else the
/// height of the terminal standard output is, else no limit.
pub(super) fn table_lines() -> Option<usize> {
    terminal_size("LINES", 2, |w| w.ws_row)
}

/// `variable` when it holds a number of at least `least`, else the
/// terminal's own (`side` of its size), else `None`.
fn terminal_size(
    variable: &str,
    least: usize,
    side: fn(&rustix::termios::Winsize) -> u16,
) -> Option<usize> {
    if let Some(size) = std::env::var(variable)
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= least)
    {
        return Some(size);
    }
    let stdout = std::io::stdout();
    if !rustix::termios::isatty(&stdout) {
        return None;
    }
    rustix::termios::tcgetwinsize(&stdout)
        .ok()
        .map(|w| usize::from(side(&w)))
        .filter(|&c| c >= least)
}
