//! A table as GitHub-flavoured Markdown: every column that is not omitted,
//! whole (Markdown is not fitted to a width), each cell padded to its
//! column's display width so the raw text reads aligned in a terminal.

use std::fmt::Write;

use super::column::Align;
use super::layout::Table;
use super::text::width;

/// The narrowest a column is drawn: the delimiter row's `---`.
const MIN_WIDTH: usize = 3;

impl Table<'_> {
    /// The header row, the delimiter row (`---`, or `---:` for a column
    /// aligned right) and one row per row of cells, each line ending in a
    /// line break; nothing when no column is shown. Cells are written as
    /// given: the caller escapes pipes, markup and line breaks.
    pub fn markdown(&self) -> String {
        let shown: Vec<usize> = (0..self.columns.len())
            .filter(|&i| !self.columns[i].omitted)
            .collect();
        if shown.is_empty() {
            return String::new();
        }
        let widths: Vec<usize> = shown
            .iter()
            .map(|&i| {
                width(&self.columns[i].header)
                    .max(self.widest[i])
                    .max(MIN_WIDTH)
            })
            .collect();
        let mut out = String::new();
        self.markdown_line(&mut out, &shown, &widths, |i| &self.columns[i].header);
        for (&i, &w) in shown.iter().zip(&widths) {
            let dashes = match self.columns[i].align {
                Align::Left => "-".repeat(w),
                Align::Right => format!("{}:", "-".repeat(w - 1)),
            };
            let _ = write!(out, "| {dashes} ");
        }
        out.push_str("|\n");
        let n = self.columns.len();
        for row in self.cells.chunks_exact(n) {
            self.markdown_line(&mut out, &shown, &widths, |i| &row[i]);
        }
        out
    }

    fn markdown_line<'c>(
        &self,
        out: &mut String,
        shown: &[usize],
        widths: &[usize],
        cell: impl Fn(usize) -> &'c str,
    ) {
        for (&i, &w) in shown.iter().zip(widths) {
            let text = cell(i);
            let pad = " ".repeat(w.saturating_sub(width(text)));
            let _ = match self.columns[i].align {
                Align::Left => write!(out, "| {text}{pad} "),
                Align::Right => write!(out, "| {pad}{text} "),
            };
        }
        out.push_str("|\n");
    }
}
