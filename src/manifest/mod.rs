//! Job manifests and provider files: reading TOML into validated,
//! normalized values (defaults applied, paths absolute), their content hash
//! and log snapshot, and expanding job arguments into files.
//!
//! Owns every message about a malformed manifest, each placed at
//! `file:line:column` with its field. Never runs anything, never reads the
//! source tree beyond checking it exists, and never holds a secret: a
//! provider key is only ever the *name* of a variable.

mod checked;
mod error;
mod expand;
mod fields;
mod load;
mod origin;
mod price;
mod provider_config;
mod provider_file;
mod raw;
mod snapshot;
mod source_map;
mod toolchains;
#[cfg(test)]
mod toolchains_tests;

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod load_tests;

pub use checked::{check_commands, load_checked};
pub use error::{Location, ManifestError};
pub use expand::{ExpandError, expand_jobs};
// The validated types are the protocol's (the log keeps them in its
// snapshots); this module makes them from TOML.
pub use crate::protocol::SNAPSHOT_FORMAT;
pub use crate::protocol::{
    ANTHROPIC_BASE_URL, AnthropicConfig, CommandConfig, CommandPreset, DEFAULT_ANTHROPIC_KEY_ENV,
    DEFAULT_ANTHROPIC_MAX_TOKENS, DEFAULT_COMMAND_OUTPUT_CAP, DEFAULT_MAX_RETRIES,
    DEFAULT_PROVIDER_TIMEOUT, OpenAiConfig, OpenAiMode, ProviderConfig, ProviderKind, ScriptConfig,
};
pub use crate::protocol::{
    Acceptance, Baseline, CACHE_PLACEHOLDER, DEFAULT_MAX_RESTARTS, DEFAULT_MEMORY,
    DEFAULT_PROCESSES, Limits, MAX_PROCESSES, MIN_MEMORY, Manifest, Oracle, ResultsFormat, Sandbox,
    SandboxMode, Setup, Trace,
};
pub use load::{load_manifest, parse_manifest};
pub use provider_file::{ProviderFile, load_provider_file, parse_provider_file};
