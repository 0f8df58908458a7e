//! An attempt driven by an external agent (leashed): its install, its own
//! sandbox (a network namespace holding only the model bridge, its install
//! read-only, a private HOME, an empty working directory, no view of the
//! workspace), the bridge and the tool gateway, and the agent's process
//! run to its end beside the serving loop that takes its every request
//! through the runtime's seams.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::agent::{AgentExit, AgentRun, Ask, ExternalEnd, serve_agent};
use crate::agents::{AgentSpec, GATEWAY, LaunchContext, Mode, Package};
use crate::bridge::{Bridge, Naming};
use crate::cancel::CancelToken;
use crate::exec::{AllowList, ExecRequest, run};
use crate::manifest::Manifest;
use crate::protocol::AgentChoice;
use crate::sandbox::{OwnNetwork, SandboxMode, SandboxPolicy};

/// The key the agent is given: the bridge takes any, and the provider's
/// real one never leaves the runner.
const DUMMY_KEY: &str = "agent-runtime-bridge";

/// Memory an agent's own runtime is given on top of the job's `memory`
/// unless `[agent] memory` says how much its whole tree gets.
const AGENT_MEMORY: u64 = 1 << 30;

/// What the runner knows of an external agent's attempt.
pub(super) struct External<'a> {
    pub choice: &'a AgentChoice,
    pub manifest: &'a Manifest,
    /// `DATA/cache/agents/`.
    pub agents_dir: PathBuf,
    /// The agent's own directory (HOME, TMPDIR, working directory).
    pub agent_dir: PathBuf,
    /// The attempt's artifacts (`runs/<job>/<n>/`).
    pub runs: &'a Path,
    /// The job's sandbox policy (the data dir and hidden tests denied).
    pub policy: SandboxPolicy,
    pub deadline: Instant,
    pub full_trace: bool,
}

/// Why the agent could not be set up: the attempt's infrastructure, or a
/// sandbox layer the leash needs that this machine lacks.
#[derive(Debug, thiserror::Error)]
pub(super) enum ExternalError {
    #[error("{0}")]
    Setup(String),
    #[error("{0}")]
    Sandbox(String),
}

