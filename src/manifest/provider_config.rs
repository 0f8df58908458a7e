//! Checking the `[provider]` table of a manifest or a provider file, per
//! kind (the validated types are the protocol's). Secrets never appear
//! here, only the name of the variable that holds one.

use std::path::PathBuf;
use std::time::Duration;

use super::error::ManifestError;
use super::fields::Fields;
use super::raw::RawProvider;
use crate::protocol::{
    ANTHROPIC_BASE_URL, AnthropicConfig, CommandConfig, CommandPreset, DEFAULT_ANTHROPIC_KEY_ENV,
    DEFAULT_ANTHROPIC_MAX_TOKENS, DEFAULT_COMMAND_OUTPUT_CAP, DEFAULT_MAX_RETRIES,
    DEFAULT_PROVIDER_TIMEOUT, DEFAULT_RETRY_FOR, OpenAiConfig, ProviderConfig, ProviderKind,
    ScriptConfig,
};

/// Validates a raw `[provider]` table (`prefix` is its dotted name).
pub(super) fn build_provider(
    fields: &Fields<'_>,
    prefix: &str,
    raw: RawProvider,
) -> Result<ProviderConfig, ManifestError> {
    let at = |key: &str| format!("{prefix}.{key}");
    let kind = fields.required(&at("kind"), raw.kind)?;
    if raw.api_key.is_some() {
        return Err(fields.key_err(
            &at("api_key"),
            "secrets are never stored in files; put the key in an environment variable and name it with api_key_env",
        ));
    }
    for key in raw.present_keys() {
        if !kind.keys().contains(&key) {
            return Err(fields.key_err(
                &at(key),
                format!(
                    "not a key for kind \"{}\" (its keys: {})",
                    kind.as_str(),
                    kind.keys().join(", ")
                ),
            ));
        }
    }
    if let Some(name) = &raw.api_key_env {
        check_key_env(fields, &at("api_key_env"), name)?;
    }
    let timeout = fields.duration(
        &at("timeout"),
        raw.timeout.as_ref(),
        DEFAULT_PROVIDER_TIMEOUT,
    )?;
    let max_retries = raw.max_retries.unwrap_or(DEFAULT_MAX_RETRIES);
    let retry_for = fields.duration(&at("retry_for"), raw.retry_for.as_ref(), DEFAULT_RETRY_FOR)?;
    let config = match kind {
        ProviderKind::Script => ProviderConfig::Script(ScriptConfig {
            script: script_files(fields, &at("script"), raw.script.as_ref())?,
            apply_first: None,
            dialect: raw.dialect,
        }),
        ProviderKind::Openai => {
            if let Some(t) = raw.temperature
                && !(0.0..=2.0).contains(&t)
            {
                return Err(fields.err(&at("temperature"), format!("{t} is outside 0.0..=2.0")));
            }
            ProviderConfig::Openai(OpenAiConfig {
                base_url: url(fields, &at("base_url"), raw.base_url)?,
                model: non_empty(fields, &at("model"), raw.model)?,
                api_key_env: raw.api_key_env,
                mode: raw.mode.unwrap_or_default(),
                temperature: raw.temperature,
                max_tokens: positive_opt(fields, &at("max_tokens"), raw.max_tokens)?,
                timeout,
                max_retries,
                retry_for,
            })
        }
        ProviderKind::Anthropic => ProviderConfig::Anthropic(AnthropicConfig {
            base_url: url(
                fields,
                &at("base_url"),
                Some(
                    raw.base_url
                        .unwrap_or_else(|| ANTHROPIC_BASE_URL.to_string()),
                ),
            )?,
            model: non_empty(fields, &at("model"), raw.model)?,
            api_key_env: raw
                .api_key_env
                .unwrap_or_else(|| DEFAULT_ANTHROPIC_KEY_ENV.to_string()),
            max_tokens: positive_opt(fields, &at("max_tokens"), raw.max_tokens)?
                .unwrap_or(DEFAULT_ANTHROPIC_MAX_TOKENS),
            timeout,
            max_retries,
            retry_for,
        }),
        ProviderKind::Command => command(fields, prefix, raw, timeout)?,
        ProviderKind::Oracle => ProviderConfig::Oracle,
        ProviderKind::Noop => ProviderConfig::Noop,
    };
    Ok(config)
}

