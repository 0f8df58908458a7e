//! mini-swe-agent (PyPI `mini-swe-agent`, through litellm): its one tool
//! is bash, so it runs contained only; it asks for non-streaming Chat
//! Completions at its base URL, offline with litellm's local cost map.
//! `mini -m MODEL -t TASK --yolo --exit-immediately` runs without a
//! prompt; `MSWEA_CONFIGURED` skips its first-run setup.
//!
//! The forced verify: its agent class is the driver beside this file
//! (`mini_swe_agent.py`, written into its HOME and put on its module
//! path), which on submit asks the runtime through the bridge and, when
//! verify fails, hands its output to the same agent object as the next
//! user message. Nothing is relaunched, so [`Agent::resume`] stays `None`.

use std::path::Path;

use serde_json::{Value, json};

use super::{Agent, Dialect, Launch, LaunchContext, Mode, OwnCall, Package, shell_command};

/// The command that ends its run (its output's first line, exit 0).
const SUBMIT: &str = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/// The driver, and where beneath HOME it is written.
const DRIVER: &str = include_str!("mini_swe_agent.py");
const DRIVER_DIR: &str = ".agent-runtime";
const DRIVER_FILE: &str = "agent_runtime_mini.py";

/// Its trajectory, beneath HOME.
const TRAJECTORY: &str = "trajectory.json";

pub(super) struct MiniSweAgent;

impl Agent for MiniSweAgent {
    fn name(&self) -> &'static str {
        "mini-swe-agent"
    }

    fn package(&self) -> Package {
        Package::Pypi {
            name: "mini-swe-agent",
            module: "minisweagent.run.mini",
        }
    }

    fn default_version(&self) -> &'static str {
        "2.4.6"
    }

    fn dialect(&self) -> Dialect {
        Dialect::ChatCompletions
    }

    fn modes(&self) -> &'static [Mode] {
        &[Mode::Contained]
    }

    fn launch(&self, cx: &LaunchContext<'_>) -> Launch {
        Launch {
            argv: vec![
                cx.program.display().to_string(),
                "-m".into(),
                "minisweagent.run.mini".into(),
                "--model".into(),
                format!("openai/{}", cx.model),
                "--task".into(),
                cx.prompt.into(),
                "--yolo".into(),
                "--exit-immediately".into(),
                // No cost limit of its own: the runtime's budget applies,
                // and litellm prices no local model.
                "--cost-limit".into(),
                "0".into(),
                "--agent-class".into(),
                "agent_runtime_mini.VerifiedAgent".into(),
                "--output".into(),
                cx.home.join(TRAJECTORY).display().to_string(),
            ],
            env: vec![
                ("OPENAI_API_BASE".to_string(), format!("{}/v1", cx.base_url)),
                ("OPENAI_API_KEY".to_string(), cx.key.to_string()),
                (
                    "LITELLM_LOCAL_MODEL_COST_MAP".to_string(),
                    "True".to_string(),
                ),
                // Past its first-run setup wizard, quietly.
                ("MSWEA_CONFIGURED".to_string(), "true".to_string()),
                ("MSWEA_SILENT_STARTUP".to_string(), "1".to_string()),
                // litellm prices no local model; the runtime charges.
                (
                    "MSWEA_COST_TRACKING".to_string(),
                    "ignore_errors".to_string(),
                ),
                (
                    "PYTHONPATH".to_string(),
                    cx.home.join(DRIVER_DIR).display().to_string(),
                ),
                (
                    "AGENT_RUNTIME_STOPPED_URL".to_string(),
                    format!("{}{}", cx.base_url, super::STOPPED_PATH),
                ),
            ],
            files: vec![(Path::new(DRIVER_DIR).join(DRIVER_FILE), DRIVER.to_string())],
        }
    }

    fn own_log(&self) -> Option<&'static str> {
        Some(TRAJECTORY)
    }

    fn own_call(
        &self,
        kind: &str,
        input: &Value,
        workspace: &Path,
        verify: &[String],
    ) -> Option<OwnCall> {
        // Its one tool is `bash`; it stops when a command prints its
        // submit line, and words without a call are a format error to it.
        let command = match kind {
            "finish" => SUBMIT.to_string(),
            _ => shell_command(kind, input, workspace, verify)?,
        };
        Some(OwnCall::Call {
            name: "bash".into(),
            input: json!({ "command": command }),
        })
    }
}
