use std::path::PathBuf;
use std::time::Duration;

use crate::manifest::{
    AnthropicConfig, CommandConfig, OpenAiConfig, OpenAiMode, ProviderConfig, ScriptConfig,
};
use crate::protocol::units::ByteSize;
use crate::provider::build_provider_with_env;

fn openai(key_env: Option<&str>) -> ProviderConfig {
    ProviderConfig::Openai(OpenAiConfig {
        base_url: "http://127.0.0.1:8080/v1".to_string(),
        model: "m".to_string(),
        api_key_env: key_env.map(str::to_string),
        mode: OpenAiMode::JsonSchema,
        temperature: None,
        max_tokens: None,
        timeout: Duration::from_secs(1),
        max_retries: 0,
        retry_for: std::time::Duration::ZERO,
    })
}

#[test]
fn every_kind_builds_and_missing_keys_are_named_not_shown() {
    let none = |_: &str| None::<String>;
    let script = ProviderConfig::Script(ScriptConfig {
        script: vec![
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("evaluation/scripts/off_by_one.jsonl"),
        ],
        apply_first: None,
        dialect: None,
    });
    assert!(build_provider_with_env(&script, "replay", none).is_ok());
    assert!(build_provider_with_env(&openai(None), "local", none).is_ok());

    let err = build_provider_with_env(&openai(Some("MY_OPENAI_KEY")), "gpt", none)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "gpt (openai provider): the API key variable MY_OPENAI_KEY (api_key_env) is not set"
    );
    let with_key = |var: &str| (var == "MY_OPENAI_KEY").then(|| "sk-secret".to_string());
    assert!(build_provider_with_env(&openai(Some("MY_OPENAI_KEY")), "gpt", with_key).is_ok());

    let anthropic = ProviderConfig::Anthropic(AnthropicConfig {
        base_url: "https://api.anthropic.com".to_string(),
        model: "claude".to_string(),
        api_key_env: "ANTHROPIC_API_KEY".to_string(),
        max_tokens: 100,
        timeout: Duration::from_secs(1),
        max_retries: 0,
        retry_for: std::time::Duration::ZERO,
    });
    let empty = |_: &str| Some(String::new());
    let err = build_provider_with_env(&anthropic, "claude", empty)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "claude (anthropic provider): the API key variable ANTHROPIC_API_KEY (api_key_env) is empty"
    );
    let keyed = |_: &str| Some("sk-ant-secret".to_string());
    assert!(build_provider_with_env(&anthropic, "claude", keyed).is_ok());

    let command = |program: &str| {
        ProviderConfig::Command(CommandConfig {
            program: program.to_string(),
            args: vec![],
            model: None,
            preset: None,
            stream: false,
            timeout: Duration::from_secs(1),
            output_cap: ByteSize(1024),
            api_key_env: Some("AGY_KEY".to_string()),
        })
    };
    assert!(build_provider_with_env(&command("sh"), "sh", none).is_ok());
    let err = build_provider_with_env(&command("no-such-model-cli"), "cli", none)
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .starts_with("cli: command provider: `no-such-model-cli` is not an executable file"),
        "{err}"
    );
}
