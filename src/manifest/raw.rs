//! The file formats exactly as written: every table refuses unknown keys.
//! Values whose checks need more than a type (durations, sizes, paths,
//! per-kind provider keys) stay loose here and are checked in `load` with
//! their location.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::protocol::{AgentMode, Baseline, SandboxMode, Trace};
use crate::protocol::{CommandPreset, OpenAiMode, ProviderKind};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawManifest {
    pub id: Option<String>,
    pub family: Option<String>,
    pub prompt: Option<String>,
    pub prompt_file: Option<String>,
    pub source: Option<String>,
    pub editable: Option<Vec<String>>,
    pub allow: Option<Vec<String>>,
    pub verify: Option<Vec<String>>,
    pub trace: Option<Trace>,
    pub env: Option<BTreeMap<String, String>>,
    pub acceptance: Option<RawAcceptance>,
    pub setup: Option<RawSetup>,
    pub limits: Option<RawLimits>,
    pub provider: Option<RawProvider>,
    pub sandbox: Option<RawSandbox>,
    pub agent: Option<RawAgent>,
    pub oracle: Option<RawOracle>,
    pub check: Option<RawCheck>,
    pub price: Option<RawPrice>,
    pub metadata: Option<BTreeMap<String, String>>,
}

/// `[price]`: USD per million tokens.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrice {
    pub input_per_mtok: Option<f64>,
    pub output_per_mtok: Option<f64>,
    pub cached_input_per_mtok: Option<f64>,
}

/// `[oracle]`: a known-good fix, for `check`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOracle {
    pub script: Option<String>,
    pub patch: Option<String>,
}

/// `[check]`: what `check` is told about the task.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCheck {
    pub waive: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAcceptance {
    pub dir: Option<String>,
    pub command: Option<Vec<String>>,
    pub baseline: Option<Baseline>,
    pub results: Option<String>,
    pub test_timeout: Option<toml::Value>,
    pub fail_to_pass: Option<Vec<String>>,
    pub flaky: Option<Vec<String>>,
    pub pass_to_pass: Option<Vec<String>>,
    pub canary: Option<bool>,
    pub twins: Option<bool>,
    pub plugins: Option<Vec<String>>,
    pub strict_integrity: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSetup {
    pub commands: Option<Vec<Vec<String>>>,
    pub network: Option<bool>,
    pub inputs: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    pub attempts: Option<u32>,
    pub max_steps: Option<u32>,
    pub max_invalid: Option<u32>,
    pub max_restarts: Option<u32>,
    pub wall_time: Option<toml::Value>,
    pub command_timeout: Option<toml::Value>,
    pub output_cap: Option<toml::Value>,
    pub observation_cap: Option<toml::Value>,
    pub token_budget: Option<u64>,
    pub memory: Option<toml::Value>,
    pub processes: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAgent {
    pub name: Option<String>,
    pub version: Option<String>,
    pub mode: Option<AgentMode>,
    pub command: Option<Vec<String>>,
    pub verify_rounds: Option<u32>,
    pub memory: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSandbox {
    pub mode: Option<SandboxMode>,
    pub network: Option<bool>,
    pub toolchains: Option<Vec<String>>,
}

/// Every key any provider kind takes; which ones a kind accepts is checked
/// after reading, so the error can say "not a key for kind X".
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProvider {
    pub kind: Option<ProviderKind>,
    pub script: Option<toml::Value>,
    pub dialect: Option<crate::protocol::ScriptDialect>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    /// Never accepted: present only to refuse it with a useful message.
    pub api_key: Option<toml::Value>,
    pub mode: Option<OpenAiMode>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub timeout: Option<toml::Value>,
    pub max_retries: Option<u32>,
    pub retry_for: Option<toml::Value>,
    pub program: Option<String>,
    pub args: Option<Vec<String>>,
    pub preset: Option<CommandPreset>,
    pub stream: Option<bool>,
    pub output_cap: Option<toml::Value>,
}

impl RawProvider {
    /// The names of the keys present, in file-format order.
    pub(super) fn present_keys(&self) -> Vec<&'static str> {
        let keys = [
            ("script", self.script.is_some()),
            ("dialect", self.dialect.is_some()),
            ("base_url", self.base_url.is_some()),
            ("model", self.model.is_some()),
            ("api_key_env", self.api_key_env.is_some()),
            ("api_key", self.api_key.is_some()),
            ("mode", self.mode.is_some()),
            ("temperature", self.temperature.is_some()),
            ("max_tokens", self.max_tokens.is_some()),
            ("timeout", self.timeout.is_some()),
            ("max_retries", self.max_retries.is_some()),
            ("retry_for", self.retry_for.is_some()),
            ("program", self.program.is_some()),
            ("args", self.args.is_some()),
            ("preset", self.preset.is_some()),
            ("stream", self.stream.is_some()),
            ("output_cap", self.output_cap.is_some()),
        ];
        keys.iter()
            .filter(|(_, present)| *present)
            .map(|(name, _)| *name)
            .collect()
    }
}

/// A provider file: `name = "..."` and a `[provider]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProviderFile {
    pub name: Option<String>,
    pub provider: Option<RawProvider>,
    pub price: Option<RawPrice>,
    pub agent: Option<RawAgent>,
}
