//! The page itself, embedded in the binary: one HTML document, its script
//! and style sheet, and the job-detail renderer and its rules, which
//! `report.html` embeds too (one renderer for both). No inline script or style (the Content-Security-
//! Policy forbids both) and nothing from the network.

pub(super) const INDEX_HTML: &str = include_str!("assets/index.html");
pub(super) const APP_JS: &str = include_str!("assets/app.js");
pub(super) const APP_CSS: &str = include_str!("assets/app.css");
pub(super) const DETAIL_JS: &str = crate::report::DETAIL_SCRIPT;
pub(super) const DETAIL_CSS: &str = crate::report::DETAIL_STYLE;
