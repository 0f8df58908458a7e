//! The page itself, embedded in the binary: one HTML document, one script
//! and one style sheet. No inline script or style (the Content-Security-
//! Policy forbids both) and nothing from the network.

pub(super) const INDEX_HTML: &str = include_str!("assets/index.html");
pub(super) const APP_JS: &str = include_str!("assets/app.js");
pub(super) const APP_CSS: &str = include_str!("assets/app.css");