/// Runs the attempt's agent phase with an external agent.
pub(super) fn run_external(
    external: External<'_>,
    mut run: AgentRun<'_>,
) -> Result<Result<ExternalEnd, crate::agent::AgentError>, ExternalError> {
    let External {
        choice,
        manifest,
        agents_dir,
        agent_dir,
        runs,
        policy,
        deadline,
        full_trace,
    } = external;
    let spec = AgentSpec {
        name: choice.name.clone(),
        version: choice.version.clone(),
        mode: Some(choice.mode),
    };
    let agent = spec.agent();
    let contained = choice.mode == Mode::Contained;
    if !agent.modes().contains(&choice.mode) {
        return Err(ExternalError::Setup(format!(
            "{} does not run {}",
            agent.name(),
            choice.mode.as_str()
        )));
    }
    // The install: a trusted phase, shared by every job, made once; the
    // `command` agent's program is the manifest's.
    let (program, install) = if agent.package() == Package::None {
        let Some(first) = choice.command.first() else {
            return Err(ExternalError::Setup(
                "the `command` agent needs `[agent] command` in the manifest".into(),
            ));
        };
        (PathBuf::from(first), None)
    } else {
        let (installed, _) = crate::agents::install(&agents_dir, &spec, &mut |_| {})
            .map_err(|e| ExternalError::Setup(format!("cannot install {}: {e}", agent.name())))?;
        let Some(program) = agent.package().program(&installed.dir) else {
            return Err(ExternalError::Setup(format!(
                "{} has no program to run",
                agent.name()
            )));
        };
        (program, Some(installed.dir))
    };
    // The agent's network: its own namespace with the bridge alone in it.
    let (network, listener) = OwnNetwork::with_listener()
        .map_err(|e| ExternalError::Sandbox(format!("the agent's network namespace: {e}")))?;
    let work = agent_dir.join("work");
    let home = agent_dir.join("home");
    for dir in [&work, &home, &agent_dir.join("tmp")] {
        std::fs::create_dir_all(dir)
            .map_err(|e| ExternalError::Setup(format!("cannot create {}: {e}", dir.display())))?;
    }
    let port = listener
        .local_addr()
        .map_err(|e| ExternalError::Setup(format!("the bridge's socket: {e}")))?
        .port();
    let base_url = format!("http://127.0.0.1:{port}");
    let mcp_url = format!("{base_url}/mcp");
    let prompt = if contained {
        contained_prompt(manifest)
    } else {
        leash_prompt(manifest)
    };
    let model = model_name(manifest);
    let launch = agent.launch(&LaunchContext {
        mode: choice.mode,
        program: &program,
        prompt: &prompt,
        model: &model,
        base_url: &base_url,
        key: DUMMY_KEY,
        mcp_url: &mcp_url,
        home: &home,
        builtins: crate::sandbox::test_hooks().is_some_and(|h| h.removes("agent_builtins")),
    });
    launch.write_files(&home).map_err(|e| {
        ExternalError::Setup(format!(
            "cannot write the agent's files in {}: {e}",
            home.display()
        ))
    })?;
    let mut argv = launch.argv.clone();
    if agent.package() == Package::None {
        argv = choice.command.clone();
    }
    // Contained, the agent works in the workspace itself; leashed, in an
    // empty directory of its own.
    let workspace = run.workspace.root().to_path_buf();
    let cwd = if contained { &workspace } else { &work };
    let request = |argv: &[String]| {
        agent_request(
            argv,
            &launch.env,
            &program,
            install.as_deref(),
            &agent_dir,
            cwd,
            policy.clone(),
            network.clone(),
            deadline,
            choice.memory,
        )
        .map_err(ExternalError::Setup)
    };
    let mut next = request(&argv)?;

    let (asks, requests) = mpsc::channel::<Ask>();
    let naming = if contained {
        let verify = manifest.verify.clone();
        let root = workspace.clone();
        Naming::contained(
            |kind| agent.mcp_tool_name(GATEWAY, kind),
            std::sync::Arc::new(move |kind: &str, input: &serde_json::Value| {
                agent.own_call(kind, input, &root, &verify)
            }),
        )
    } else {
        Naming::new(|kind| agent.mcp_tool_name(GATEWAY, kind), true)
    };
    let records = full_trace.then(|| runs.join("bridge.jsonl"));
    let bridge = Bridge::start(listener, asks.clone(), naming, records)
        .map_err(|e| ExternalError::Setup(format!("cannot start the model bridge: {e}")))?;
    // Forced-verify rounds left: spent by relaunching the agent to resume
    // its session, or by its driver going on in the same process.
    let mut rounds = if contained {
        choice.verify_rounds.unwrap_or(DEFAULT_VERIFY_ROUNDS)
    } else {
        0
    };
    let mut round = 0;
    let mut agent_time = Duration::ZERO;
    let served = loop {
        // Stopped by the serving loop, the attempt's cancel, or its deadline.
        let stop = run.cancel.child();
        let agent_stop = stop.clone();
        let log = runs.join(if round == 0 {
            "agent.log".to_string()
        } else {
            format!("agent-{}.log", round + 1)
        });
        let asks = asks.clone();
        let process = std::thread::Builder::new()
            .name("agent".into())
            .spawn(move || {
                let started = Instant::now();
                let exit = match run_agent_process(&next, &agent_stop, &log) {
                    Ok(exit) => exit,
                    Err(e) => AgentExit {
                        sandbox_unavailable: matches!(
                            e,
                            crate::exec::ExecError::SandboxUnavailable { .. }
                        ),
                        not_started: Some(e.to_string()),
                        ..AgentExit::default()
                    },
                };
                let session = exit.stdout.clone();
                let ran = started.elapsed();
                let _ = asks.send(Ask::Exited(exit));
                (session, ran)
            })
            .map_err(|e| ExternalError::Setup(format!("cannot start the agent's thread: {e}")))?;
        let mut served = serve_agent(&mut run, choice.mode, &stop, &requests, &mut rounds);
        // Whatever ended the round, nothing of the agent outlives it.
        stop.cancel();
        let (stdout, ran) = process.join().unwrap_or_default();
        agent_time += ran;
        if let Ok(end) = &mut served {
            end.agent_ms = u64::try_from(agent_time.as_millis()).unwrap_or(u64::MAX);
        }
        let Ok(end) = &served else {
            break served;
        };
        // Contained: a failed forced verify goes back to the agent, in
        // the same session, while rounds are left.
        let resumed = match (&end.verify_failed, rounds > 0) {
            (Some(output), true) => agent.session_id(&stdout).and_then(|session| {
                agent.resume(
                    &crate::agents::Launch {
                        argv: argv.clone(),
                        ..launch.clone()
                    },
                    &session,
                    &crate::agent::verify_failed_message(output),
                )
            }),
            _ => None,
        };
        match resumed {
            Some(resume) => {
                next = request(&resume)?;
                rounds -= 1;
                round += 1;
            }
            None => break served,
        }
    };
    drop(bridge);
    // The agent's own log, kept beside its output: a diagnostic, so a
    // failure to copy it does not fail the attempt.
    if let Some(own) = agent.own_log() {
        let _ = std::fs::copy(home.join(own), runs.join("agent-trajectory.json"));
    }
    Ok(served)
}

