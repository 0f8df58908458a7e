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
    let sb = Sandbox::new();
    if require_layer(test, root()).is_none() {
        return;
    }
    if require_tool(test, with_agent(&sb, agent)).is_none() {
        return;
    }
    let job = job_with_script(&sb, LEASHED_SCRIPT, dialect);
    let data = sb.data();
    let run = sb.run(&[
        "batch",
        data.to_str().unwrap(),
        job.to_str().unwrap(),
        "--agent",
        agent,
    ]);
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
    // The job names its agent and the version it ran.
    let enqueued = lines.iter().find(|r| r["type"] == "enqueued").unwrap();
    let named = &enqueued["manifest"]["manifest"]["agent"];
    assert_eq!(named["name"], agent, "{enqueued}");
    assert_eq!(named["version"], version);
    assert_eq!(named["mode"], "leashed");
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
