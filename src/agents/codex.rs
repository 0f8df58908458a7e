//! Codex CLI (npm `@openai/codex`, a native binary behind `codex`). It
//! speaks only the OpenAI Responses API to a custom model provider
//! (`model_providers.<id>.base_url`; `wire_api = "chat"` no longer loads),
//! runs to the end with `codex exec PROMPT`, loads MCP servers from
//! `mcp_servers.<name>` and offers their tools as one Responses namespace
//! tool `mcp__<server>` whose functions are the tools. Its configuration
//! goes into `$CODEX_HOME/config.toml` (the agent's private HOME): plugins
//! and analytics off (otherwise it reaches for github.com and
//! chatgpt.com), no update check, approvals never asked (the runtime is
//! the one that says no), and in leashed mode its shell and other
//! built-ins off.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{
    Agent, Dialect, GATEWAY, Launch, LaunchContext, Mode, OwnCall, Package, shell_command,
};

pub(super) struct Codex;

/// Its home beneath the agent's HOME, and the variable holding the key.
const CODEX_HOME: &str = ".codex";
const KEY_ENV: &str = "AGENT_RUNTIME_BRIDGE_KEY";
/// A model Codex knows, whose tools (its shell, `exec_command`) it offers;
/// for a name it does not know it offers no shell at all. Asked for only
/// where a test hook leaves a leashed agent its own tools: the bridge
/// answers from the job's provider whatever the model's name.
const KNOWN_MODEL: &str = "gpt-5-codex";