fn command(
    fields: &Fields<'_>,
    prefix: &str,
    raw: RawProvider,
    timeout: Duration,
) -> Result<ProviderConfig, ManifestError> {
    let at = |key: &str| format!("{prefix}.{key}");
    let program = match (raw.program, raw.preset) {
        (Some(program), _) => {
            if program.trim().is_empty() {
                return Err(fields.err(&at("program"), "program name is empty"));
            }
            if program.contains('/') {
                fields.path(&program).to_string_lossy().into_owned()
            } else {
                program
            }
        }
        (None, Some(CommandPreset::Agy)) => "agy".to_string(),
        (None, None) => {
            return Err(fields.err(
                &at("program"),
                "required key is missing (or set preset = \"agy\")",
            ));
        }
    };
    let args = raw.args.unwrap_or_default();
    for (index, arg) in args.iter().enumerate() {
        if arg.contains("{model}") && raw.model.is_none() {
            return Err(fields.err(
                &format!("{prefix}.args[{index}]"),
                "uses {model} but no model is set",
            ));
        }
    }
    Ok(ProviderConfig::Command(CommandConfig {
        program,
        args,
        model: raw.model,
        preset: raw.preset,
        stream: raw.stream.unwrap_or(false),
        timeout,
        output_cap: fields.size(
            &at("output_cap"),
            raw.output_cap.as_ref(),
            DEFAULT_COMMAND_OUTPUT_CAP,
        )?,
        api_key_env: raw.api_key_env,
    }))
}

fn script_files(
    fields: &Fields<'_>,
    field: &str,
    value: Option<&toml::Value>,
) -> Result<Vec<PathBuf>, ManifestError> {
    match fields.required(field, value)? {
        toml::Value::String(path) => Ok(vec![fields.existing_file(field, path)?]),
        toml::Value::Array(items) if !items.is_empty() => {
            let mut files = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let element = format!("{field}[{index}]");
                let toml::Value::String(path) = item else {
                    return Err(fields.err(
                        &element,
                        format!("expected a file path string, found {}", item.type_str()),
                    ));
                };
                files.push(fields.existing_file(&element, path)?);
            }
            Ok(files)
        }
        toml::Value::Array(_) => Err(fields.err(field, "must list at least one file")),
        other => Err(fields.err(
            field,
            format!(
                "expected a file path or a list of them, found {}",
                other.type_str()
            ),
        )),
    }
}

/// `api_key_env` names a variable; it must not be the key itself.
fn check_key_env(fields: &Fields<'_>, field: &str, name: &str) -> Result<(), ManifestError> {
    let looks_like_name = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !looks_like_name {
        return Err(fields.err(
            field,
            "must name an environment variable (e.g. \"OPENAI_API_KEY\"), never hold the key itself",
        ));
    }
    Ok(())
}

fn non_empty(
    fields: &Fields<'_>,
    field: &str,
    value: Option<String>,
) -> Result<String, ManifestError> {
    let value = fields.required(field, value)?;
    if value.trim().is_empty() {
        return Err(fields.err(field, "must not be empty"));
    }
    Ok(value)
}

fn url(fields: &Fields<'_>, field: &str, value: Option<String>) -> Result<String, ManifestError> {
    let value = non_empty(fields, field, value)?;
    if !(value.starts_with("http://") || value.starts_with("https://")) {
        return Err(fields.err(
            field,
            format!("{value:?} is not an http:// or https:// URL"),
        ));
    }
    Ok(value.trim_end_matches('/').to_string())
}

fn positive_opt(
    fields: &Fields<'_>,
    field: &str,
    value: Option<u32>,
) -> Result<Option<u32>, ManifestError> {
    match value {
        Some(0) => Err(fields.err(field, "must be at least 1")),
        other => Ok(other),
    }
}
