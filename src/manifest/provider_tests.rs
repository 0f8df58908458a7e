//! Provider tables and provider files: the keys each kind takes, their
//! defaults, and the same rules in a file of its own.

use super::load_tests::{Fixture, with};
use super::*;

#[test]
fn provider_keys_are_checked_per_kind() {
    let fx = Fixture::new();
    let cases: &[(&str, &str)] = &[
        (
            "[provider]\nscript = \"../replies.jsonl\"\n",
            "jobs/job.toml:6:1: provider.kind: required key is missing",
        ),
        (
            "[provider]\nkind = \"gemini\"\n",
            "jobs/job.toml:7:8: provider.kind: unknown value \"gemini\" (one of \"script\", \"openai\", \"anthropic\", \"command\", \"oracle\", \"noop\")",
        ),
        (
            "[provider]\nkind = \"script\"\nkey = \"x\"\nscript = \"../replies.jsonl\"\n",
            "jobs/job.toml:8:1: provider.key: not a key for kind \"script\" (its keys: script, dialect)",
        ),
        (
            "[provider]\nkind = \"script\"\nscript = \"../replies.jsonl\"\ntemperature = 0.2\n",
            "jobs/job.toml:9:1: provider.temperature: not a key for kind \"script\" (its keys: script, dialect)",
        ),
        (
            "[provider]\nkind = \"script\"\nscript = []\n",
            "jobs/job.toml:8:10: provider.script: must list at least one file",
        ),
        (
            "[provider]\nkind = \"script\"\nscript = [\"../replies.jsonl\", \"../gone.jsonl\"]\n",
            "jobs/job.toml:8:31: provider.script[1]: ",
        ),
        (
            "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
            "jobs/job.toml:6:1: provider.base_url: required key is missing",
        ),
        (
            "[provider]\nkind = \"openai\"\nbase_url = \"localhost:8080\"\nmodel = \"m\"\n",
            "jobs/job.toml:8:12: provider.base_url: \"localhost:8080\" is not an http:// or https:// URL",
        ),
        (
            "[provider]\nkind = \"openai\"\nbase_url = \"http://x/v1\"\nmodel = \"m\"\napi_key = \"sk-123\"\n",
            "jobs/job.toml:10:1: provider.api_key: secrets are never stored in files",
        ),
        (
            "[provider]\nkind = \"openai\"\nbase_url = \"http://x/v1\"\nmodel = \"m\"\napi_key_env = \"sk-abc123\"\n",
            "jobs/job.toml:10:15: provider.api_key_env: must name an environment variable",
        ),
        (
            "[provider]\nkind = \"openai\"\nbase_url = \"http://x/v1\"\nmodel = \"m\"\nmode = \"xml\"\n",
            "jobs/job.toml:10:8: provider.mode: unknown value \"xml\" (one of \"json_schema\", \"json_object\", \"tools\", \"text\")",
        ),
        (
            "[provider]\nkind = \"openai\"\nbase_url = \"http://x/v1\"\nmodel = \"m\"\ntimeout = \"soon\"\n",
            "jobs/job.toml:10:11: provider.timeout: invalid duration \"soon\"",
        ),
        (
            "[provider]\nkind = \"anthropic\"\nmode = \"tools\"\nmodel = \"m\"\n",
            "jobs/job.toml:8:1: provider.mode: not a key for kind \"anthropic\"",
        ),
        (
            "[provider]\nkind = \"command\"\nargs = [\"-p\"]\n",
            "jobs/job.toml:6:1: provider.program: required key is missing (or set preset = \"agy\")",
        ),
        (
            "[provider]\nkind = \"command\"\nprogram = \"llm\"\nargs = [\"--model\", \"{model}\"]\n",
            "jobs/job.toml:9:20: provider.args[1]: uses {model} but no model is set",
        ),
    ];
    fx.assert_errors(cases);
}

