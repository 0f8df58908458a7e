//! Building the provider a configuration names, secrets read once here.
//!
//! The API key is read from the variable `api_key_env` names when the
//! provider is built: `openai` needs it only when `api_key_env` is set (local
//! servers need none), `anthropic` always (default `ANTHROPIC_API_KEY`), and
//! `command` passes it through to the program when it is set and says
//! nothing when it is not. An unset or empty variable that is required is
//! an error naming the variable, never showing a value.

use super::anthropic::AnthropicProvider;
use super::api::Provider;
use super::command::CommandProvider;
use super::error::ProviderError;
use super::http::Secret;
use super::openai::OpenAiProvider;
use super::script::ScriptProvider;
use crate::manifest::ProviderConfig;

/// The provider for `config`, called `name` in reports, with keys read
/// from the process environment.
pub(crate) fn build_provider(
    config: &ProviderConfig,
    name: &str,
) -> Result<Box<dyn Provider>, ProviderError> {
    build_provider_with_env(config, name, |var| std::env::var(var).ok())
}

/// [`build_provider`] with the environment given as a lookup function.
pub(crate) fn build_provider_with_env(
    config: &ProviderConfig,
    name: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Box<dyn Provider>, ProviderError> {
    let required = |kind: &str, var: &str| -> Result<Secret, ProviderError> {
        // "openai provider", or "gpt (openai provider)": the kind once.
        let who = if name == kind {
            format!("{kind} provider")
        } else {
            format!("{name} ({kind} provider)")
        };
        match env(var) {
            Some(value) if !value.is_empty() => Ok(Secret::new(value)),
            Some(_) => Err(ProviderError::Config {
                name: who,
                message: format!("the API key variable {var} (api_key_env) is empty"),
            }),
            None => Err(ProviderError::Config {
                name: who,
                message: format!("the API key variable {var} (api_key_env) is not set"),
            }),
        }
    };
    Ok(match config {
        ProviderConfig::Script(script) => {
            Box::new(ScriptProvider::from_config(script)?.with_name(name))
        }
        ProviderConfig::Openai(openai) => {
            let key = match &openai.api_key_env {
                Some(var) => Some(required("openai", var)?),
                None => None,
            };
            Box::new(OpenAiProvider::new(openai.clone(), key))
        }
        ProviderConfig::Anthropic(anthropic) => {
            let key = required("anthropic", &anthropic.api_key_env)?;
            Box::new(AnthropicProvider::new(anthropic.clone(), key))
        }
        ProviderConfig::Command(command) => {
            let key = command
                .api_key_env
                .as_ref()
                .and_then(|var| env(var).map(|value| (var.clone(), Secret::new(value))));
            Box::new(CommandProvider::new(name, command.clone(), key)?)
        }
        ProviderConfig::Oracle | ProviderConfig::Noop => {
            return Err(ProviderError::Config {
                name: name.to_string(),
                message: format!(
                    "kind \"{}\" runs through `batch` or `check`, which give each job its own script",
                    config.kind().as_str()
                ),
            });
        }
    })
}
