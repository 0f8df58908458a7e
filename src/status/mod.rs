//! `status` and `watch` views: pure functions from a replayed log to text or
//! JSON. The only input besides the log is which open attempts have lost
//! their lease, which the caller finds out; the terminal's size is given.
//! Tables are drawn by the one table model (`crate::table`).

mod frame;
mod table;
mod view;

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;

pub(crate) use frame::{Screen, render_frame};
pub(crate) use table::render_text;
pub(crate) use view::{StatusView, checkpoint_note, render_json, render_notes};
