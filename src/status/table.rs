//! The status table, as `status`, `watch` and the batch summary draw it.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::view::{StatusRow, StatusView};
use crate::escape;
use crate::table::{Column, Shorten, Table, wrap};
use crate::words::count;

/// The columns and the fixed order in which they give way to a narrow
/// terminal: the family goes first, then a long state is cut after a word
/// (`running (waiting…`), three headers get shorter (`TRY`, `STEP`,
/// `ACCEPT`), ids longer than 20 columns end in `…`, then the last step,
/// the steps, the acceptance, the failure kind and the attempts go. The id
/// and the state always stay (an id too long even then is cut to fit).
fn columns(families: bool) -> Vec<Column> {
    vec![
        Column::new("JOB").shorten_at(6, Shorten::Middle, 20),
        Column::new("FAMILY").drop_at(1).omitted(!families),
        Column::new("STATE").shorten_at(2, Shorten::AtWords, 9),
        Column::new("ATTEMPT").short_header(3, "TRY").drop_at(11),
        Column::new("STEPS").right().drop_at(8),
        Column::new("LAST STEP").short_header(4, "STEP").drop_at(7),
        Column::new("FAILURE").drop_at(10),
        Column::new("ACCEPTANCE")
            .short_header(5, "ACCEPT")
            .drop_at(9),
    ]
}

/// One row's cells. Text from outside (ids, families, a provider's
/// message) is escaped before it is measured: it cannot drive the
/// terminal or break the columns.
fn cells<'a>(r: &StatusRow<'a>) -> [Cow<'a, str>; 8] {
    [
        escape::line(r.id),
        escape::line(r.family),
        match (&r.waiting, r.stale_lease) {
            (_, true) => Cow::Owned(format!("{} (runner gone)", r.state)),
            (Some(why), false) => Cow::Owned(format!(
                "{} (waiting for provider: {})",
                r.state,
                escape::line(why)
            )),
            (None, false) => Cow::Borrowed(r.state),
        },
        attempts(r.attempt, r.max_attempts),
        number(r.steps),
        escape::line(r.last_step.unwrap_or("-")),
        Cow::Borrowed(r.failure_kind.unwrap_or("-")),
        Cow::Borrowed(r.acceptance.unwrap_or("-")),
    ]
}

/// Below this, numbers and `used/allowed` pairs are written once and
/// borrowed: a table of many rows formats few of them.
const SMALL: u32 = 100;

/// `0` to `SMALL - 1`.
fn numbers() -> &'static [String] {
    static NUMBERS: OnceLock<Vec<String>> = OnceLock::new();
    NUMBERS.get_or_init(|| (0..SMALL).map(|n| n.to_string()).collect())
}

/// `used/allowed` for both below `SMALL`, at `used * SMALL + allowed`.
fn pairs() -> &'static [String] {
    static PAIRS: OnceLock<Vec<String>> = OnceLock::new();
    PAIRS.get_or_init(|| {
        (0..SMALL * SMALL)
            .map(|i| format!("{}/{}", i / SMALL, i % SMALL))
            .collect()
    })
}

fn number(n: u32) -> Cow<'static, str> {
    match numbers().get(n as usize) {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(n.to_string()),
    }
}

fn attempts(used: u32, allowed: u32) -> Cow<'static, str> {
    let small = (used < SMALL && allowed < SMALL).then_some((used * SMALL + allowed) as usize);
    match small.and_then(|i| pairs().get(i)) {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(format!("{used}/{allowed}")),
    }
}

/// The table of `rows` (the family column only when some family is not its
/// job's id in `view`).
pub(super) fn table<'a>(view: &StatusView, rows: impl Iterator<Item = StatusRow<'a>>) -> Table<'a> {
    let mut table = Table::new(columns(families(view)));
    table.reserve(rows.size_hint().0);
    for row in rows {
        table.push(cells(&row));
    }
    table
}

/// Whether the family column is shown: when some family is not its job's
/// id.
fn families(view: &StatusView) -> bool {
    view.jobs.iter().any(|r| r.family.is_some())
}

/// `3 jobs: 2 succeeded, 1 failed`, broken at spaces to fit `width`.
pub(super) fn counts_lines(view: &StatusView, width: Option<usize>) -> Vec<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for r in &view.jobs {
        let state = r.state.as_str();
        match counts.iter_mut().find(|(s, _)| *s == state) {
            Some((_, n)) => *n += 1,
            None => counts.push((state, 1)),
        }
    }
    let summary: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let line = format!(
        "{}{}{}",
        count(view.jobs.len(), "job"),
        if summary.is_empty() { "" } else { ": " },
        summary.join(", ")
    );
    match width {
        Some(width) => wrap(&line, width),
        None => vec![line],
    }
}

/// The human table, fitted to `width` columns when given (a terminal's,
/// or `COLUMNS`; see [`columns`] for what gives way first), then the
/// counts. Into a pipe nothing is cut.
pub(crate) fn render_text(view: &StatusView, width: Option<usize>) -> String {
    let mut out = match width {
        Some(_) => table(view, view.rows()).render(width),
        // Whole, as into a pipe: drawn without holding every cell.
        None => Table::new(columns(families(view)))
            .render_whole(&view.jobs, |summary| cells(&view.row(summary))),
    };
    for line in counts_lines(view, width) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_numbers_are_borrowed_and_read_as_formatted() {
        for n in [0, 7, 99, 100, 12345] {
            assert_eq!(number(n), n.to_string());
        }
        for (used, allowed) in [(0, 0), (1, 3), (99, 99), (3, 100), (100, 2)] {
            assert_eq!(attempts(used, allowed), format!("{used}/{allowed}"));
        }
        assert!(matches!(number(42), Cow::Borrowed(_)));
        assert!(matches!(attempts(2, 3), Cow::Borrowed(_)));
    }
}