#[test]
fn provider_kinds_get_their_defaults() {
    let fx = Fixture::new();
    let m = fx
        .load(&with("[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1/\"\nmodel = \"qwen\"\n"))
        .unwrap();
    let Some(ProviderConfig::Openai(openai)) = m.provider else {
        panic!("not openai");
    };
    assert_eq!(openai.base_url, "http://127.0.0.1:8080/v1");
    assert_eq!(openai.mode, OpenAiMode::JsonSchema);
    assert_eq!(openai.api_key_env, None);
    assert_eq!(openai.timeout, DEFAULT_PROVIDER_TIMEOUT);
    assert_eq!(openai.max_retries, DEFAULT_MAX_RETRIES);

    let m = fx
        .load(&with(
            "[provider]\nkind = \"anthropic\"\nmodel = \"claude\"\n",
        ))
        .unwrap();
    let Some(ProviderConfig::Anthropic(anthropic)) = m.provider else {
        panic!("not anthropic");
    };
    assert_eq!(anthropic.base_url, ANTHROPIC_BASE_URL);
    assert_eq!(anthropic.api_key_env, DEFAULT_ANTHROPIC_KEY_ENV);
    assert_eq!(anthropic.max_tokens, DEFAULT_ANTHROPIC_MAX_TOKENS);

    let m = fx
        .load(&with("[provider]\nkind = \"command\"\npreset = \"agy\"\n"))
        .unwrap();
    let Some(ProviderConfig::Command(command)) = m.provider else {
        panic!("not command");
    };
    assert_eq!(command.program, "agy");
    assert_eq!(command.preset, Some(CommandPreset::Agy));
    assert!(!command.stream);
    assert_eq!(command.output_cap, DEFAULT_COMMAND_OUTPUT_CAP);
}

#[test]
fn provider_files_share_the_provider_rules() {
    let fx = Fixture::new();
    let path = fx.write(
        "local.toml",
        "name = \"local-qwen\"\n[provider]\nkind = \"script\"\nscript = \"../replies.jsonl\"\n",
    );
    let file = load_provider_file(&path).unwrap();
    assert_eq!(file.name, "local-qwen");
    assert!(matches!(file.provider, ProviderConfig::Script(_)));

    let path = fx.write(
        "stem.toml",
        "[provider]\nkind = \"anthropic\"\nmodel = \"m\"\n",
    );
    assert_eq!(load_provider_file(&path).unwrap().name, "stem");

    let bad = |text: &str| {
        let path = fx.write("p.toml", text);
        let err = load_provider_file(&path).unwrap_err().to_string();
        err.replace(&format!("{}/", fx.root().display()), "")
    };
    assert_eq!(
        bad("name = \"x\"\n"),
        "jobs/p.toml:1:1: provider: required key is missing"
    );
    assert!(
        bad("name = \"x\"\nprompt = \"hi\"\n").starts_with(
            "jobs/p.toml: not a provider file: it sets prompt, as a job manifest does"
        ),
    );
    assert_eq!(
        bad(
            "name = \"x\"\nprompt = \"hi\"\n[provider]\nkind = \"script\"\nscript = \"../replies.jsonl\"\n"
        ),
        "jobs/p.toml:2:1: prompt: unknown key; a provider file takes name, [provider], [price], [agent]"
    );
    assert!(
        bad("[package]\nname = \"x\"\n")
            .starts_with("jobs/p.toml: not a provider file (its keys are [package])"),
    );
    assert_eq!(
        bad("name = \"a b\"\n[provider]\nkind = \"script\"\nscript = \"../replies.jsonl\"\n"),
        "jobs/p.toml:1:8: name: name \"a b\" contains ' '; use only letters, digits, '.', '_' and '-'"
    );
    assert_eq!(
        bad(
            "[provider]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nscript = \"s\"\n"
        ),
        "jobs/p.toml:5:1: provider.script: not a key for kind \"openai\" (its keys: base_url, model, api_key_env, mode, temperature, max_tokens, timeout, max_retries, retry_for)"
    );
}
