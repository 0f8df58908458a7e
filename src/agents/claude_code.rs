//! Claude Code (npm `@anthropic-ai/claude-code`, a native binary behind
//! the package's `claude`). It speaks the Anthropic Messages API to
//! `ANTHROPIC_BASE_URL` (a `HEAD /`, then streaming `POST /v1/messages`),
//! runs to the end with `-p PROMPT`, loads MCP servers from
//! `--mcp-config` (`--strict-mcp-config`: no other), and names their tools
//! `mcp__<server>__<tool>`. `--tools ""` turns every built-in tool off. As
//! root it refuses `--dangerously-skip-permissions`; `--allowedTools
//! mcp__<server>` lets the gateway's tools run without a prompt (without
//! it every call is denied and the run still exits 0), and `IS_SANDBOX=1`
//! lets its own tools run in contained mode. Nonessential traffic and
//! telemetry off, it calls nothing but its base URL.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{
    Agent, Dialect, GATEWAY, Launch, LaunchContext, Mode, OwnCall, Package, run_tool_argv,
    shell_line,
};

pub(super) struct ClaudeCode;

/// The MCP configuration, beneath HOME.
const MCP_CONFIG: &str = ".agent-runtime/mcp.json";

impl Agent for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn package(&self) -> Package {
        Package::Npm {
            name: "@anthropic-ai/claude-code",
            bin: "claude",
        }
    }

    fn default_version(&self) -> &'static str {
        "2.1.197"
    }

    fn dialect(&self) -> Dialect {
        Dialect::AnthropicMessages
    }

    fn modes(&self) -> &'static [Mode] {
        &[Mode::Leashed, Mode::Contained]
    }

    fn launch(&self, cx: &LaunchContext<'_>) -> Launch {
        let config = serde_json::json!({
            "mcpServers": { GATEWAY: { "type": "http", "url": cx.mcp_url } }
        });
        let config_path = cx.home.join(MCP_CONFIG);
        let mut argv: Vec<String> = vec![
            cx.program.display().to_string(),
            "-p".into(),
            cx.prompt.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--model".into(),
            cx.model.into(),
        ];
        // Leashed, the gateway is its one way in; contained, it has its
        // own tools and no other MCP server.
        if cx.mode == Mode::Leashed {
            argv.extend([
                "--mcp-config".into(),
                config_path.display().to_string(),
                "--strict-mcp-config".into(),
            ]);
        } else {
            argv.push("--strict-mcp-config".into());
        }
        let mut env = vec![
            ("ANTHROPIC_BASE_URL".to_string(), cx.base_url.to_string()),
            ("ANTHROPIC_API_KEY".to_string(), cx.key.to_string()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_string(),
                "1".to_string(),
            ),
            ("DISABLE_TELEMETRY".to_string(), "1".to_string()),
            ("DISABLE_AUTOUPDATER".to_string(), "1".to_string()),
        ];
        match cx.mode {
            Mode::Leashed if cx.builtins => {
                let allowed = format!("mcp__{GATEWAY} Bash Read Write Edit");
                argv.extend(["--allowedTools".into(), allowed]);
            }
            Mode::Leashed => {
                argv.extend(["--tools".into(), String::new()]);
                argv.extend(["--allowedTools".into(), format!("mcp__{GATEWAY}")]);
            }
            // Its own tools without asking: as root it takes
            // `--dangerously-skip-permissions` only with IS_SANDBOX=1.
            Mode::Contained => {
                argv.push("--dangerously-skip-permissions".into());
                env.push(("IS_SANDBOX".to_string(), "1".to_string()));
            }
        }
        Launch {
            argv,
            env,
            files: vec![(PathBuf::from(MCP_CONFIG), config.to_string())],
        }
    }

    fn own_call(
        &self,
        kind: &str,
        input: &Value,
        workspace: &Path,
        verify: &[String],
    ) -> Option<OwnCall> {
        let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default();
        let path = || workspace.join(text("path")).display().to_string();
        let bash = |argv: &[String], what: &str| OwnCall::Call {
            name: "Bash".into(),
            input: json!({ "command": shell_line(argv), "description": what }),
        };
        Some(match kind {
            "read_file" => OwnCall::Call {
                name: "Read".into(),
                input: json!({ "file_path": path() }),
            },
            "write_file" => OwnCall::Call {
                name: "Write".into(),
                input: json!({ "file_path": path(), "content": text("content") }),
            },
            "replace_text" => OwnCall::Call {
                name: "Edit".into(),
                input: json!({
                    "file_path": path(),
                    "old_string": text("expected"),
                    "new_string": text("replacement"),
                }),
            },
            "list_files" => bash(
                &["find".into(), path(), "-type".into(), "f".into()],
                "List files",
            ),
            "run_tool" => bash(&run_tool_argv(input), "Run a command"),
            "verify" => bash(verify, "Verify"),
            "finish" => OwnCall::Say(text("summary").to_string()),
            _ => return None,
        })
    }

    fn resume(&self, first: &Launch, session: &str, message: &str) -> Option<Vec<String>> {
        let mut argv = first.argv.clone();
        let prompt = argv.iter().position(|a| a == "-p")? + 1;
        *argv.get_mut(prompt)? = message.to_string();
        argv.extend(["--resume".into(), session.to_string()]);
        Some(argv)
    }

    fn session_id(&self, stdout: &str) -> Option<String> {
        stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find_map(|event| event["session_id"].as_str().map(String::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn context(mode: Mode) -> LaunchContext<'static> {
        LaunchContext {
            mode,
            program: Path::new("/agents/claude"),
            prompt: "Fix it.",
            model: "local",
            base_url: "http://127.0.0.1:4000",
            key: "dummy",
            mcp_url: "http://127.0.0.1:4000/mcp",
            home: Path::new("/home/agent"),
            builtins: false,
        }
    }

    #[test]
    fn leashed_it_has_no_tools_but_the_gateway_s_and_talks_only_to_the_bridge() {
        let launch = ClaudeCode.launch(&context(Mode::Leashed));
        let argv = launch.argv.join(" ");
        assert!(argv.starts_with("/agents/claude -p Fix it."), "{argv}");
        let tools = launch.argv.iter().position(|a| a == "--tools").unwrap();
        assert_eq!(launch.argv[tools + 1], "");
        assert!(argv.contains("--allowedTools mcp__agent-runtime"), "{argv}");
        assert!(
            argv.contains("--mcp-config /home/agent/.agent-runtime/mcp.json --strict-mcp-config")
        );
        let env: std::collections::BTreeMap<_, _> = launch.env.iter().cloned().collect();
        assert_eq!(env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:4000");
        assert_eq!(env["ANTHROPIC_API_KEY"], "dummy");
        assert!(!env.contains_key("IS_SANDBOX"));
        let (path, text) = &launch.files[0];
        assert_eq!(path, Path::new(".agent-runtime/mcp.json"));
        let config: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            config["mcpServers"]["agent-runtime"]["url"],
            "http://127.0.0.1:4000/mcp"
        );
    }

    #[test]
    fn contained_it_keeps_its_own_tools() {
        let launch = ClaudeCode.launch(&context(Mode::Contained));
        assert!(!launch.argv.iter().any(|a| a == "--tools"));
        assert!(launch.env.contains(&("IS_SANDBOX".into(), "1".into())));
    }
}