impl Agent for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn package(&self) -> Package {
        Package::Npm {
            name: "@openai/codex",
            bin: "codex",
        }
    }

    fn default_version(&self) -> &'static str {
        "0.171.0"
    }

    fn dialect(&self) -> Dialect {
        Dialect::OpenAiResponses
    }

    fn modes(&self) -> &'static [Mode] {
        &[Mode::Leashed, Mode::Contained]
    }

    fn mcp_tool_name(&self, server: &str, tool: &str) -> String {
        // A function `tool` of the namespace tool `mcp__<server>` (the
        // server name's `-` made `_`), read by the bridge as one name.
        format!("mcp__{}__{tool}", server.replace('-', "_"))
    }

    fn launch(&self, cx: &LaunchContext<'_>) -> Launch {
        let quote = |s: &str| serde_json::Value::from(s).to_string();
        // Its own tools come only with a model it knows.
        let own_tools = cx.builtins || cx.mode == Mode::Contained;
        let mcp = if cx.mode == Mode::Leashed {
            format!("[mcp_servers.{GATEWAY}]\nurl = {}\n\n", quote(cx.mcp_url))
        } else {
            String::new()
        };
        // No shell snapshot: at start Codex would run a login shell and
        // some ten processes to capture its environment, which the
        // sandbox's clean environment makes moot, and each process start
        // costs more inside the sandbox (measured: 1.23× to its first model
        // request with it, see `cargo bench --bench agent`).
        let mut config = format!(
            "model = {model}\nmodel_provider = \"{GATEWAY}\"\napproval_policy = \"never\"\n\
             sandbox_mode = \"danger-full-access\"\ncheck_for_update_on_startup = false\n\
             web_search = \"disabled\"\n\n\
             [model_providers.{GATEWAY}]\nname = \"{GATEWAY}\"\nbase_url = {base}\n\
             env_key = \"{KEY_ENV}\"\nwire_api = \"responses\"\n\n\
             {mcp}[analytics]\nenabled = false\n\n\
             [features]\nplugins = false\nshell_snapshot = false\n",
            model = quote(if own_tools { KNOWN_MODEL } else { cx.model }),
            base = quote(&format!("{}/v1", cx.base_url)),
        );
        if cx.mode == Mode::Leashed && !cx.builtins {
            config.push_str("shell_tool = false\n");
        }
        Launch {
            argv: vec![
                cx.program.display().to_string(),
                "exec".into(),
                "--skip-git-repo-check".into(),
                "--json".into(),
                cx.prompt.into(),
            ],
            env: vec![
                (
                    "CODEX_HOME".to_string(),
                    cx.home.join(CODEX_HOME).display().to_string(),
                ),
                (KEY_ENV.to_string(), cx.key.to_string()),
            ],
            files: vec![(PathBuf::from(CODEX_HOME).join("config.toml"), config)],
        }
    }

    fn own_call(
        &self,
        kind: &str,
        input: &Value,
        workspace: &Path,
        verify: &[String],
    ) -> Option<OwnCall> {
        if kind == "finish" {
            let summary = input
                .get("summary")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Some(OwnCall::Say(summary.to_string()));
        }
        let cmd = shell_command(kind, input, workspace, verify)?;
        Some(OwnCall::Call {
            name: "exec_command".into(),
            input: json!({ "cmd": cmd }),
        })
    }

    fn resume(&self, first: &Launch, session: &str, message: &str) -> Option<Vec<String>> {
        let program = first.argv.first()?.clone();
        Some(vec![
            program,
            "exec".into(),
            "resume".into(),
            "--skip-git-repo-check".into(),
            "--json".into(),
            session.to_string(),
            message.to_string(),
        ])
    }

    fn session_id(&self, stdout: &str) -> Option<String> {
        stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|event| event["type"] == "thread.started")
            .and_then(|event| event["thread_id"].as_str().map(String::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn contained_a_decision_is_a_shell_command_and_a_session_resumes() {
        let ws = Path::new("/ws");
        let call = Codex
            .own_call(
                "replace_text",
                &json!({"path": "src/lib.rs", "expected": "1..n", "replacement": "1..=n"}),
                ws,
                &[],
            )
            .unwrap();
        let OwnCall::Call { name, input } = call else {
            panic!("{call:?}");
        };
        assert_eq!(name, "exec_command");
        let cmd = input["cmd"].as_str().unwrap();
        assert!(cmd.starts_with("python3 -c 'import sys;"), "{cmd}");
        assert!(cmd.ends_with("/ws/src/lib.rs 1..n 1..=n"), "{cmd}");
        assert_eq!(
            Codex.own_call("finish", &json!({"summary": "done"}), ws, &[]),
            Some(OwnCall::Say("done".into()))
        );
        let out =
            "{\"type\":\"thread.started\",\"thread_id\":\"abc-1\"}\n{\"type\":\"turn.started\"}";
        assert_eq!(Codex.session_id(out).as_deref(), Some("abc-1"));
        let first = Launch {
            argv: vec!["/agents/codex".into(), "exec".into(), "go".into()],
            ..Launch::default()
        };
        let resume = Codex.resume(&first, "abc-1", "verify failed").unwrap();
        assert_eq!(
            resume.join(" "),
            "/agents/codex exec resume --skip-git-repo-check --json abc-1 verify failed"
        );
    }

    #[test]
    fn its_configuration_names_the_bridge_and_the_gateway_and_is_toml() {
        for mode in [Mode::Leashed, Mode::Contained] {
            let launch = Codex.launch(&LaunchContext {
                mode,
                program: Path::new("/agents/codex"),
                prompt: "Fix \"it\".",
                model: "local",
                base_url: "http://127.0.0.1:4000",
                key: "dummy",
                mcp_url: "http://127.0.0.1:4000/mcp",
                home: Path::new("/home/agent"),
                builtins: false,
            });
            assert_eq!(launch.argv[1], "exec");
            assert_eq!(launch.argv.last().map(String::as_str), Some("Fix \"it\"."));
            let (path, text) = &launch.files[0];
            assert_eq!(path, Path::new(".codex/config.toml"));
            let config: toml::Table = text.parse().unwrap();
            let provider = &config["model_providers"]["agent-runtime"];
            assert_eq!(
                provider["base_url"].as_str(),
                Some("http://127.0.0.1:4000/v1")
            );
            assert_eq!(provider["wire_api"].as_str(), Some("responses"));
            // Leashed, the gateway is its MCP server and the model's name
            // is the job's; contained, no MCP server, and a model it knows
            // (its own tools come with it).
            let gateway = config
                .get("mcp_servers")
                .and_then(|m| m.get("agent-runtime"))
                .and_then(|g| g.get("url"))
                .and_then(|u| u.as_str());
            let model = config["model"].as_str();
            match mode {
                Mode::Leashed => {
                    assert_eq!(gateway, Some("http://127.0.0.1:4000/mcp"));
                    assert_eq!(model, Some("local"));
                }
                Mode::Contained => {
                    assert_eq!(gateway, None);
                    assert_eq!(model, Some(KNOWN_MODEL));
                }
            }
            assert_eq!(config["features"]["plugins"].as_bool(), Some(false));
            let shell = config["features"]
                .get("shell_tool")
                .and_then(|v| v.as_bool());
            assert_eq!(shell, (mode == Mode::Leashed).then_some(false));
            assert!(
                launch
                    .env
                    .contains(&("CODEX_HOME".into(), "/home/agent/.codex".into()))
            );
        }
    }
}
