//! Any MCP-capable program, given by argv in the manifest: for agents the
//! table does not know. It is handed the bridge and the gateway in its
//! environment (`AGENT_RUNTIME_BASE_URL`, `AGENT_RUNTIME_API_KEY`,
//! `AGENT_RUNTIME_MCP_URL`, `AGENT_RUNTIME_MODEL`) and the prompt as
//! `AGENT_RUNTIME_PROMPT`; what it does with them is its own affair.

use super::{Agent, Dialect, Launch, LaunchContext, Mode, Package};

pub(super) struct CommandAgent;

impl Agent for CommandAgent {
    fn name(&self) -> &'static str {
        "command"
    }

    fn package(&self) -> Package {
        Package::None
    }

    fn default_version(&self) -> &'static str {
        ""
    }

    fn dialect(&self) -> Dialect {
        Dialect::ChatCompletions
    }

    fn modes(&self) -> &'static [Mode] {
        &[Mode::Leashed, Mode::Contained]
    }

    fn launch(&self, cx: &LaunchContext<'_>) -> Launch {
        let env = [
            ("AGENT_RUNTIME_BASE_URL", cx.base_url),
            ("AGENT_RUNTIME_API_KEY", cx.key),
            ("AGENT_RUNTIME_MCP_URL", cx.mcp_url),
            ("AGENT_RUNTIME_MODEL", cx.model),
            ("AGENT_RUNTIME_PROMPT", cx.prompt),
        ];
        Launch {
            argv: vec![cx.program.display().to_string()],
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
            files: Vec::new(),
        }
    }
}
