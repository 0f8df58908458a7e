//! Which model provider a job talks to, and how: the validated `[provider]`
//! table of a manifest or a provider file, per kind. Secrets never appear
//! here, only the name of the variable that holds one.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::units::ByteSize;

/// Default `base_url` for `kind = "anthropic"`.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Default request timeout for every provider kind.
pub const DEFAULT_PROVIDER_TIMEOUT: Duration = Duration::from_secs(120);
/// Default retries of a transient provider error.
pub const DEFAULT_MAX_RETRIES: u32 = 2;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    Script,
    Openai,
    Anthropic,
    Command,
    /// Each job's own `[oracle]`: a sweep's smoke test that accepts every
    /// valid task, offline.
    Oracle,
    /// Finishes at once without an edit: every job must fail.
    Noop,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The keys (besides `kind`) this kind accepts.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            ProviderKind::Script => &["script", "dialect"],
            ProviderKind::Openai => &[
                "base_url",
                "model",
                "api_key_env",
                "mode",
                "temperature",
                "max_tokens",
                "timeout",
                "max_retries",
                "retry_for",
            ],
            ProviderKind::Anthropic => &[
                "base_url",
                "model",
                "api_key_env",
                "max_tokens",
                "timeout",
                "max_retries",
                "retry_for",
            ],
            ProviderKind::Command => &[
                "program",
                "args",
                "model",
                "api_key_env",
                "preset",
                "stream",
                "timeout",
                "output_cap",
            ],
            ProviderKind::Oracle | ProviderKind::Noop => &[],
        }
    }
}

/// A validated provider configuration, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderConfig {
    Script(ScriptConfig),
    Openai(OpenAiConfig),
    Anthropic(AnthropicConfig),
    Command(CommandConfig),
    /// Each job's own `[oracle]` replayed (`batch` turns it into the job's
    /// script before it runs).
    Oracle,
    /// A single `finish` (`batch` turns it into a script before it runs).
    Noop,
}

impl ProviderConfig {
    pub fn kind(&self) -> ProviderKind {
        match self {
            ProviderConfig::Script(_) => ProviderKind::Script,
            ProviderConfig::Openai(_) => ProviderKind::Openai,
            ProviderConfig::Anthropic(_) => ProviderKind::Anthropic,
            ProviderConfig::Command(_) => ProviderKind::Command,
            ProviderConfig::Oracle => ProviderKind::Oracle,
            ProviderConfig::Noop => ProviderKind::Noop,
        }
    }
}

/// Replies read from JSON-lines files; attempt k uses entry k, the last
/// entry repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptConfig {
    /// Absolute, canonical; at least one.
    pub script: Vec<PathBuf>,
    /// A patch the runner applies to the workspace before the first reply
    /// (a trusted step: `check` uses it for an `[oracle] patch` that
    /// deletes files, which decisions cannot). Never read from a provider
    /// file; left out of the stored form when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_first: Option<PathBuf>,
    /// The model API the script answers an agent's calls as, so the
    /// bridge's translation from and to the agent's own is exercised
    /// offline; none answers in the agent's own. Left out of the stored
    /// form when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<ScriptDialect>,
}

/// The model API a scripted provider answers as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptDialect {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    Openai,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenAiMode {
    #[default]
    JsonSchema,
    JsonObject,
    Tools,
    Text,
}

/// An OpenAI-compatible chat completions endpoint (also local servers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiConfig {
    pub base_url: String,
    pub model: String,
    /// Name of the variable holding the key; optional for local servers.
    pub api_key_env: Option<String>,
    pub mode: OpenAiMode,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    #[serde(with = "super::units::duration_text")]
    pub timeout: Duration,
    pub max_retries: u32,
    /// How long connection errors, 5xx and 429 go on being retried (past
    /// `max_retries`) before the attempt is a fault of the infrastructure.
    #[serde(
        default = "default_retry_for",
        skip_serializing_if = "is_default_retry_for",
        with = "super::units::duration_text"
    )]
    pub retry_for: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicConfig {
    pub base_url: String,
    pub model: String,
    pub api_key_env: String,
    pub max_tokens: u32,
    #[serde(with = "super::units::duration_text")]
    pub timeout: Duration,
    pub max_retries: u32,
    /// As for `openai`.
    #[serde(
        default = "default_retry_for",
        skip_serializing_if = "is_default_retry_for",
        with = "super::units::duration_text"
    )]
    pub retry_for: Duration,
}

/// `retry_for` when a provider says nothing: ten minutes.
pub const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(600);

fn default_retry_for() -> Duration {
    DEFAULT_RETRY_FOR
}

fn is_default_retry_for(d: &Duration) -> bool {
    *d == DEFAULT_RETRY_FOR
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandPreset {
    /// The AGY command-line flags.
    Agy,
}

/// A local program that gets the prompt on stdin and prints the reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConfig {
    /// A program name (looked up on the search path) or an absolute path.
    pub program: String,
    /// May contain `{schema}` and `{model}` placeholders.
    pub args: Vec<String>,
    pub model: Option<String>,
    pub preset: Option<CommandPreset>,
    pub stream: bool,
    #[serde(with = "super::units::duration_text")]
    pub timeout: Duration,
    pub output_cap: ByteSize,
    /// A variable passed through to the program (its environment is
    /// otherwise cleared), for CLIs that read their key from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// Default `output_cap` of a command provider.
pub const DEFAULT_COMMAND_OUTPUT_CAP: ByteSize = ByteSize(1 << 20);
/// Default `max_tokens` for `kind = "anthropic"`, which requires one.
pub const DEFAULT_ANTHROPIC_MAX_TOKENS: u32 = 4096;
/// Default key variable for `kind = "anthropic"`.
pub const DEFAULT_ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
