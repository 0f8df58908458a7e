//! A provider that cannot work is a usage error before anything runs: its
//! key variable unset, its server absent. Nothing is enqueued, no baseline
//! runs, no attempt is spent.

use crate::harness::Sandbox;

fn job(sb: &Sandbox) -> std::path::PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = sb.path().join("job.toml");
    std::fs::write(
        &file,
        format!(
            "id = \"pre\"\nprompt = \"p\"\nsource = \"{root}/evaluation/fixtures/off_by_one\"\n\
             editable = [\"src/**/*.rs\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n\
             [provider]\nkind = \"script\"\nscript = \"{root}/evaluation/scripts/off_by_one.jsonl\"\n"
        ),
    )
    .unwrap();
    file
}

fn provider(sb: &Sandbox, name: &str, body: &str) -> std::path::PathBuf {
    let file = sb.path().join(format!("{name}.toml"));
    std::fs::write(&file, format!("name = \"{name}\"\n\n[provider]\n{body}")).unwrap();
    file
}

fn nothing_ran(sb: &Sandbox) {
    let log = String::from_utf8(sb.log_bytes()).unwrap();
    assert!(!log.contains("attempt_started"), "{log}");
    assert!(!log.contains("\"baseline\""), "{log}");
}

#[test]
fn an_unset_key_variable_stops_the_batch_before_anything_runs() {
    let sb = Sandbox::new();
    let job = job(&sb);
    let claude = provider(
        &sb,
        "claude",
        "kind = \"anthropic\"\nmodel = \"m\"\napi_key_env = \"AGENT_RUNTIME_TEST_NEVER_SET_KEY\"\n",
    );
    sb.run(&[
        "batch",
        "DATA",
        job.to_str().unwrap(),
        "--provider",
        claude.to_str().unwrap(),
    ])
    .code(2)
    .one_line_error()
    .stderr_has("claude")
    .stderr_has("AGENT_RUNTIME_TEST_NEVER_SET_KEY")
    .stderr_has("not set");
    nothing_ran(&sb);
}

#[test]
fn a_server_that_is_not_there_stops_the_batch_before_anything_runs() {
    let sb = Sandbox::new();
    let job = job(&sb);
    // A port that was free a moment ago: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let local = provider(
        &sb,
        "local",
        &format!("kind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n"),
    );
    sb.run(&[
        "batch",
        "DATA",
        job.to_str().unwrap(),
        "--provider",
        local.to_str().unwrap(),
    ])
    .code(2)
    .one_line_error()
    .stderr_has("local")
    .stderr_has("does not answer");
    nothing_ran(&sb);
}
