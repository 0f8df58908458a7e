//! The protocol: what the event log records and everything its events
//! carry — the event vocabulary and its kinds, job ids, the manifest as the
//! log keeps it, prices, test inventories and verdicts, and the quantities
//! (durations, byte sizes) they are written in.
//!
//! A leaf: it depends on no other module of the crate, so every layer can
//! name an event without depending on the log's I/O or on the reducer that
//! interprets it. It holds data and the checks that make a value valid
//! (a job id), never I/O or policy.

pub mod units;

mod event;
mod integrity;
mod job_id;
mod manifest;
mod price;
mod provider;
mod record;
mod resources;
mod snapshot;
mod verdict;

pub use event::{
    BaselineOrigin, CallFigures, CheckResult, CommandFor, DecisionKind, Event, FailureKind,
    Outcome, TestRuns, VerifyTrigger,
};
pub use integrity::{
    CanaryBaseline, CanaryCheck, Integrity, SIGNALS_KEPT, Signal, SignalKind, TwinBaseline,
    TwinCheck,
};
pub use job_id::{IdError, MAX_ID_LEN, instance_id, validate_id, validate_instance_id};
pub(crate) use manifest::Origin;
pub use manifest::{
    Acceptance, Baseline, CACHE_PLACEHOLDER, DEFAULT_MAX_RESTARTS, DEFAULT_MEMORY,
    DEFAULT_PROCESSES, Limits, MAX_PROCESSES, MIN_MEMORY, Manifest, Oracle, ResultsFormat, Sandbox,
    SandboxMode, Setup, Trace,
};
pub use price::{Price, add_usd};
pub use provider::{
    ANTHROPIC_BASE_URL, AnthropicConfig, CommandConfig, CommandPreset, DEFAULT_ANTHROPIC_KEY_ENV,
    DEFAULT_ANTHROPIC_MAX_TOKENS, DEFAULT_COMMAND_OUTPUT_CAP, DEFAULT_MAX_RETRIES,
    DEFAULT_PROVIDER_TIMEOUT, DEFAULT_RETRY_FOR, OpenAiConfig, OpenAiMode, ProviderConfig,
    ProviderKind, ScriptConfig,
};
pub use record::Record;
pub use resources::Resources;
pub use snapshot::{ManifestSnapshot, SNAPSHOT_FORMAT};
pub use verdict::{Inventory, InventorySource, Verdict};
