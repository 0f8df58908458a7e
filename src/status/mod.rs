//! `status` and `watch` views: pure functions from a replayed log to text or
//! JSON. The only input besides the log is which open attempts have lost
//! their lease, which the caller finds out.

mod view;

pub use view::{
    STATUS_SCHEMA_VERSION, StatusRow, StatusView, render_json, render_notes, render_text,
};
