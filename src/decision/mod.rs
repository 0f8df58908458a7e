//! The decision a model returns each step:
//!
//! - `union.rs`: the union of kinds.
//! - `parse.rs`: the lenient parser that finds one in a reply, with the
//!   linear-time object scan in `scan.rs`.
//! - `schema.rs`: its published JSON Schema.
//! - `parse_tests.rs`, `scan_tests.rs`: their tests.
//!
//! A leaf: it depends only on the log's event types, so the agent loop and the
//! providers (which send the schema and read tool calls) both use it and the
//! providers never depend on the agent loop (a test in `tests/cli/modules.rs`
//! keeps it so).

mod parse;
mod scan;
mod schema;
mod union;

#[cfg(test)]
mod parse_tests;
#[cfg(test)]
mod scan_tests;

pub(crate) use parse::parse_decision;
pub(crate) use schema::{decision_schema, decision_schema_text, field_schemas};
pub(crate) use union::{Decision, DecisionError, KINDS, json_type};
