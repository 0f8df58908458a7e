//! `watch`'s frame: the status table and its notes within the terminal's
//! lines, so the header stays in view however many jobs there are.

use super::table::{counts_lines, table};
use super::view::{StatusView, render_notes};
use crate::state::JobState;
use crate::table::{rows, wrap};
use crate::words::count;

/// The size of the terminal a frame is drawn on, as far as it is known
/// (`COLUMNS` and `LINES`, or the terminal's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Screen {
    pub columns: Option<usize>,
    pub lines: Option<usize>,
}

/// One frame: the table, the counts, the notes and then `trailer` (a line
/// the caller adds, escaped). Notes are broken at spaces to the width.
/// When it all takes more lines than the screen has (one is kept for the
/// cursor, so the screen never scrolls), the header, the counts and the
/// trailer stay; the rows shown are as many as fit, running and failed
/// jobs first, in the log's order, then a line `… N more jobs`; notes come
/// only after every row, as many as fit, then `… N more notes`.
pub(crate) fn render_frame(view: &StatusView, screen: Screen, trailer: Option<&str>) -> String {
    let broken = |text: &str| match screen.columns {
        Some(columns) => wrap(text, columns),
        None => vec![text.to_string()],
    };
    let notes: Vec<Vec<String>> = render_notes(view).iter().map(|n| broken(n)).collect();
    let counts = counts_lines(view, screen.columns);
    let trailer = trailer.map(broken).unwrap_or_default();
    let height = |lines: &[String]| -> usize {
        lines
            .iter()
            .map(|line| screen.columns.map_or(1, |c| rows(line, c)))
            .sum()
    };
    let note_heights: Vec<usize> = notes.iter().map(|n| height(n)).collect();
    let fixed = 1 + height(&counts) + height(&trailer);
    let everything = fixed + view.jobs.len() + note_heights.iter().sum::<usize>();
    let room = match screen.lines {
        Some(lines) if everything > lines.saturating_sub(1) => {
            lines.saturating_sub(1).saturating_sub(fixed)
        }
        _ => usize::MAX,
    };
    let mut more_jobs = None;
    let mut more_notes = None;
    let (shown, notes_shown) = if view.jobs.len() <= room {
        // Every row; then the notes, or those that fit with a line left
        // to say how many did not.
        let left = room - view.jobs.len();
        let mut taken = notes.len();
        if note_heights.iter().sum::<usize>() > left {
            let mut used = 0;
            taken = note_heights
                .iter()
                .take_while(|h| {
                    used += **h;
                    used < left
                })
                .count();
            if left > 0 {
                more_notes = Some(format!("… {}", count(notes.len() - taken, "more note")));
            }
        }
        ((0..view.jobs.len()).collect::<Vec<_>>(), taken)
    } else {
        let fit = room.saturating_sub(1);
        let mut order: Vec<usize> = (0..view.jobs.len()).collect();
        order.sort_by_key(|&i| (urgency(view.jobs[i].state), i));
        order.truncate(fit);
        order.sort_unstable();
        if room > 0 {
            more_jobs = Some(format!(
                "… {}",
                count(view.jobs.len() - order.len(), "more job")
            ));
        }
        (order, 0)
    };
    let rows = shown.iter().map(|&i| view.row(&view.jobs[i]));
    let mut out = table(view, rows).render(screen.columns);
    for line in more_jobs
        .iter()
        .chain(&counts)
        .chain(notes.iter().take(notes_shown).flatten())
        .chain(&more_notes)
        .chain(&trailer)
    {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Which rows a short screen shows first.
fn urgency(state: JobState) -> u8 {
    match state {
        JobState::Running => 0,
        JobState::Failed => 1,
        _ => 2,
    }
}
