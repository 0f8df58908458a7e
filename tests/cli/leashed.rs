//! Real agents on the leash (`batch --agent`), through the real binary:
//! Claude Code installed by `agents install` (from the registry, shared
//! by the tests of one target dir), driven offline by a scripted provider
//! behind the model bridge, every action a call of the runtime's tool
//! gateway.

use std::path::{Path, PathBuf};

use agent_runtime_test_support::{require_layer, require_tool};

use crate::harness::{Sandbox, log_lines};

/// The agents installed once for every test of this target dir.
fn shared_agents() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("agents")
}

/// `DATA/cache/agents` of `sb` made the shared install of `agent`
/// (installed first if it is not yet: `agents install` locks, so tests
/// running at once install it once).
fn with_agent(sb: &Sandbox, agent: &str) -> Result<(), String> {
    let shared = shared_agents();
    let run = sb.run(&[
        "agents",
        "install",
        shared.to_str().unwrap_or_default(),
        agent,
    ]);
    if run.code != 0 {
        return Err(format!(
            "`agents install {agent}` failed (is the npm registry reachable?): {}",
            run.stderr.lines().last().unwrap_or_default()
        ));
    }
    let cache = sb.data().join("cache");
    std::fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
    let link = cache.join("agents");
    if !link.exists() {
        std::os::unix::fs::symlink(shared.join("cache/agents"), &link)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A sandbox for `test` with `agent` installed, where this machine can
/// run it (root, the registry); else `None`, having said why.
fn ready(test: &str, agent: &str) -> Option<Sandbox> {
    let sb = Sandbox::new();
    require_layer(test, root())?;
    require_tool(test, with_agent(&sb, agent))?;
    Some(sb)
}

/// The leash's own network namespace needs root.
fn root() -> Result<(), String> {
    if nix::unistd::geteuid().is_root() {
        Ok(())
    } else {
        Err("an agent's own network namespace needs the runner to be root".into())
    }
}

/// The bundled `off_by_one` job with `script` as its scripted provider
/// (`dialect` when given), in `sb`.
fn job_with_script(sb: &Sandbox, lines: &[&str], dialect: Option<&str>) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = sb.path().join("script.jsonl");
    std::fs::write(&script, lines.join("\n") + "\n").unwrap();
    let manifest = std::fs::read_to_string(repo.join("jobs/off_by_one.toml"))
        .unwrap()
        .replace(
            "../evaluation",
            &repo.join("evaluation").display().to_string(),
        )
        .replace(
            &format!(
                "script = \"{}/evaluation/scripts/off_by_one.jsonl\"\n\n[sandbox]",
                repo.display()
            ),
            &format!(
                "script = \"{}\"\n{}\n[sandbox]",
                script.display(),
                dialect.map_or(String::new(), |d| format!("dialect = \"{d}\"\n"))
            ),
        );
    assert!(manifest.contains("script.jsonl"), "{manifest}");
    let path = sb.path().join("off_by_one.toml");
    std::fs::write(&path, manifest).unwrap();
    path
}

/// `batch DATA JOB --agent AGENT` in `sb`.
fn batch_with(sb: &Sandbox, job: &Path, agent: &str) -> crate::harness::Run {
    let data = sb.data();
    sb.run(&[
        "batch",
        data.to_str().unwrap(),
        job.to_str().unwrap(),
        "--agent",
        agent,
    ])
}

/// Decision events of the agent's attempt: (kind, refused).
fn decisions(sb: &Sandbox) -> Vec<(String, bool)> {
    log_lines(sb)
        .iter()
        .filter(|r| r["type"] == "decision")
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or_default().to_string(),
                r.get("reason").is_some_and(|v| !v.is_null()),
            )
        })
        .collect()
}

const LEASHED_SCRIPT: &[&str] = &[
    r#"{"kind":"read_file","path":"src/lib.rs"}"#,
    // Not editable: refused, a tool error the agent sees.
    r#"{"kind":"replace_text","path":"Cargo.toml","expected":"[package]","replacement":"[package]\n"}"#,
    // Not allowed: refused.
    r#"{"kind":"run_tool","program":"ls","args":["-la"]}"#,
    // A wrong fix: finish runs verify, which fails, and refuses it.
    r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1..n","replacement":"2..n"}"#,
    r#"{"kind":"finish","summary":"done?"}"#,
    r#"{"kind":"replace_text","path":"src/lib.rs","expected":"2..n","replacement":"1..=n"}"#,
    r#"{"kind":"finish","summary":"sum_up_to now includes n."}"#,
];

