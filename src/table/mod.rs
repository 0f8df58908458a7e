//! Tables for the terminal: the one table model of `status`, `watch`'s frame,
//! the batch summary and `check`'s table, and of `report.md`'s tables. Columns
//! with a header, an alignment, a turn to be dropped and a way to be
//! abbreviated; cells measured by display width (a CJK character or an emoji is
//! two columns), fitted to a width by taking those turns in one fixed order. A
//! line is never wider than the width it is given, and nothing in a table
//! wraps: a cell that must shrink ends in `…`, cut after a whole word (or, for
//! a token such as a job id, anywhere). The same table renders as Markdown too,
//! whole and padded by display width (a report is not fitted to a terminal).
//!
//! - `column.rs`: a column: its header, alignment, turn to be dropped and
//!   abbreviation (a shorter header, cells shortened with `…`).
//! - `layout.rs`: a table's rows measured with `unicode-width`, fitted to a
//!   width by the columns' turns, then the last resort, or drawn whole, as into
//!   a pipe; measured and drawn in parallel blocks of rows.
//! - `text.rs`: display width, cutting, wrapping at spaces (for the lines
//!   around a table) and counting a line's terminal rows.
//! - `markdown.rs`: the same table as Markdown, every column whole, cells
//!   padded to their display width, `---:` for a column aligned right.
//! - `tests.rs`: lines that fit, by display width.
//!
//! A leaf: it knows nothing of jobs or logs, and does no I/O. It never splits a
//! word across lines, and never escapes: its callers escape text from outside
//! before they hand it over.

mod column;
mod layout;
mod markdown;
mod text;

#[cfg(test)]
mod tests;

pub use column::{Abbreviation, Align, Column, Shorten};
pub use layout::{Shown, Table};
pub use text::{ELLIPSIS, cut, cut_middle, cut_words, rows, width, wrap};
