//! The agent table: the external coding agents the runtime can run, one
//! file per agent, like the language table. What differs per agent lives
//! here and nowhere else: its package and pinned version, how it is
//! installed, where its program is in the install, which model API it
//! speaks, which modes it runs in, and how it is launched without a
//! terminal — its prompt, where it takes its model's base URL and key,
//! how it loads the runtime's MCP server, how its built-in tools are
//! turned off, and how it names an MCP tool.
//!
//! - `mod.rs` (here): the [`Agent`] trait, the table and the lookup, and
//!   `NAME[@VERSION]` as users write it.
//! - `install.rs`: installing an agent into `DATA/cache/agents/` (a
//!   trusted step with registry access, one directory per name and
//!   version, shared by every job, read-only to attempts) and listing what
//!   is installed.
//! - `claude_code.rs`: Claude Code (npm `@anthropic-ai/claude-code`), the
//!   Anthropic Messages API.
//! - `codex.rs`: Codex CLI (npm `@openai/codex`), the OpenAI Responses API.
//! - `mini_swe_agent.rs`: mini-swe-agent (PyPI), Chat Completions, bash
//!   its one tool: contained mode only.
//! - `command.rs`: any MCP-capable program given by argv.
//!
//! Pure but for `install.rs`: a launch is an argv, an environment and the
//! files to write into the agent's private HOME, built from what the
//! runner hands in; nothing here starts a process of an attempt.

mod claude_code;
mod codex;
mod command;
mod install;
mod mini_swe_agent;

use std::path::{Path, PathBuf};

pub(crate) use install::{install, installed};

/// Where on the bridge an agent's driver says it has stopped (`POST`):
/// the answer is verify's output to go on with, or nothing.
pub(crate) const STOPPED_PATH: &str = "/agent-runtime/stopped";

/// The MCP server name the runtime's tool gateway goes by.
pub(crate) const GATEWAY: &str = "agent-runtime";

/// How an agent runs: leashed (every action through the runtime's tools,
/// its built-in tools off, no view of the workspace) or contained (its
/// own tools, inside the attempt's sandbox).
pub(crate) use crate::protocol::AgentMode as Mode;

/// The model API an agent speaks to its base URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub(crate) enum Dialect {
    /// `POST /v1/messages`, streamed as server-sent events.
    AnthropicMessages,
    /// `POST /v1/responses`, streamed.
    OpenAiResponses,
    /// `POST /v1/chat/completions`.
    ChatCompletions,
}

/// Where an agent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Package {
    /// An npm package; `bin` its program's path beneath `node_modules/.bin`.
    Npm {
        name: &'static str,
        bin: &'static str,
    },
    /// A PyPI package installed into a virtual environment of its own;
    /// `module` the module its console script runs. It is run as the
    /// venv's `python3 -m MODULE`: a venv's scripts name the interpreter
    /// by the path it was made at, and an install is made in a staging
    /// directory and renamed into place.
    Pypi {
        name: &'static str,
        module: &'static str,
    },
    /// Nothing to install: the manifest names the program.
    None,
}

impl Package {
    /// The package's name as its registry knows it.
    pub(crate) fn name(self) -> Option<&'static str> {
        match self {
            Package::Npm { name, .. } | Package::Pypi { name, .. } => Some(name),
            Package::None => None,
        }
    }

    /// Where the program is beneath an install directory.
    pub(crate) fn program(self, install: &Path) -> Option<PathBuf> {
        match self {
            Package::Npm { bin, .. } => Some(install.join("node_modules/.bin").join(bin)),
            Package::Pypi { .. } => Some(install.join("venv/bin/python3")),
            Package::None => None,
        }
    }
}

/// What a launch is given.
#[derive(Debug, Clone)]
pub(crate) struct LaunchContext<'a> {
    pub mode: Mode,
    /// The program (from the install, or a `command` agent's argv[0]).
    pub program: &'a Path,
    /// The task prompt.
    pub prompt: &'a str,
    /// The model's name as the agent should ask for it.
    pub model: &'a str,
    /// The bridge's base URL (`http://127.0.0.1:PORT`), its dummy key, and
    /// the URL of the tool gateway (streamable HTTP).
    pub base_url: &'a str,
    pub key: &'a str,
    pub mcp_url: &'a str,
    /// The agent's private HOME.
    pub home: &'a Path,
    /// Leashed with its own tools left on: only where a test hook removes
    /// the switch (`AGENT_RUNTIME_TEST_DISABLE_LAYERS=agent_builtins`),
    /// to show the agent's sandbox holds without it.
    pub builtins: bool,
}

/// How to start an agent: argv (`argv[0]` the program), the environment
/// beyond a clean one (`HOME`, `PATH`, `TMPDIR` are the runner's), and
/// files to write beneath its HOME first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Launch {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub files: Vec<(PathBuf, String)>,
}

