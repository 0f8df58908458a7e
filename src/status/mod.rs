//! `status` and `watch` views: pure functions from a replayed log to text or
//! JSON. The only input besides the log is which open attempts have lost their
//! lease, which the caller finds out; the terminal's size is given.
//!
//! - `view.rs`: the rows and notes; a view holds each job's summary once, and a
//!   row borrows from it when it is drawn or written.
//! - `table.rs`: the status table's columns and the order they give way in,
//!   drawn by the one table model (`crate::table`); also the batch summary's.
//! - `frame.rs`: `watch`'s frame within the screen's lines, header kept, `… N
//!   more jobs`.
//! - `fixture.rs`, `tests.rs`: rows as a batch in the middle of its run has
//!   them, and the views' tests.
//!
//! Never reads files itself or asks the terminal its size.

mod frame;
mod table;
mod view;

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;

pub(crate) use frame::{Screen, render_frame};
pub(crate) use table::render_text;
pub(crate) use view::{StatusView, capped_causes, checkpoint_note, render_json, render_notes};