/// Forced-verify rounds of a contained agent when `[agent]` names none.
pub(crate) const DEFAULT_VERIFY_ROUNDS: u32 = 2;

/// The executor's request for the agent's process.
#[allow(clippy::too_many_arguments)]
fn agent_request(
    argv: &[String],
    env: &[(String, String)],
    program: &Path,
    install: Option<&Path>,
    agent_dir: &Path,
    work: &Path,
    mut policy: SandboxPolicy,
    network: OwnNetwork,
    deadline: Instant,
    memory: Option<u64>,
) -> Result<ExecRequest, String> {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let allow = AllowList::program_any_args(&name).map_err(|e| e.to_string())?;
    let mut argv = argv.to_vec();
    if let Some(first) = argv.first_mut() {
        *first = name;
    }
    // The leash is the sandbox: never weaker than every layer.
    policy.mode = SandboxMode::Required;
    policy.network = true;
    policy.join_network = Some(network);
    if let Some(install) = install {
        policy.readable.push(install.to_path_buf());
    }
    // A program given by path: its directory readable too; by name: found
    // on the search path like any command's.
    let by_path = program.is_absolute();
    if by_path
        && install.is_none()
        && let Some(dir) = program.parent()
    {
        policy.readable.push(dir.to_path_buf());
    }
    policy.limits.memory = match memory {
        Some(memory) => Some(memory),
        None => policy.limits.memory.map(|m| m.saturating_add(AGENT_MEMORY)),
    };
    // A `command` agent's files named by absolute path (its script):
    // readable, each file alone.
    if install.is_none() {
        for arg in argv.iter().skip(1) {
            let path = Path::new(arg);
            if path.is_absolute() && path.is_file() {
                policy.readable.push(path.to_path_buf());
            }
        }
    }
    let mut request = ExecRequest::new(argv, allow, work.to_path_buf());
    request.scratch = Some(agent_dir.to_path_buf());
    request.extra_env = env.iter().cloned().collect();
    request.timeout = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_secs(1));
    request.output_cap = 256 * 1024;
    request.sandbox = policy;
    request.program_path = by_path.then(|| program.to_path_buf());
    // A virtual environment's interpreter finds its environment by the
    // path it is run as: by name, first on the search path.
    if let Some(bin) = program.parent()
        && bin
            .parent()
            .is_some_and(|venv| venv.join("pyvenv.cfg").is_file())
    {
        request.search_path =
            crate::exec::SearchPath::for_job(&[bin.to_path_buf()], &request.toolchain);
        request.program_path = None;
    }
    Ok(request)
}

/// Runs the agent to its end; keeps its output in `log`.
fn run_agent_process(
    request: &ExecRequest,
    stop: &CancelToken,
    log: &Path,
) -> Result<AgentExit, crate::exec::ExecError> {
    let outcome = run(request, stop)?;
    let stdout = outcome.stdout.to_text();
    let stderr = outcome.stderr.to_text();
    // A diagnostic: failing to keep it must not fail the attempt.
    let _ = std::fs::write(
        log,
        format!(
            "== stdout\n{stdout}\n== stderr\n{stderr}\n== exit {:?} signal {:?}\n",
            outcome.exit_code, outcome.signal
        ),
    );
    // Its last words: stderr's last lines, or stdout's last line when it
    // wrote nothing to stderr (Claude Code reports errors on stdout).
    let said = if stderr.trim().is_empty() {
        &stdout
    } else {
        &stderr
    };
    let lines = if stderr.trim().is_empty() { 1 } else { 8 };
    let tail: Vec<&str> = said
        .lines()
        .filter(|l| !l.trim().is_empty())
        .rev()
        .take(lines)
        .collect();
    Ok(AgentExit {
        not_started: None,
        sandbox_unavailable: false,
        code: outcome.exit_code,
        signal: outcome.signal,
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        stdout,
    })
}

/// The prompt a contained agent is given: the task, what it may change,
/// and that the runtime verifies when it stops.
fn contained_prompt(manifest: &Manifest) -> String {
    format!(
        "{task}\n\nThe task's files are in your working directory; change only {editable}. \
         When you stop, the runtime runs `{verify}`; if it fails you will be told its output.",
        task = manifest.prompt.trim_end(),
        editable = manifest.editable.join(", "),
        verify = manifest.verify.join(" "),
    )
}

