//! The protocol: what the event log records and everything its events
//! carry — the event vocabulary and its kinds, job ids, the manifest as the
//! log keeps it, prices, test inventories and verdicts, and the quantities
//! (durations, byte sizes) they are written in.
//!
//! - `conversation.rs`: a model conversation whatever API it came in
//!   (system prompt, turns with tool calls and results, tools offered) and
//!   its reply: what the model bridge reads an agent's request into and a
//!   provider answers.
//! - `event.rs`: the event vocabulary and its kinds, one variant per event
//!   `type` in the log.
//! - `records.rs`: each event's payload, one struct per variant.
//! - `record.rs`: the record frame (sequence number, time, job, attempt) around
//!   an event, as readers see it.
//! - `integrity.rs`: tamper signals, canary facts and the integrity record
//!   `attempt_finished` carries.
//! - `job_id.rs`: job ids and their validation.
//! - `manifest.rs`, `provider.rs`: the manifest's validated types and its
//!   provider's.
//! - `snapshot.rs`: the typed, versioned manifest snapshot the `enqueued` (and
//!   `replaced`) event carries.
//! - `price.rs`: prices, in USD per million tokens.
//! - `resources.rs`: what a command cost: the executor's `Resources`,
//!   re-exported, the one type from the reaped process to the log.
//! - `transcript.rs`: a line of the opt-in transcript, written and read by
//!   one type.
//! - `timeline.rs`: an attempt's timeline (model steps, their calls and
//!   texts, the runtime's actions), the one type every view of a run reads.
//! - `verdict.rs`: test inventories and per-test verdicts.
//! - `units/`: durations and byte sizes (`duration.rs`, `size.rs`), parsed and
//!   formatted.
//!
//! A leaf: it depends on no other module of the crate, so every layer can
//! name an event without depending on the log's I/O or on the reducer that
//! interprets it. It holds data and the checks that make a value valid
//! (a job id), never I/O or policy.

pub mod units;

mod conversation;
mod event;
mod integrity;
mod job_id;
mod manifest;
mod price;
mod provider;
mod record;
mod records;
mod resources;
mod snapshot;
mod timeline;
mod transcript;
mod verdict;

pub use conversation::{Conversation, DialectError, Reply, Stop, Tool, ToolCall, Turn};
pub use event::{
    BaselineOrigin, CallFigures, CheckResult, CommandFor, DecisionKind, EntryKind, Event,
    FailureKind, Outcome, TestRuns, VerifyTrigger,
};
pub use integrity::{
    CanaryBaseline, CanaryCheck, Integrity, SIGNALS_KEPT, Signal, SignalKind, TwinBaseline,
    TwinCheck,
};
pub use job_id::{IdError, MAX_ID_LEN, instance_id, validate_id, validate_instance_id};
pub(crate) use manifest::Origin;
pub use manifest::{
    AGENT_NAMES, Acceptance, AgentChoice, AgentMode, Baseline, CACHE_PLACEHOLDER,
    DEFAULT_MAX_RESTARTS, DEFAULT_MEMORY, DEFAULT_PROCESSES, Limits, MAX_PROCESSES, MIN_MEMORY,
    Manifest, Oracle, ResultsFormat, Sandbox, SandboxMode, Setup, Trace, Waiver,
};
pub use price::{Price, add_usd};
pub use provider::{
    ANTHROPIC_BASE_URL, AnthropicConfig, CommandConfig, CommandPreset, DEFAULT_ANTHROPIC_KEY_ENV,
    DEFAULT_ANTHROPIC_MAX_TOKENS, DEFAULT_COMMAND_OUTPUT_CAP, DEFAULT_MAX_RETRIES,
    DEFAULT_PROVIDER_TIMEOUT, DEFAULT_RETRY_FOR, OpenAiConfig, OpenAiMode, ProviderConfig,
    ProviderKind, ScriptConfig, ScriptDialect,
};
pub use record::Record;
pub use records::{
    AcceptanceRecord, AgentFinishedRecord, AttemptFinishedRecord, AttemptInterruptedRecord,
    AttemptStartedRecord, BaselineRecord, CommandRecord, DecisionRecord, EditRecord,
    EnqueuedRecord, LogRepairedRecord, ModelCallRecord, PatchRecord, PatchRejectedRecord,
    ProviderFailedRecord, ProviderRetryRecord, ReplacedRecord, SUBJECT_CHARS, SetupRecord,
    VerifyRecord,
};
pub use resources::Resources;
pub use snapshot::{ManifestSnapshot, SNAPSHOT_FORMAT};
pub use timeline::{Action, AttemptTimeline, ModelCall, ModelStep, Moment};
pub use transcript::TranscriptLine;
pub use verdict::{Inventory, InventorySource, Verdict};