impl Launch {
    /// Writes its files beneath `home`.
    pub(crate) fn write_files(&self, home: &Path) -> std::io::Result<()> {
        for (relative, text) in &self.files {
            let path = home.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text)?;
        }
        Ok(())
    }
}

/// One agent of the table.
pub(crate) trait Agent: Sync {
    /// Its name in manifests and on the command line (`claude-code`).
    fn name(&self) -> &'static str;
    fn package(&self) -> Package;
    /// The version installed when none is asked for.
    fn default_version(&self) -> &'static str;
    fn dialect(&self) -> Dialect;
    /// The modes it can run in.
    fn modes(&self) -> &'static [Mode];
    /// How it names tool `tool` of MCP server `server`.
    fn mcp_tool_name(&self, server: &str, tool: &str) -> String {
        format!("mcp__{server}__{tool}")
    }
    /// How to start it.
    fn launch(&self, context: &LaunchContext<'_>) -> Launch;
    /// Contained: a decision (its kind and fields) as a call of the
    /// agent's own tools, paths made absolute in `workspace`, `verify` the
    /// job's verify command; `None` where it has no such tool. This is how
    /// a script's decision lines drive an agent with its own tools.
    fn own_call(
        &self,
        kind: &str,
        input: &serde_json::Value,
        workspace: &Path,
        verify: &[String],
    ) -> Option<OwnCall> {
        let _ = (kind, input, workspace, verify);
        None
    }
    /// Contained: the argv that resumes session `session` of a run
    /// started with `first`, telling it `message` (the forced verify's
    /// output); `None` where it is not relaunched to go on (it cannot be
    /// resumed, or its driver asks the bridge at [`STOPPED_PATH`] before
    /// it exits and goes on in the same process).
    fn resume(&self, first: &Launch, session: &str, message: &str) -> Option<Vec<String>> {
        let _ = (first, session, message);
        None
    }
    /// The log it keeps of its own (beneath its HOME), kept with the
    /// attempt's artifacts as `agent-trajectory.json`.
    fn own_log(&self) -> Option<&'static str> {
        None
    }
    /// The session its output (stdout) names, for [`Agent::resume`].
    fn session_id(&self, stdout: &str) -> Option<String> {
        let _ = stdout;
        None
    }
}

/// A decision as an agent's own tool call, or as what the model says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OwnCall {
    Call {
        name: String,
        input: serde_json::Value,
    },
    /// Words that end the model's turn (`finish`: its summary).
    Say(String),
}

/// A decision as one shell command line, for an agent whose one tool is
/// a shell: `cat`, `find`, `printf`, a `python3` one-line replace, the
/// command itself, the verify command; `None` for `finish` and any other
/// kind.
pub(crate) fn shell_command(
    kind: &str,
    input: &serde_json::Value,
    workspace: &Path,
    verify: &[String],
) -> Option<String> {
    let text = |key: &str| input[key].as_str().unwrap_or_default();
    let path = || workspace.join(text("path")).display().to_string();
    let line = |argv: &[&str]| shell_line(&argv.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    Some(match kind {
        "read_file" => line(&["cat", &path()]),
        "list_files" => line(&["find", &path(), "-type", "f"]),
        "write_file" => format!(
            "{} > {}",
            line(&["printf", "%s", text("content")]),
            line(&[&path()])
        ),
        "replace_text" => line(&[
            "python3",
            "-c",
            "import sys; p, a, b = sys.argv[1:]; t = open(p).read(); \
             open(p, 'w').write(t.replace(a, b, 1))",
            &path(),
            text("expected"),
            text("replacement"),
        ]),
        "run_tool" => shell_line(&run_tool_argv(input)),
        "verify" => shell_line(verify),
        _ => return None,
    })
}

/// The argv of a `run_tool` decision's fields (`program`, `args`).
pub(crate) fn run_tool_argv(input: &serde_json::Value) -> Vec<String> {
    let mut argv = vec![input["program"].as_str().unwrap_or_default().to_string()];
    argv.extend(
        input["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .map(String::from),
    );
    argv
}

/// `argv` as one POSIX shell command line.
pub(crate) fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./=:,+-@%".contains(c));
            if plain {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every agent, in the order `agents` lists them.
pub(crate) fn table() -> [&'static dyn Agent; 4] {
    [
        &claude_code::ClaudeCode,
        &codex::Codex,
        &mini_swe_agent::MiniSweAgent,
        &command::CommandAgent,
    ]
}

/// An agent, version and mode as a user writes it:
/// `NAME[@VERSION][:MODE]`; `runtime` is the built-in loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentSpec {
    pub name: String,
    pub version: Option<String>,
    pub mode: Option<Mode>,
}

/// The name of the runtime's own loop, as `--agent` takes it.
pub(crate) const RUNTIME: &str = "runtime";

/// Why `NAME[@VERSION]` names no agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SpecError {
    #[error("unknown agent `{name}`{hint}; the agents are {known}")]
    Unknown {
        name: String,
        hint: String,
        known: String,
    },
    #[error("`{0}` is not a mode: leashed or contained")]
    Mode(String),
    #[error("`{name}` does not run {mode}")]
    Unsupported { name: String, mode: &'static str },
    #[error(
        "`{0}` is not a version: letters, digits, '.', '-' and '+' (as npm and PyPI write them)"
    )]
    Version(String),
}

