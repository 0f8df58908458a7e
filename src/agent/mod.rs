//! The agent loop's pure parts: the decision union a model returns, its
//! parser and its published JSON Schema.
//!
//! Owns what counts as a well-formed decision. Never executes one: checking
//! paths and commands, and running them, belong to the executor.

mod decision;
mod parse;
mod schema;

#[cfg(test)]
mod parse_tests;

pub use decision::{
    Decision, DecisionError, FieldSpec, FieldType, KINDS, KindSpec, decision_from_object,
    json_type, known_kinds,
};
pub use parse::parse_decision;
pub use schema::{decision_schema, decision_schema_text};