/// The prompt a leashed agent is given: the task, and the leash.
fn leash_prompt(manifest: &Manifest) -> String {
    let allow = if manifest.allow.is_empty() {
        "none".to_string()
    } else {
        manifest.allow.join("; ")
    };
    format!(
        "{task}\n\nYou work through the `{GATEWAY}` tools only: read_file, list_files, \
         write_file and replace_text on the task's workspace (paths relative to it; you \
         may write only {editable}), run_tool for the allowed commands ({allow}), verify \
         (runs `{verify}`), and finish with a summary when done. An edit must be \
         verified before finish is accepted.",
        task = manifest.prompt.trim_end(),
        editable = manifest.editable.join(", "),
        verify = manifest.verify.join(" "),
    )
}

/// The model the agent asks for: its provider's, or a name saying the
/// replies are scripted.
fn model_name(manifest: &Manifest) -> String {
    use crate::manifest::ProviderConfig;
    match &manifest.provider {
        Some(ProviderConfig::Openai(c)) => c.model.clone(),
        Some(ProviderConfig::Anthropic(c)) => c.model.clone(),
        _ => "agent-runtime-script".to_string(),
    }
}

/// For `cargo bench --bench agent`: the time from launching agent `name`
/// installed in `install`, in `mode`, to its first model request at the
/// bridge, in its own sandbox as an attempt runs it (`sandboxed`) or as a
/// bare process on the host's loopback. Not part of the product's surface.
pub(crate) fn bench_agent_start(
    name: &str,
    mode: Mode,
    install: &Path,
    sandboxed: bool,
) -> std::io::Result<Duration> {
    let agent = crate::agents::lookup(name).map_err(std::io::Error::other)?;
    let program = agent
        .package()
        .program(install)
        .ok_or_else(|| std::io::Error::other("no program"))?;
    let dir = tempfile::tempdir()?;
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    for d in [&home, &work, &dir.path().join("tmp")] {
        std::fs::create_dir_all(d)?;
    }
    let (network, listener) = if sandboxed {
        let (network, listener) = OwnNetwork::with_listener()?;
        (Some(network), listener)
    } else {
        (None, std::net::TcpListener::bind(("127.0.0.1", 0))?)
    };
    let base_url = format!("http://127.0.0.1:{}", listener.local_addr()?.port());
    let mcp_url = format!("{base_url}/mcp");
    let launch = agent.launch(&LaunchContext {
        mode,
        program: &program,
        prompt: "Say hello.",
        model: "agent-runtime-script",
        base_url: &base_url,
        key: DUMMY_KEY,
        mcp_url: &mcp_url,
        home: &home,
        builtins: false,
    });
    launch.write_files(&home)?;
    let (asks, requests) = mpsc::channel::<Ask>();
    let naming = Naming::new(|kind| agent.mcp_tool_name(GATEWAY, kind), true);
    let bridge = Bridge::start(listener, asks, naming, None)?;
    let stop = CancelToken::new();
    let started = Instant::now();
    let process = match network {
        Some(network) => {
            let mut policy = SandboxPolicy {
                mode: SandboxMode::Required,
                ..SandboxPolicy::default()
            };
            // Contained, its working directory is the (here empty)
            // workspace, writable.
            if mode == Mode::Contained {
                policy.writable.push(work.clone());
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            let request = agent_request(
                &launch.argv,
                &launch.env,
                &program,
                Some(install),
                dir.path(),
                &work,
                policy,
                network,
                deadline,
                None,
            )
            .map_err(std::io::Error::other)?;
            let stop = stop.clone();
            Launched::Sandboxed(std::thread::spawn(move || {
                let _ = run(&request, &stop);
            }))
        }
        None => Launched::Bare(
            std::process::Command::new(&program)
                .args(launch.argv.iter().skip(1))
                .env_clear()
                .envs(launch.env.iter().cloned())
                .env("HOME", &home)
                .env("TMPDIR", dir.path().join("tmp"))
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .current_dir(&work)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()?,
        ),
    };
    let first = loop {
        match requests.recv_timeout(Duration::from_secs(60)) {
            Ok(Ask::Model { answer, .. }) => {
                let elapsed = started.elapsed();
                answer(Err("agent-runtime: the measurement is over".into()));
                break Ok(elapsed);
            }
            Ok(_) => continue,
            Err(_) => break Err(std::io::Error::other("no model request within 60 s")),
        }
    };
    stop.cancel();
    match process {
        Launched::Sandboxed(thread) => {
            let _ = thread.join();
        }
        Launched::Bare(mut child) => {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    drop(bridge);
    first
}

enum Launched {
    Sandboxed(std::thread::JoinHandle<()>),
    Bare(std::process::Child),
}
