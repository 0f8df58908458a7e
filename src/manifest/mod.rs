//! Job manifests and provider files: reading TOML into validated,
//! normalized values (defaults applied, paths absolute), their content hash
//! and log snapshot, and expanding job arguments into files.
//!
//! Owns every message about a malformed manifest, each placed at
//! `file:line:column` with its field:
//!
//! - `raw.rs`: the raw TOML shapes; every table refuses unknown keys.
//! - `shape.rs`: the shape of each file in words: every table, its keys and the
//!   kind of value each takes, held in step with `raw.rs` and
//!   `docs/manifest.md` by `shape_tests.rs`.
//! - `load_shape.rs`: the walk that checks a document against the shape first:
//!   every unknown key and wrong value at once, "not a job manifest" for a file
//!   that is none.
//! - `suggest.rs`: the closest known name for a misspelt one, with `strsim`.
//! - `load.rs`: field checks with `file:line:col` errors that go on past the
//!   first, so a file's errors are reported together in file order; `fields.rs`
//!   the checks of single fields, `source_map.rs` where each key is,
//!   `origin.rs` what a loaded manifest knows of its file.
//! - `toolchains.rs`: `[sandbox] toolchains`.
//! - `provider_config.rs`, `provider_file.rs`, `price.rs`: the `[provider]`
//!   table, provider files (`--provider FILE`) and `[price]`.
//! - `checked.rs`: the checks that need the executor's allow-rule matcher, with
//!   the allow rule that would admit a refused verify.
//! - `snapshot.rs`: the content hash and the log's snapshot.
//! - `expand.rs`: expanding job arguments (files, directories, globs).
//! - `error.rs`: the errors, each naming file, line, column and field.
//! - Tests: `load_tests.rs`, `load_shape_tests.rs`, `shape_tests.rs`,
//!   `provider_tests.rs`, `limits_tests.rs`, `toolchains_tests.rs`.
//!
//! Never runs anything, never touches a workspace or reads the source tree
//! beyond checking it exists, and never holds a secret: a provider key is only
//! ever the *name* of a variable.

mod checked;
mod error;
mod expand;
mod fields;
mod load;
mod load_shape;
mod origin;
mod price;
mod provider_config;
mod provider_file;
mod raw;
mod shape;
mod snapshot;
mod source_map;
mod suggest;
mod toolchains;
#[cfg(test)]
mod toolchains_tests;

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod load_shape_tests;
#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod provider_tests;

pub(crate) use checked::{admitting_rule, check_commands, load_checked};
pub(crate) use error::ManifestError;
pub(crate) use expand::expand_jobs;
// The validated types are the protocol's (the log keeps them in its
// snapshots); this module makes them from TOML.
pub(crate) use crate::protocol::{
    Acceptance, Baseline, CACHE_PLACEHOLDER, DEFAULT_MEMORY, DEFAULT_PROCESSES, MAX_PROCESSES,
    MIN_MEMORY, Manifest, Oracle, ResultsFormat, Sandbox, SandboxMode, Setup, Trace,
};
pub(crate) use crate::protocol::{
    AnthropicConfig, CommandConfig, CommandPreset, OpenAiConfig, OpenAiMode, ProviderConfig,
    ScriptConfig,
};
pub(crate) use load::parse_manifest;
pub(crate) use provider_file::{ProviderFile, load_provider_file};
pub(crate) use suggest::did_you_mean;

#[cfg(test)]
pub(crate) use crate::protocol::ProviderKind;

#[cfg(test)]
pub(crate) use crate::protocol::Limits;
#[cfg(test)]
pub(crate) use crate::protocol::SNAPSHOT_FORMAT;
#[cfg(test)]
pub(crate) use crate::protocol::{
    ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_KEY_ENV, DEFAULT_ANTHROPIC_MAX_TOKENS,
    DEFAULT_COMMAND_OUTPUT_CAP, DEFAULT_MAX_RETRIES, DEFAULT_PROVIDER_TIMEOUT,
};
#[cfg(test)]
pub(crate) use load::load_manifest;
#[cfg(test)]
pub(crate) use provider_file::parse_provider_file;
