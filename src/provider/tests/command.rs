use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::request_with_history;
use crate::cancel::CancelToken;
use crate::decision::{Decision, parse_decision};
use crate::manifest::{CommandConfig, CommandPreset};
use crate::protocol::units::ByteSize;
use crate::provider::{CommandProvider, Message, Provider, Secret};

/// A fake AGY: checks the preset's flags, that the prompt came on stdin
/// and not in argv, and that the key variable was passed through; then
/// prints an envelope or an event stream.
const FAKE_AGY: &str = r#"#!/bin/sh
input=$(cat)
case "$*" in *"Fix sum_up_to"*) echo "prompt leaked into argv" >&2; exit 5;; esac
[ "$1" = "--print" ] && [ "$2" = "--output-format" ] && [ "$4" = "--json-schema" ] || { echo "bad flags: $1 $2 $4" >&2; exit 2; }
case "$5" in '{'*'"oneOf"'*) ;; *) echo "no schema in $5" >&2; exit 2;; esac
[ "$6" = "--model" ] && [ "$7" = "agy-test" ] && [ "$8" = "--extra" ] || { echo "bad model flags: $6 $7 $8" >&2; exit 2; }
case "$input" in *"--- user ---"*"Fix sum_up_to."*) ;; *) echo "no prompt on stdin" >&2; exit 3;; esac
[ "$AGY_TEST_KEY" = "secret-value" ] || { echo "key not passed through" >&2; exit 4; }
if [ "$3" = "stream-json" ]; then
  echo '{"type":"system","subtype":"init"}'
  echo '{"type":"assistant","message":{"content":[{"type":"text","text":"checking"}]}}'
  echo '{"type":"result","subtype":"success","is_error":false,"result":"","structured_output":{"kind":"read_file","path":"src/lib.rs"},"usage":{"input_tokens":41,"output_tokens":8}}'
else
  echo '{"type":"result","subtype":"success","is_error":false,"result":"{\"kind\":\"verify\"}","usage":{"input_tokens":40,"output_tokens":7}}'
fi
"#;

fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn config(program: &Path, preset: Option<CommandPreset>, stream: bool) -> CommandConfig {
    CommandConfig {
        program: program.display().to_string(),
        args: if preset.is_some() {
            vec!["--extra".to_string()]
        } else {
            vec![]
        },
        model: Some("agy-test".to_string()),
        preset,
        stream,
        timeout: Duration::from_secs(20),
        output_cap: ByteSize(64 * 1024),
        api_key_env: Some("AGY_TEST_KEY".to_string()),
    }
}

fn key() -> Option<(String, Secret)> {
    Some(("AGY_TEST_KEY".to_string(), Secret::new("secret-value")))
}

#[test]
fn the_agy_preset_reads_an_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let agy = script(dir.path(), "agy", FAKE_AGY);
    let mut provider =
        CommandProvider::new("agy", config(&agy, Some(CommandPreset::Agy), false), key()).unwrap();
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(reply.text, r#"{"kind":"verify"}"#);
    assert_eq!((reply.input_tokens, reply.output_tokens), (40, 7));
    assert!(reply.retries.is_empty());
}

#[test]
fn the_agy_preset_reads_an_event_stream() {
    let dir = tempfile::tempdir().unwrap();
    let agy = script(dir.path(), "agy", FAKE_AGY);
    let mut provider =
        CommandProvider::new("agy", config(&agy, Some(CommandPreset::Agy), true), key()).unwrap();
    let argv = provider.argv(&request_with_history());
    assert_eq!(
        argv[..4],
        ["agy", "--print", "--output-format", "stream-json"]
    );
    let reply = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap();
    assert_eq!(
        parse_decision(&reply.text).unwrap(),
        Decision::ReadFile {
            path: "src/lib.rs".to_string()
        }
    );
    assert_eq!((reply.input_tokens, reply.output_tokens), (41, 8));
}

#[test]
fn a_program_that_ignores_a_large_prompt_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let cli = script(
        dir.path(),
        "quiet",
        "#!/bin/sh\necho '{\"kind\":\"verify\"}'\n",
    );
    let mut provider = CommandProvider::new("quiet", config(&cli, None, false), None).unwrap();
    let mut request = request_with_history();
    request.messages.push(Message::user("x".repeat(4 << 20)));
    let started = Instant::now();
    let reply = provider.complete(&request, &CancelToken::new()).unwrap();
    assert_eq!(reply.text, r#"{"kind":"verify"}"#);
    assert!(started.elapsed() < Duration::from_secs(10));
    // No usage printed: estimated from the prompt.
    assert!(reply.input_tokens > 1 << 20);
}

#[test]
fn a_failing_program_is_an_error_with_its_stderr_and_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let cli = script(
        dir.path(),
        "broken",
        "#!/bin/sh\necho \"auth failed for $AGY_TEST_KEY\nsee docs\" >&2\nexit 7\n",
    );
    let mut provider = CommandProvider::new("broken", config(&cli, None, false), key()).unwrap();
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "command provider: `broken` exited with status 7: auth failed for [redacted] see docs"
    );
    assert!(!err.is_retryable());
}

#[test]
fn a_program_past_its_timeout_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let cli = script(dir.path(), "slow", "#!/bin/sh\nsleep 30\n");
    let mut config = config(&cli, None, false);
    config.timeout = Duration::from_millis(300);
    let mut provider = CommandProvider::new("slow", config, None).unwrap();
    let started = Instant::now();
    let err = provider
        .complete(&request_with_history(), &CancelToken::new())
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        "command provider: `slow` timed out after 300ms"
    );
}

#[test]
fn a_provider_file_may_name_a_key_variable_for_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agy.toml");
    let text = "name = \"agy\"\n[provider]\nkind = \"command\"\nprogram = \"sh\"\npreset = \"agy\"\napi_key_env = \"AGY_API_KEY\"\n";
    let file = crate::manifest::parse_provider_file(&path, text).unwrap();
    let crate::manifest::ProviderConfig::Command(command) = &file.provider else {
        panic!("not a command provider: {:?}", file.provider);
    };
    assert_eq!(command.api_key_env.as_deref(), Some("AGY_API_KEY"));
    let lookup = |var: &str| (var == "AGY_API_KEY").then(|| "k".to_string());
    assert!(crate::provider::build_provider_with_env(&file.provider, &file.name, lookup).is_ok());
}