impl std::str::FromStr for AgentSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<AgentSpec, SpecError> {
        let (text, mode) = match text.split_once(':') {
            Some((text, "leashed")) => (text, Some(Mode::Leashed)),
            Some((text, "contained")) => (text, Some(Mode::Contained)),
            Some((_, other)) => return Err(SpecError::Mode(other.to_string())),
            None => (text, None),
        };
        if text == RUNTIME {
            return Ok(AgentSpec {
                name: RUNTIME.to_string(),
                version: None,
                mode: None,
            });
        }
        let (name, version) = match text.split_once('@') {
            Some((name, version)) => (name, Some(version)),
            None => (text, None),
        };
        lookup(name)?;
        if let Some(v) = version {
            let ok = !v.is_empty()
                && v.len() <= 64
                && v.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'));
            if !ok {
                return Err(SpecError::Version(v.to_string()));
            }
        }
        let agent = lookup(name)?;
        if let Some(mode) = mode
            && !agent.modes().contains(&mode)
        {
            return Err(SpecError::Unsupported {
                name: name.to_string(),
                mode: mode.as_str(),
            });
        }
        Ok(AgentSpec {
            name: name.to_string(),
            version: version.map(String::from),
            mode,
        })
    }
}

impl AgentSpec {
    /// Its agent (the spec was checked when parsed).
    pub(crate) fn agent(&self) -> &'static dyn Agent {
        lookup(&self.name).unwrap_or(&command::CommandAgent)
    }

    /// The job's agent this spec asks for; none for the runtime's loop.
    pub(crate) fn choice(&self) -> Option<crate::protocol::AgentChoice> {
        (self.name != RUNTIME).then(|| crate::protocol::AgentChoice {
            name: self.name.clone(),
            version: Some(self.version().to_string()),
            mode: self.mode.unwrap_or_else(|| {
                let modes = self.agent().modes();
                modes.first().copied().unwrap_or_default()
            }),
            command: Vec::new(),
            verify_rounds: None,
            memory: None,
        })
    }

    /// The version asked for, else the agent's pinned one.
    pub(crate) fn version(&self) -> &str {
        self.version
            .as_deref()
            .unwrap_or_else(|| self.agent().default_version())
    }
}

/// The agent named `name`.
pub(crate) fn lookup(name: &str) -> Result<&'static dyn Agent, SpecError> {
    let agents = table();
    if let Some(agent) = agents.iter().find(|a| a.name() == name) {
        return Ok(*agent);
    }
    let names: Vec<&str> = agents.iter().map(|a| a.name()).collect();
    let hint = names
        .iter()
        .map(|n| (strsim::jaro_winkler(n, name), n))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default();
    Err(SpecError::Unknown {
        name: name.to_string(),
        hint,
        known: names.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_versions_parse_and_a_typo_gets_a_hint() {
        let spec: AgentSpec = "codex@0.171.0".parse().unwrap();
        assert_eq!((spec.name.as_str(), spec.version()), ("codex", "0.171.0"));
        let spec: AgentSpec = "claude-code".parse().unwrap();
        assert_eq!(spec.version(), claude_code::ClaudeCode.default_version());
        let err = "claude-cod".parse::<AgentSpec>().unwrap_err().to_string();
        assert!(err.contains("did you mean `claude-code`"), "{err}");
        assert!(err.contains("mini-swe-agent"), "{err}");
        for bad in ["codex@", "codex@../x", "codex@1 2", "codex@-1"] {
            assert!(
                matches!(bad.parse::<AgentSpec>(), Err(SpecError::Version(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn every_agent_has_a_unique_name_a_mode_and_a_package_where_it_installs() {
        let agents = table();
        for (i, a) in agents.iter().enumerate() {
            assert!(!a.modes().is_empty(), "{}", a.name());
            assert!(
                agents[..i].iter().all(|b| b.name() != a.name()),
                "{}",
                a.name()
            );
            if a.name() != "command" {
                assert!(a.package().name().is_some(), "{}", a.name());
                assert!(!a.default_version().is_empty(), "{}", a.name());
            }
        }
        assert_eq!(
            claude_code::ClaudeCode.mcp_tool_name(GATEWAY, "read_file"),
            "mcp__agent-runtime__read_file"
        );
    }
}
