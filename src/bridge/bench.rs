//! What a model call through the bridge costs (`cargo bench --bench
//! bridge`): the same scripted provider answering the same conversation
//! directly, and through the whole path an agent's call takes — an HTTP
//! POST of an Anthropic Messages request to a running bridge, read,
//! renamed, passed to the serving loop, admitted and charged by the meter
//! (a `model_call` event to an in-memory recorder), answered by the
//! provider and written back. Not part of the product's surface.

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Bridge, Naming};
use crate::agent::{
    AgentExit, AgentRun, Ask, CommandRole, CommandRunner, LoopLimits, PromptFacts, RecordError,
    Recorder, Used, Workspace, serve_agent,
};
use crate::cancel::CancelToken;
use crate::exec::{ExecError, ExecOutcome, Refusal};
use crate::protocol::{Conversation, Event, Tool, Turn};
use crate::provider::{ConverseTurn, Provider, ScriptProvider};

/// Per-call times of `calls` scripted model calls: through the bridge,
/// then directly.
pub(crate) fn model_calls(calls: usize) -> std::io::Result<(Vec<Duration>, Vec<Duration>)> {
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, "\"ok\"\n".repeat(calls + 1))?;
    let source = dir.path().join("source");
    std::fs::create_dir_all(&source)?;
    std::fs::write(source.join("a.txt"), "a\n")?;
    let bridged = through_bridge(calls, &script, &source, &dir.path().join("work"))?;
    let direct = directly(calls, &script)?;
    Ok((bridged, direct))
}

fn provider(script: &Path) -> std::io::Result<ScriptProvider> {
    ScriptProvider::new(vec![script.to_path_buf()]).map_err(std::io::Error::other)
}

fn directly(calls: usize, script: &Path) -> std::io::Result<Vec<Duration>> {
    let mut provider = provider(script)?;
    let cancel = CancelToken::new();
    let conversation = Conversation {
        model: "m".into(),
        system: String::new(),
        turns: vec![Turn::User("hi".into())],
        tools: vec![Tool {
            name: "read_file".into(),
            description: "Read a file.".into(),
            schema: json!({"type": "object"}),
        }],
        stream: false,
        max_tokens: Some(100),
    };
    let turn = ConverseTurn {
        attempt: 1,
        side: false,
    };
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        provider
            .converse(&conversation, turn, &cancel)
            .map_err(std::io::Error::other)?;
        times.push(started.elapsed());
    }
    Ok(times)
}

fn through_bridge(
    calls: usize,
    script: &Path,
    source: &Path,
    work: &Path,
) -> std::io::Result<Vec<Duration>> {
    let mut provider = provider(script)?;
    let workspace =
        Workspace::create(source, work, &["**".to_string()]).map_err(std::io::Error::other)?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    let url = format!("http://{}/v1/messages", listener.local_addr()?);
    let (asks, requests) = mpsc::channel::<Ask>();
    let bridge = Bridge::start(
        listener,
        asks.clone(),
        Naming::new(|kind| format!("mcp__agent-runtime__{kind}"), true),
        None,
    )?;
    let client = std::thread::spawn(move || {
        let body = json!({
            "model": "m",
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "mcp__agent-runtime__read_file", "description": "Read a file.",
                       "input_schema": {"type": "object"}}],
        })
        .to_string();
        let agent = ureq::Agent::new_with_defaults();
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            let started = Instant::now();
            let answered = agent
                .post(&url)
                .header("content-type", "application/json")
                .send(body.as_str())
                .and_then(|mut r| r.body_mut().read_to_string());
            if answered.is_err() {
                break;
            }
            times.push(started.elapsed());
        }
        let _ = asks.send(Ask::Exited(AgentExit {
            code: Some(0),
            ..AgentExit::default()
        }));
        times
    });
    let facts = PromptFacts {
        task: String::new(),
        files: Vec::new(),
        files_complete: true,
        allow: Vec::new(),
        editable: vec!["**".into()],
        verify: vec!["true".into()],
        max_steps: u32::MAX,
        max_invalid: 3,
        observation_cap: 4096,
        schema: crate::decision::decision_schema(),
    };
    let limits = LoopLimits {
        max_steps: u32::MAX,
        max_invalid: 3,
        token_budget: u64::MAX,
        observation_cap: 4096,
        context_budget: 1 << 20,
        deadline: Instant::now() + Duration::from_secs(3600),
    };
    let cancel = CancelToken::new();
    let served = serve_agent(
        &mut AgentRun {
            facts: &facts,
            limits: &limits,
            workspace: &workspace,
            provider: &mut provider,
            commands: &mut NoCommands,
            recorder: &mut Memory::default(),
            cancel: &cancel,
            transcript: None,
            attempt: 1,
            budget: None,
            guard: None,
        },
        crate::protocol::AgentMode::Leashed,
        &cancel,
        &requests,
        &mut 0,
    );
    drop(bridge);
    let times = client
        .join()
        .map_err(|_| std::io::Error::other("the client panicked"))?;
    served.map_err(std::io::Error::other)?;
    if times.len() < calls {
        return Err(std::io::Error::other("a call through the bridge failed"));
    }
    Ok(times)
}

/// Runs nothing.
struct NoCommands;

impl CommandRunner for NoCommands {
    fn allows(&self, _argv: &[String]) -> Result<(), Refusal> {
        Err(Refusal::NoRules)
    }

    fn run(
        &mut self,
        _argv: &[String],
        _role: CommandRole,
        _cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError> {
        Err(ExecError::Refused(Refusal::NoRules))
    }
}

/// Keeps the events in memory. Nothing in the measurement depends on the
/// counts (no limit can be reached), so it reports none.
#[derive(Default)]
struct Memory {
    events: Vec<Event>,
}

impl Recorder for Memory {
    fn record(&mut self, event: Event) -> Result<(), RecordError> {
        self.events.push(event);
        Ok(())
    }

    fn used(&self) -> Used {
        Used::default()
    }
}
