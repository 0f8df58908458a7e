//! `view`: a local, read-only web viewer of one or more data dirs, live
//! while a batch runs in another process.
//!
//! - `model.rs`: the data dirs followed as their logs grow: a `log::Follower`
//!   per log, read-only, its records folded by the state module and the report
//!   model rebuilt by `report_from_logs`; no reading of events of its own.
//! - `rows.rs`, `page.rs`, `compare.rs`: the pages' JSON: the runs and jobs;
//!   one job with its prompt, failing tests and their excerpts from
//!   `tests/excerpts.json`; two providers or two data dirs through the report's
//!   paired comparison.
//! - `json.rs`: every string through the escaping function, and `<`, `>`, `&`
//!   written as JSON escapes.
//! - `artifacts.rs`: artifacts beneath `runs/` only, through `beneath/`.
//! - `access.rs`: who may ask: the `Host` check against DNS rebinding and the
//!   token of `token.rs`.
//! - `routes.rs`: the routes and their headers, a strict
//!   Content-Security-Policy on everything; `query.rs` splits a request target;
//!   `routes_tests.rs` tests them.
//! - `server.rs`: the HTTP edge, `tiny_http` on 127.0.0.1.
//! - `assets.rs`: the page, embedded from `assets/`: one HTML file, a script
//!   that builds the DOM with `textContent`, a style sheet.
//! - `error.rs`: why a viewer could not start.
//!
//! Never does: write anything, listen beyond 127.0.0.1, serve a file from
//! outside a data dir's `runs/` (a workspace, a cache, a path through a
//! symlink), put data into markup (the page builds its DOM from JSON with
//! `textContent`), or load anything from the network.

mod access;
mod artifacts;
mod assets;
mod compare;
mod error;
mod json;
mod model;
mod page;
mod query;
mod routes;
mod rows;
mod server;
mod token;

pub(crate) use server::Viewer;