/// `agent` leashed on the bundled job with [`LEASHED_SCRIPT`] (answered
/// in `dialect`, when given): it succeeds, every tool call a decision
/// event, the refusals too, and the job names the agent and its version.
fn leashed_run(test: &str, agent: &str, version: &str, dialect: Option<&str>) {
    let Some(sb) = ready(test, agent) else {
        return;
    };
    let job = job_with_script(&sb, LEASHED_SCRIPT, dialect);
    let data = sb.data();
    let run = batch_with(&sb, &job, agent);
    let id = format!("off_by_one+{agent}");
    let state = crate::harness::job_state(&sb, &id);
    let agent_log =
        std::fs::read_to_string(data.join(format!("runs/{id}/1/agent.log"))).unwrap_or_default();
    assert_eq!(
        state, "succeeded",
        "{}\n{}\n{agent_log}",
        run.stdout, run.stderr
    );
    // Every tool call is a decision event, the refusals too.
    assert_eq!(
        decisions(&sb),
        [
            ("read_file".to_string(), false),
            ("invalid".to_string(), true),
            ("invalid".to_string(), true),
            ("replace_text".to_string(), false),
            ("finish".to_string(), false),
            ("replace_text".to_string(), false),
            ("finish".to_string(), false),
        ],
        "{agent_log}"
    );
    let lines = log_lines(&sb);
    // The finish with verify owed ran it twice: failed, then passed.
    let verifies: Vec<bool> = lines
        .iter()
        .filter(|r| r["type"] == "verify")
        .map(|r| r["passed"].as_bool().unwrap_or(false))
        .collect();
    assert_eq!(verifies, [false, true], "{lines:#?}");
    // The attempt names its agent and version.
    let started = lines
        .iter()
        .find(|r| r["type"] == "attempt_started")
        .unwrap();
    assert_eq!(started["agent"], format!("{agent}@{version}"), "{started}");
    // The job names its agent and the version it ran.
    let enqueued = lines.iter().find(|r| r["type"] == "enqueued").unwrap();
    let named = &enqueued["manifest"]["manifest"]["agent"];
    assert_eq!(named["name"], agent, "{enqueued}");
    assert_eq!(named["version"], version);
    assert_eq!(named["mode"], "leashed");
    // Reports and exports name the agent and its version.
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("report/results.json")).unwrap())
            .unwrap();
    let row = &results["jobs"][0];
    assert_eq!(row["agent"]["name"], agent, "{row}");
    assert_eq!(row["agent"]["version"], version, "{row}");
    let atif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data.join(format!("report/atif/{id}/1.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(atif["agent"]["name"], agent, "{}", atif["agent"]);
    assert_eq!(atif["agent"]["version"], version);
    // The refused edit wrote nothing: the patch is the fix alone.
    let patch =
        std::fs::read_to_string(data.join(format!("runs/{id}/1/patch.diff"))).unwrap_or_default();
    assert!(
        patch.contains("1..=n") && !patch.contains("Cargo.toml"),
        "{patch}"
    );
}

#[test]
fn claude_code_leashed_reads_edits_is_refused_and_finishes_through_the_gateway() {
    leashed_run(
        "claude_code_leashed_reads_edits_is_refused_and_finishes_through_the_gateway",
        "claude-code",
        "2.1.197",
        None,
    );
}

#[test]
fn codex_leashed_reads_edits_is_refused_and_finishes_through_the_gateway() {
    leashed_run(
        "codex_leashed_reads_edits_is_refused_and_finishes_through_the_gateway",
        "codex",
        "0.171.0",
        None,
    );
}

#[test]
fn claude_code_runs_on_an_openai_provider_and_codex_on_an_anthropic_one() {
    let test = "claude_code_runs_on_an_openai_provider_and_codex_on_an_anthropic_one";
    leashed_run(test, "claude-code", "2.1.197", Some("openai"));
    leashed_run(test, "codex", "0.171.0", Some("anthropic"));
}

/// An agent the table does not know (`[agent] name = "command"`): a
/// Python program that tries what a hostile agent would, from inside the
/// agent's own sandbox. Only the bridge is reachable; the runner's secrets,
/// the workspace and anything it leaves running are not.
#[test]
fn an_agent_reaches_nothing_but_the_bridge_and_leaves_nothing_behind() {
    let test = "an_agent_reaches_nothing_but_the_bridge_and_leaves_nothing_behind";
    let sb = Sandbox::new();
    if require_layer(test, root()).is_none() {
        return;
    }
    if require_tool(
        test,
        which("python3").ok_or("python3 is not on PATH".to_string()),
    )
    .is_none()
    {
        return;
    }
    // A service of the host's loopback the agent must not reach.
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let data = sb.data();
    let workspace = data.join("work/off_by_one+command/1");
    let agent = sb.path().join("hostile_agent.py");
    std::fs::write(
        &agent,
        format!(
            r#"import os, socket, json, urllib.request, time
out = {{}}
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    out["other_port"] = "connected"
except OSError as e:
    out["other_port"] = "refused: %s" % e
try:
    urllib.request.urlopen(os.environ["AGENT_RUNTIME_BASE_URL"] + "/", timeout=5).read()
    out["bridge"] = "ok"
except Exception as e:
    out["bridge"] = "failed: %s" % e
out["secret"] = any("sk-ant-test-secret" in v for v in os.environ.values())
try:
    open("{ws}/src/lib.rs").read()
    out["read"] = "read"
except OSError as e:
    out["read"] = "refused: %s" % e
try:
    open("{ws}/src/lib.rs", "a").write("// tampered\n")
    out["write"] = "written"
except OSError as e:
    out["write"] = "refused: %s" % e
if os.fork() == 0:
    os.setsid()
    time.sleep(300)
    os._exit(0)
print("RESULT " + json.dumps(out), flush=True)
"#,
            ws = workspace.display()
        ),
    )
    .unwrap();
    let job = job_with_script(&sb, &[r#"{"kind":"verify"}"#], None);
    let manifest = std::fs::read_to_string(&job).unwrap().replace(
        "[sandbox]",
        &format!(
            "[agent]\nname = \"command\"\ncommand = [\"python3\", \"{}\"]\n\n[sandbox]",
            agent.display()
        ),
    );
    std::fs::write(&job, manifest).unwrap();
    let out = sb
        .command(&["batch", data.to_str().unwrap(), job.to_str().unwrap()])
        .env("ANTHROPIC_API_KEY", "sk-ant-test-secret")
        .output()
        .unwrap();
    let log = std::fs::read_to_string(data.join("runs/off_by_one/1/agent.log"))
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let result: serde_json::Value = log
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|l| serde_json::from_str(l).unwrap())
        .unwrap_or_else(|| panic!("no result in:\n{log}"));
    assert_eq!(result["bridge"], "ok", "{result}");
    assert!(
        result["other_port"]
            .as_str()
            .unwrap()
            .starts_with("refused"),
        "{result}"
    );
    assert_eq!(result["secret"], false, "{result}");
    assert!(
        result["read"].as_str().unwrap().starts_with("refused"),
        "{result}"
    );
    assert!(
        result["write"].as_str().unwrap().starts_with("refused"),
        "{result}"
    );
    // It exited without finish; nothing of it is left, and the workspace
    // holds the source as it was.
    assert_eq!(crate::harness::job_state(&sb, "off_by_one"), "failed");
    let failures: Vec<String> = log_lines(&sb)
        .iter()
        .filter(|r| r["type"] == "agent_finished")
        .map(|r| r["failure_kind"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(failures[0], "no_finish", "{failures:?}");
    assert!(
        crate::harness::alive_with("hostile_agent.py").is_empty(),
        "the agent's daemon outlived its attempt"
    );
    let source = std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap_or_default();
    assert!(!source.contains("tampered"), "{source}");
    // The secret is in no file of the agent's either.
    let agent_dir = data.join("work/off_by_one/1-agent");
    for entry in walk(&agent_dir) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains("sk-ant-test-secret"),
            "{}",
            entry.display()
        );
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|path| path.is_file())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A budget that runs out mid-run: the bridge answers the agent an error,
/// the runtime ends it, and the attempt is `step_limit`.
#[test]
fn an_agent_out_of_steps_is_ended_at_the_limit() {
    let test = "an_agent_out_of_steps_is_ended_at_the_limit";
    let Some(sb) = ready(test, "claude-code") else {
        return;
    };
    let job = job_with_script(&sb, LEASHED_SCRIPT, None);
    let manifest = std::fs::read_to_string(&job)
        .unwrap()
        .replace("max_steps = 16", "max_steps = 3")
        .replace("attempts = 2", "attempts = 1");
    std::fs::write(&job, manifest).unwrap();
    // The agent named by a provider file's `[agent]`, not `--agent`.
    let script = sb.path().join("script.jsonl");
    let provider = sb.path().join("scripted.toml");
    std::fs::write(
        &provider,
        format!(
            "[provider]\nkind = \"script\"\nscript = \"{}\"\n\n[agent]\nname = \"claude-code\"\n",
            script.display()
        ),
    )
    .unwrap();
    let data = sb.data();
    sb.run(&[
        "batch",
        data.to_str().unwrap(),
        job.to_str().unwrap(),
        "--provider",
        provider.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read_to_string(data.join("runs/off_by_one@scripted/1/agent.log"))
            .is_ok_and(|log| log.contains("claude_code_version")),
        "Claude Code did not run"
    );
    let finished: Vec<(String, u64)> = log_lines(&sb)
        .iter()
        .filter(|r| r["type"] == "agent_finished")
        .map(|r| {
            (
                r["failure_kind"].as_str().unwrap_or_default().to_string(),
                r["steps"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(finished, [("step_limit".to_string(), 3)]);
    assert!(
        crate::harness::alive_with(&data.display().to_string()).is_empty(),
        "something of the agent outlived its attempt"
    );
}

/// With the leash's switch of its own tools removed (a test hook), a
/// leashed agent's built-in shell runs, but in the agent's own sandbox:
/// a scripted call of it that reads the workspace by its absolute path and
/// writes into it reads nothing and writes nothing; the gateway's
/// `read_file` then shows the file as it was.
fn builtin_shell_cannot_touch_the_workspace(test: &str, agent: &str, shell: &str, input: &str) {
    let sb = Sandbox::new();
    if !crate::layer_hooks::hooks_built(test) {
        return;
    }
    if require_layer(test, root()).is_none() {
        return;
    }
    if require_tool(test, with_agent(&sb, agent)).is_none() {
        return;
    }
    let data = sb.data();
    let id = format!("off_by_one+{agent}");
    let lib = data.join(format!("work/{id}/1/src/lib.rs"));
    let command = format!(
        "cat {lib}; echo tampered >> {lib}; echo exit=$?",
        lib = lib.display()
    );
    let call = serde_json::json!({
        "kind": "agent_tool",
        "name": shell,
        "input": serde_json::from_str::<serde_json::Value>(&input.replace("COMMAND", &serde_json::Value::from(command).to_string())).unwrap(),
    })
    .to_string();
    let read = r#"{"kind":"read_file","path":"src/lib.rs"}"#;
    let job = job_with_script(&sb, &[&call, read, r#""Nothing more to do.""#], None);
    let manifest = std::fs::read_to_string(&job)
        .unwrap()
        .replace("trace = \"metadata\"", "trace = \"full\"")
        .replace("attempts = 2", "attempts = 1");
    std::fs::write(&job, manifest).unwrap();
    let out = sb
        .command(&[
            "batch",
            data.to_str().unwrap(),
            job.to_str().unwrap(),
            "--agent",
            agent,
        ])
        .env(agent_runtime::sandbox::TEST_HOOKS_ENV, "agent_builtins")
        .output()
        .unwrap();
    let records =
        std::fs::read_to_string(data.join(format!("runs/{id}/1/bridge.jsonl"))).unwrap_or_default();
    let agent_log =
        std::fs::read_to_string(data.join(format!("runs/{id}/1/agent.log"))).unwrap_or_default();
    let context = format!(
        "{}\n{records}\n{agent_log}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The shell ran (its exit line came back to the model), in a sandbox
    // where the workspace does not exist: nothing of the file came back.
    let shell_result = tool_results(&records)
        .into_iter()
        .find(|text| text.contains("exit="))
        .unwrap_or_else(|| panic!("the shell did not run:\n{context}"));
    assert!(
        shell_result.contains("No such file or directory"),
        "{shell_result}\n{context}"
    );
    assert!(!shell_result.contains("sum_up_to"), "{shell_result}");
    let source = std::fs::read_to_string(&lib).unwrap_or_default();
    assert!(source.contains("for i in 1..n"), "{source}");
    assert!(!source.contains("tampered"), "{source}");
    // The workspace changed by nothing: no edit, no patch.
    assert!(
        !log_lines(&sb).iter().any(|r| r["type"] == "edit"),
        "{context}"
    );
    let finished = log_lines(&sb)
        .into_iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap();
    assert_eq!(finished["failure_kind"], "no_finish", "{context}");
}

#[test]
fn codex_s_own_shell_cannot_touch_the_workspace() {
    builtin_shell_cannot_touch_the_workspace(
        "codex_s_own_shell_cannot_touch_the_workspace",
        "codex",
        "exec_command",
        r#"{"cmd": COMMAND}"#,
    );
}

#[test]
fn claude_code_s_own_bash_cannot_touch_the_workspace() {
    builtin_shell_cannot_touch_the_workspace(
        "claude_code_s_own_bash_cannot_touch_the_workspace",
        "claude-code",
        "Bash",
        r#"{"command": COMMAND, "description": "look"}"#,
    );
}

/// The text of every tool result the agent sent its model, from the
/// bridge's records (Anthropic `tool_result` blocks, Responses
/// `function_call_output` items).
fn tool_results(records: &str) -> Vec<String> {
    let text_of = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let mut out = Vec::new();
    for line in records.lines() {
        let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let request = &record["request"];
        for message in request["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    out.push(text_of(&block["content"]));
                }
            }
        }
        for item in request["input"].as_array().into_iter().flatten() {
            if item["type"] == "function_call_output" {
                out.push(text_of(&item["output"]));
            }
        }
    }
    out
}

/// `job_with_script`'s job driven by a `command` agent running `argv`.
fn job_with_command(sb: &Sandbox, argv: &[&str], limits: &str) -> PathBuf {
    let job = job_with_script(sb, &[r#"{"kind":"verify"}"#], None);
    let command: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    let manifest = std::fs::read_to_string(&job)
        .unwrap()
        .replace("attempts = 2", limits)
        .replace(
            "[sandbox]",
            &format!(
                "[agent]\nname = \"command\"\ncommand = [{}]\n\n[sandbox]",
                command.join(", ")
            ),
        );
    std::fs::write(&job, manifest).unwrap();
    job
}

#[test]
fn an_agent_that_crashes_is_the_agent_s_error_with_its_last_words() {
    let test = "an_agent_that_crashes_is_the_agent_s_error_with_its_last_words";
    let sb = Sandbox::new();
    if require_layer(test, root()).is_none() {
        return;
    }
    let job = job_with_command(
        &sb,
        &["sh", "-c", "echo the agent fell over >&2; exit 3"],
        "attempts = 1",
    );
    let data = sb.data();
    sb.run(&["batch", data.to_str().unwrap(), job.to_str().unwrap()]);
    let finished = log_lines(&sb)
        .into_iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap();
    assert_eq!(finished["failure_kind"], "agent_error", "{finished}");
    let cause = finished["cause"].as_str().unwrap_or_default();
    assert!(
        cause.contains("exit status 3") && cause.contains("the agent fell over"),
        "{cause}"
    );
    // The report says why.
    let status = sb.run(&["status", data.to_str().unwrap()]).stdout;
    assert!(status.contains("agent_error"), "{status}");
}

#[test]
fn an_agent_that_cannot_start_is_the_infrastructure_s_fault() {
    let test = "an_agent_that_cannot_start_is_the_infrastructure_s_fault";
    let sb = Sandbox::new();
    if require_layer(test, root()).is_none() {
        return;
    }
    let job = job_with_command(
        &sb,
        &["no-such-agent-program"],
        "attempts = 1\nmax_restarts = 1",
    );
    let data = sb.data();
    sb.run(&["batch", data.to_str().unwrap(), job.to_str().unwrap()]);
    let lines = log_lines(&sb);
    // No attempt was spent on it: interrupted and restarted, then the
    // infrastructure's.
    assert!(
        !lines.iter().any(|r| r["type"] == "agent_finished"),
        "{lines:#?}"
    );
    let interrupted: Vec<&str> = lines
        .iter()
        .filter(|r| r["type"] == "attempt_interrupted")
        .map(|r| r["cause"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(interrupted.len(), 2, "{lines:#?}");
    assert!(
        interrupted
            .iter()
            .all(|c| c.contains("the agent could not be started")),
        "{interrupted:?}"
    );
    assert_eq!(crate::harness::job_state(&sb, "off_by_one"), "failed");
    let status = sb.run(&["status", data.to_str().unwrap()]).stdout;
    assert!(status.contains("infra_error"), "{status}");
}

/// Contained: `agent` with its own tools in the workspace (inside its
/// sandbox), the script's decision lines made calls of its own tools
/// (Claude Code's `Read` and `Edit`, Codex's `exec_command`,
/// mini-swe-agent's `bash`). It stops after a wrong fix; the runtime's
/// forced verify fails and its output goes back to it in the same session
/// (`--resume`, `exec resume`, or mini-swe-agent's driver in the same
/// process); it fixes it, stops, and the verify passes.
fn contained_run(test: &str, agent: &str) {
    let Some(sb) = ready(test, agent) else {
        return;
    };
    let job = job_with_script(
        &sb,
        &[
            r#"{"kind":"read_file","path":"src/lib.rs"}"#,
            r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1..n","replacement":"2..n"}"#,
            r#"{"kind":"finish","summary":"Done, I think."}"#,
            r#"{"kind":"replace_text","path":"src/lib.rs","expected":"2..n","replacement":"1..=n"}"#,
            r#"{"kind":"finish","summary":"Fixed the range."}"#,
        ],
        None,
    );
    let manifest = std::fs::read_to_string(&job)
        .unwrap()
        .replace("trace = \"metadata\"", "trace = \"full\"");
    std::fs::write(&job, manifest).unwrap();
    let data = sb.data();
    let run = batch_with(&sb, &job, &format!("{agent}:contained"));
    let id = &format!("off_by_one+{agent}-contained");
    let logs: String = ["agent.log", "agent-2.log"]
        .iter()
        .map(|f| std::fs::read_to_string(data.join(format!("runs/{id}/1/{f}"))).unwrap_or_default())
        .collect();
    assert_eq!(
        crate::harness::job_state(&sb, id),
        "succeeded",
        "{}\n{}\n{logs}",
        run.stdout,
        run.stderr
    );
    let lines = log_lines(&sb);
    // The runtime verified twice: after each time the agent stopped.
    let verifies: Vec<(bool, String)> = lines
        .iter()
        .filter(|r| r["type"] == "verify")
        .map(|r| {
            (
                r["passed"].as_bool().unwrap_or(false),
                r["trigger"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        verifies,
        [(false, "finish".to_string()), (true, "finish".to_string())]
    );
    // The second round was the same session, told the verify's output:
    // relaunched to resume it, or (mini-swe-agent) the same process, its
    // trajectory one conversation holding both stops.
    let second = data.join(format!("runs/{id}/1/agent-2.log"));
    if agent == "mini-swe-agent" {
        assert!(!second.exists());
        let trajectory: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(data.join(format!("runs/{id}/1/agent-trajectory.json")))
                .unwrap(),
        )
        .unwrap();
        let told = trajectory["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| {
                m["role"] == "user"
                    && m["content"]
                        .as_str()
                        .is_some_and(|c| c.contains("verify command and it failed"))
            })
            .count();
        assert_eq!(told, 1, "{trajectory}");
        assert_eq!(trajectory["info"]["exit_status"], "Submitted");
        // Kept, and linked from the report.
        let html = std::fs::read_to_string(data.join("report/report.html")).unwrap();
        assert!(
            html.contains(&format!("runs/{id}/1/agent-trajectory.json")),
            "no link to the trajectory"
        );
    } else {
        let second = std::fs::read_to_string(second).unwrap();
        assert!(second.contains("== exit Some(0)"), "{second}");
    }
    let records = std::fs::read_to_string(data.join(format!("runs/{id}/1/bridge.jsonl"))).unwrap();
    assert!(
        records.contains("The runtime ran the verify command and it failed"),
        "{records}"
    );
    // How long the agent's process ran, both rounds.
    let finished = lines
        .iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap();
    assert!(
        finished["agent_ms"].as_u64().is_some_and(|ms| ms > 0),
        "{finished}"
    );
    // The edits were the agent's own tool's: no `edit` event, a patch.
    assert!(!lines.iter().any(|r| r["type"] == "edit"));
    let patch =
        std::fs::read_to_string(data.join(format!("runs/{id}/1/patch.diff"))).unwrap_or_default();
    assert!(patch.contains("1..=n"), "{patch}");
    let enqueued = lines.iter().find(|r| r["type"] == "enqueued").unwrap();
    assert_eq!(
        enqueued["manifest"]["manifest"]["agent"]["mode"],
        "contained"
    );
}

#[test]
fn claude_code_contained_is_verified_when_it_stops_and_told_when_it_fails() {
    contained_run(
        "claude_code_contained_is_verified_when_it_stops_and_told_when_it_fails",
        "claude-code",
    );
}

#[test]
fn codex_contained_is_verified_when_it_stops_and_told_when_it_fails() {
    contained_run(
        "codex_contained_is_verified_when_it_stops_and_told_when_it_fails",
        "codex",
    );
}

#[test]
fn mini_swe_agent_contained_is_verified_when_it_stops_and_told_when_it_fails() {
    contained_run(
        "mini_swe_agent_contained_is_verified_when_it_stops_and_told_when_it_fails",
        "mini-swe-agent",
    );
}

/// An agents sweep (`--agent runtime --agent claude-code`): each agent is
/// an arm, tabled and compared like a provider, and an agent's own log is
/// linked from its job.
#[test]
fn an_agents_sweep_tables_and_compares_agents_like_providers() {
    let test = "an_agents_sweep_tables_and_compares_agents_like_providers";
    let Some(sb) = ready(test, "claude-code") else {
        return;
    };
    let job = job_with_script(&sb, LEASHED_SCRIPT, None);
    let data = sb.data();
    sb.run(&[
        "batch",
        data.to_str().unwrap(),
        job.to_str().unwrap(),
        "--agent",
        "runtime",
        "--agent",
        "claude-code",
    ]);
    assert_eq!(
        crate::harness::job_state(&sb, "off_by_one+claude-code"),
        "succeeded"
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("report/results.json")).unwrap())
            .unwrap();
    let arms: Vec<&str> = results["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["provider"].as_str().unwrap())
        .collect();
    assert_eq!(arms, ["claude-code", "runtime"], "{}", results["providers"]);
    let comparison = &results["comparisons"][0];
    assert_eq!(
        (comparison["a"].as_str(), comparison["b"].as_str()),
        (Some("claude-code"), Some("runtime")),
        "{comparison}"
    );
    let md = std::fs::read_to_string(data.join("report/report.md")).unwrap();
    assert!(md.contains("claude-code"), "{md}");
    let html = std::fs::read_to_string(data.join("report/report.html")).unwrap();
    assert!(
        html.contains("runs/off_by_one+claude-code/1/agent.log"),
        "no link to the agent's log"
    );
}

/// Contained, an agent whose every stop fails the forced verify is told
/// `verify_rounds` times, then the attempt is `verify_failed`.
fn never_passes(test: &str, agent: &str) {
    let Some(sb) = ready(test, agent) else {
        return;
    };
    let job = job_with_script(
        &sb,
        &[
            r#"{"kind":"read_file","path":"src/lib.rs"}"#,
            r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1..n","replacement":"2..n"}"#,
            r#"{"kind":"finish","summary":"Done."}"#,
            r#"{"kind":"finish","summary":"Still done."}"#,
            r#"{"kind":"finish","summary":"Really done."}"#,
        ],
        None,
    );
    let manifest = std::fs::read_to_string(&job)
        .unwrap()
        .replace("attempts = 2", "attempts = 1");
    std::fs::write(&job, manifest).unwrap();
    let data = sb.data();
    let run = batch_with(&sb, &job, &format!("{agent}:contained"));
    let lines = log_lines(&sb);
    let verifies = lines
        .iter()
        .filter(|r| r["type"] == "verify" && r["passed"] == false)
        .count();
    // The first stop and the 2 default rounds after it.
    assert_eq!(verifies, 3, "{}\n{lines:#?}", run.stderr);
    let finished = lines
        .iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap();
    assert_eq!(finished["failure_kind"], "verify_failed", "{finished}");
    let runs = data.join(format!("runs/off_by_one+{agent}-contained/1"));
    if agent == "mini-swe-agent" {
        // One process told twice, then ended on its third stop.
        assert!(!runs.join("agent-2.log").exists());
        let trajectory = std::fs::read_to_string(runs.join("agent-trajectory.json")).unwrap();
        assert_eq!(
            trajectory.matches("verify command and it failed").count(),
            2,
            "{trajectory}"
        );
    } else {
        for round in ["agent.log", "agent-2.log", "agent-3.log"] {
            assert!(runs.join(round).exists(), "{round}");
        }
    }
}

#[test]
fn claude_code_contained_that_never_passes_is_verify_failed_after_its_rounds() {
    never_passes(
        "claude_code_contained_that_never_passes_is_verify_failed_after_its_rounds",
        "claude-code",
    );
}

#[test]
fn codex_contained_that_never_passes_is_verify_failed_after_its_rounds() {
    never_passes(
        "codex_contained_that_never_passes_is_verify_failed_after_its_rounds",
        "codex",
    );
}

#[test]
fn mini_swe_agent_contained_that_never_passes_is_verify_failed_after_its_rounds() {
    never_passes(
        "mini_swe_agent_contained_that_never_passes_is_verify_failed_after_its_rounds",
        "mini-swe-agent",
    );
}

/// The bundled job driven by Claude Code contained (its own shell), with
/// no forced-verify round, answered by `lines`, with the full trace.
fn contained_job(sb: &Sandbox, lines: &[&str]) -> PathBuf {
    let job = job_with_script(sb, lines, None);
    let manifest = std::fs::read_to_string(&job)
        .unwrap()
        .replace("trace = \"metadata\"", "trace = \"full\"")
        .replace("attempts = 2", "attempts = 1")
        .replace(
            "[sandbox]",
            "[agent]\nname = \"claude-code\"\nmode = \"contained\"\nverify_rounds = 0\n\n[sandbox]",
        );
    std::fs::write(&job, manifest).unwrap();
    job
}

/// A contained agent's own shell, as an attacker would use it: a connect
/// to another local port, the host's secrets, a write outside the
/// workspace and a daemon left behind all fail.
#[test]
fn a_contained_agent_s_shell_reaches_nothing_outside_and_leaves_nothing() {
    let test = "a_contained_agent_s_shell_reaches_nothing_outside_and_leaves_nothing";
    let Some(sb) = ready(test, "claude-code") else {
        return;
    };
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let outside = sb.path().join("outside.txt");
    let command = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\" \
         && echo CONNECTED || echo NO_CONNECT; \
         cat /etc/shadow && echo SHADOW_READ || echo NO_SHADOW; \
         echo x > {outside} && echo WROTE_OUTSIDE || echo NO_WRITE; \
         (setsid sleep 3917 < /dev/null > /dev/null 2>&1 &); echo STARTED",
        outside = outside.display()
    );
    let call = serde_json::json!({
        "kind": "agent_tool",
        "name": "Bash",
        "input": {"command": command, "description": "try"},
    })
    .to_string();
    let job = contained_job(&sb, &[&call, r#""Done.""#]);
    let data = sb.data();
    sb.run(&["batch", data.to_str().unwrap(), job.to_str().unwrap()]);
    let records =
        std::fs::read_to_string(data.join("runs/off_by_one/1/bridge.jsonl")).unwrap_or_default();
    let result = tool_results(&records)
        .into_iter()
        .find(|text| text.contains("STARTED"))
        .unwrap_or_else(|| panic!("the shell did not run:\n{records}"));
    for refused in ["NO_CONNECT", "NO_SHADOW", "NO_WRITE"] {
        assert!(result.contains(refused), "{refused}: {result}");
    }
    assert!(!outside.exists());
    assert!(
        crate::harness::alive_with("sleep 3917").is_empty(),
        "the agent's daemon outlived its attempt"
    );
    // It stopped with the tests failing and no round left.
    let finished = log_lines(&sb)
        .into_iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap();
    assert_eq!(finished["failure_kind"], "verify_failed", "{finished}");
}

/// Contained, the agent's own tools may leave scratch files: a new file
/// outside `editable` is a stray file (a note, not a signal), a new
/// harness file stays a tamper signal, and every report says the job ran
/// `mode: contained`.
#[test]
fn a_contained_agent_s_scratch_files_are_strays_and_its_harness_files_signals() {
    let test = "a_contained_agent_s_scratch_files_are_strays_and_its_harness_files_signals";
    let Some(sb) = ready(test, "claude-code") else {
        return;
    };
    let call = serde_json::json!({
        "kind": "agent_tool",
        "name": "Bash",
        "input": {
            "command": "echo 'print(1)' > reproduce.py && echo '# x' > conftest.py && echo WROTE",
            "description": "scratch",
        },
    })
    .to_string();
    let job = contained_job(
        &sb,
        &[
            &call,
            r#"{"kind":"read_file","path":"src/lib.rs"}"#,
            r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1..n","replacement":"1..=n"}"#,
            r#""Fixed.""#,
        ],
    );
    let data = sb.data();
    let run = sb.run(&["batch", data.to_str().unwrap(), job.to_str().unwrap()]);
    assert_eq!(
        crate::harness::job_state(&sb, "off_by_one"),
        "succeeded",
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let finished = log_lines(&sb)
        .into_iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap();
    assert_eq!(
        finished["stray_files"],
        serde_json::json!(["reproduce.py"]),
        "{finished}"
    );
    let signals: Vec<String> = finished["integrity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["subject"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(signals, ["conftest.py"], "{finished}");
    let md = std::fs::read_to_string(data.join("report/report.md")).unwrap();
    assert!(md.contains("mode: contained: 1 job"), "{md}");
    assert!(md.contains("`reproduce.py`"), "{md}");
    let tsv = std::fs::read_to_string(data.join("report/results.tsv")).unwrap();
    assert!(tsv.contains("\tcontained\treproduce.py\n"), "{tsv}");
    let junit = std::fs::read_to_string(data.join("report/junit.xml")).unwrap();
    assert!(
        junit.contains(r#"name="agent_mode" value="contained""#),
        "{junit}"
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("report/results.json")).unwrap())
            .unwrap();
    assert_eq!(results["jobs"][0]["agent"]["mode"], "contained");
    assert_eq!(
        results["jobs"][0]["integrity"]["stray_files"],
        serde_json::json!(["reproduce.py"])
    );
}

/// `[agent] memory` bounds the agent's whole tree for real: a contained
/// Claude Code given 32 MiB cannot start its runtime, and the attempt is
/// the agent's error, its end said.
#[test]
fn a_contained_agent_past_its_memory_is_killed_and_its_error() {
    let test = "a_contained_agent_past_its_memory_is_killed_and_its_error";
    let Some(sb) = ready(test, "claude-code") else {
        return;
    };
    let job = contained_job(&sb, &[r#""Done.""#]);
    let manifest = std::fs::read_to_string(&job)
        .unwrap()
        .replace("verify_rounds = 0", "verify_rounds = 0\nmemory = \"32MiB\"");
    std::fs::write(&job, manifest).unwrap();
    let data = sb.data();
    let run = sb.run(&["batch", data.to_str().unwrap(), job.to_str().unwrap()]);
    let finished = log_lines(&sb)
        .into_iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap_or_else(|| panic!("{}\n{}", run.stdout, run.stderr));
    assert_eq!(finished["failure_kind"], "agent_error", "{finished}");
    // Killed by the kernel (SIGKILL), not refused by anything else.
    assert!(
        finished["cause"]
            .as_str()
            .is_some_and(|c| c.contains("signal 9")),
        "{finished}"
    );
    assert!(
        !data.join("runs/off_by_one/1/bridge.jsonl").exists()
            || !std::fs::read_to_string(data.join("runs/off_by_one/1/bridge.jsonl"))
                .unwrap_or_default()
                .contains("/v1/messages"),
        "the agent reached its model"
    );
}

/// Contained on a host made to lack Landlock (the test hook): the agent
/// does not run in a weaker sandbox; the attempt is `sandbox_unavailable`.
#[test]
fn a_contained_agent_without_landlock_is_sandbox_unavailable() {
    let test = "a_contained_agent_without_landlock_is_sandbox_unavailable";
    if !crate::layer_hooks::hooks_built(test) {
        return;
    }
    let Some(sb) = ready(test, "claude-code") else {
        return;
    };
    let job = contained_job(&sb, &[r#""Done.""#]);
    let data = sb.data();
    sb.command(&["batch", data.to_str().unwrap(), job.to_str().unwrap()])
        .env(agent_runtime::sandbox::TEST_HOOKS_ENV, "landlock")
        .output()
        .unwrap();
    let finished = log_lines(&sb)
        .into_iter()
        .find(|r| r["type"] == "agent_finished")
        .unwrap();
    assert_eq!(
        finished["failure_kind"], "sandbox_unavailable",
        "{finished}"
    );
    assert!(
        !data.join("runs/off_by_one/1/bridge.jsonl").exists()
            || std::fs::read_to_string(data.join("runs/off_by_one/1/bridge.jsonl"))
                .unwrap_or_default()
                .is_empty(),
        "the agent ran"
    );
}

/// Every bundled job's `[oracle]` drives every agent in every mode it
/// runs: the 9 bundled jobs × {claude-code, codex} × {leashed,
/// contained} and × mini-swe-agent (contained) under the `oracle`
/// provider all succeed, and the report tables and compares the five arms.
#[test]
fn every_bundled_oracle_drives_every_agent_in_every_mode() {
    let test = "every_bundled_oracle_drives_both_agents_in_both_modes";
    let Some(sb) = ready(test, "claude-code") else {
        return;
    };
    for agent in ["codex", "mini-swe-agent"] {
        if require_tool(test, with_agent(&sb, agent)).is_none() {
            return;
        }
    }
    let jobs = Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs");
    let oracle = sb.path().join("oracle.toml");
    std::fs::write(
        &oracle,
        "name = \"oracle\"\n\n[provider]\nkind = \"oracle\"\n",
    )
    .unwrap();
    let data = sb.data();
    let run = sb.run(&[
        "batch",
        data.to_str().unwrap(),
        jobs.to_str().unwrap(),
        "--provider",
        oracle.to_str().unwrap(),
        "--agent",
        "claude-code",
        "--agent",
        "codex",
        "--agent",
        "claude-code:contained",
        "--agent",
        "codex:contained",
        "--agent",
        "mini-swe-agent",
        "-j",
        "2",
    ]);
    assert!(
        run.stdout.contains("45 jobs: 45 succeeded"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("report/results.json")).unwrap())
            .unwrap();
    let arms: Vec<&str> = results["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["provider"].as_str().unwrap())
        .collect();
    assert_eq!(
        arms,
        [
            "oracle+claude-code",
            "oracle+claude-code-contained",
            "oracle+codex",
            "oracle+codex-contained",
            "oracle+mini-swe-agent-contained"
        ]
    );
    assert_eq!(results["comparisons"].as_array().unwrap().len(), 10);
}

/// mini-swe-agent (PyPI), contained: the job's decision script drives its
/// one `bash` tool (a decision as a shell command, `finish` its submit
/// command), and the runtime's verify passes once it stops.
#[test]
fn mini_swe_agent_contained_fixes_the_bundled_job() {
    let test = "mini_swe_agent_contained_fixes_the_bundled_job";
    let Some(sb) = ready(test, "mini-swe-agent") else {
        return;
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let oracle = std::fs::read_to_string(repo.join("evaluation/scripts/off_by_one.jsonl")).unwrap();
    let lines: Vec<&str> = oracle
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    let job = job_with_script(&sb, &lines, None);
    let data = sb.data();
    let run = batch_with(&sb, &job, "mini-swe-agent");
    let id = "off_by_one+mini-swe-agent-contained";
    let log =
        std::fs::read_to_string(data.join(format!("runs/{id}/1/agent.log"))).unwrap_or_default();
    assert_eq!(
        crate::harness::job_state(&sb, id),
        "succeeded",
        "{}\n{}\n{log}",
        run.stdout,
        run.stderr
    );
    assert!(
        log.contains("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
        "{log}"
    );
    let verifies: Vec<bool> = log_lines(&sb)
        .iter()
        .filter(|r| r["type"] == "verify")
        .map(|r| r["passed"].as_bool().unwrap_or(false))
        .collect();
    assert_eq!(verifies, [true]);
}
