//! `view`: a local, read-only web viewer of one or more data dirs, live
//! while a batch runs in another process.
//!
//! Owns: following the logs (`model.rs`: the state module's fold and the
//! report module's model, rebuilt as the logs grow; no reading of events
//! of its own), the JSON views of the pages (`rows.rs` the jobs, `page.rs`
//! one job, `compare.rs` two providers or two data dirs), the artifacts
//! beneath `runs/` (`artifacts.rs`, through `beneath/`), who may ask
//! (`access.rs`: the `Host` check against DNS rebinding and the token of
//! `token.rs`), the routes and their headers (`routes.rs`: a strict
//! Content-Security-Policy on everything), the HTTP edge (`server.rs`,
//! `tiny_http` on 127.0.0.1) and the page, embedded (`assets.rs`).
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
