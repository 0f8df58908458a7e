//! Tables for the terminal: columns with a header, an alignment, a turn to
//! be dropped and a way to be abbreviated; cells measured by display width
//! (a CJK character or an emoji is two columns), fitted to a width by
//! taking those turns in one fixed order. A line is never wider than the
//! width it is given, and nothing wraps: a cell that must shrink ends in
//! `…`, cut after a whole word (or, for a token such as a job id, anywhere).
//! The same table renders as Markdown too, whole and padded by display
//! width (a report is not fitted to a terminal).
//!
//! A leaf: it knows nothing of jobs or logs, and does no I/O. Its callers
//! escape text from outside before they hand it over.

mod column;
mod layout;
mod markdown;
mod text;

#[cfg(test)]
mod tests;

pub use column::{Abbreviation, Align, Column, Shorten};
pub use layout::{Shown, Table};
pub use text::{ELLIPSIS, cut, cut_words, rows, width, wrap};
