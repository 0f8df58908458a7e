//! Errors that say the fix, through the real binary: the key a typo was
//! meant to be, the right shape of a value, every error of a file, a file
//! that is no manifest, the families there are, the command that starts a
//! job over, and a watch that says nothing is running.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::harness::Sandbox;

/// A valid manifest `job.toml` (a source dir, a scripted provider) with
/// `extra` appended; `replace` edits its lines first.
fn job(sb: &Sandbox, replace: &[(&str, &str)], extra: &str) {
    std::fs::create_dir_all(sb.path().join("src")).unwrap();
    std::fs::write(sb.path().join("src/a.txt"), "old\n").unwrap();
    std::fs::write(
        sb.path().join("s.jsonl"),
        "{\"kind\":\"finish\",\"summary\":\"nothing to do\"}\n",
    )
    .unwrap();
    let mut text = "prompt = \"Fix a.txt.\"\nsource = \"src\"\neditable = [\"*.txt\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n[limits]\nattempts = 1\n\n[provider]\nkind = \"script\"\nscript = \"s.jsonl\"\n".to_string();
    for (from, to) in replace {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    text.push_str(extra);
    std::fs::write(sb.path().join("job.toml"), text).unwrap();
}

#[test]
fn a_misspelt_key_gets_a_did_you_mean() {
    let sb = Sandbox::new();
    job(&sb, &[("attempts = 1", "attempts = 1\nmax_step = 3")], "");
    let run = sb.run(&["validate", "job.toml"]).code(2);
    assert!(
        run.stderr
            .contains("job.toml:9:1: limits.max_step: unknown key, did you mean max_steps?"),
        "{}",
        run.stderr
    );
    // The same in a batch, where nothing is written.
    sb.run(&["batch", "DATA", "job.toml"])
        .code(2)
        .one_line_error()
        .stderr_has("did you mean max_steps?");
    assert!(!sb.log().exists());
}

#[test]
fn a_string_where_a_list_belongs_is_shown_as_a_list() {
    let sb = Sandbox::new();
    job(
        &sb,
        &[("editable = [\"*.txt\"]", "editable = \"src/**/*.rs\"")],
        "",
    );
    let run = sb.run(&["validate", "job.toml"]).code(2);
    assert!(
        run.stderr.contains(
            "job.toml:3:12: editable: must be a list of globs, e.g. [\"src/**/*.rs\"] (found the string \"src/**/*.rs\")"
        ),
        "{}",
        run.stderr
    );
    for word in ["sequence", "invalid type", "u32"] {
        assert!(!run.stderr.contains(word), "{}", run.stderr);
    }
}

#[test]
fn every_error_of_a_file_is_a_line_of_its_own_in_file_order() {
    let sb = Sandbox::new();
    job(
        &sb,
        &[
            ("source = \"src\"", "source = \"nowhere\""),
            ("attempts = 1", "attempts = \"one\"\nwall_time = 90"),
        ],
        "",
    );
    let run = sb.run(&["batch", "DATA", "job.toml"]).code(2);
    let errors: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(errors.len(), 4, "{}", run.stderr);
    assert!(
        errors[0].starts_with("error: ") && errors[0].contains("job.toml:2:10: source: "),
        "{}",
        run.stderr
    );
    assert!(
        errors[1].contains(
            "job.toml:8:12: limits.attempts: must be a whole number (found the string \"one\")"
        ),
        "{}",
        run.stderr
    );
    assert!(
        errors[2].contains(
            "job.toml:9:13: limits.wall_time: must be a duration with its unit, e.g. \"90s\""
        ),
        "{}",
        run.stderr
    );
    assert_eq!(
        errors[3], "error: 1 of 1 manifest invalid (3 errors in all); nothing was run",
        "{}",
        run.stderr
    );
    assert!(!sb.log().exists());
    // `validate` prints them too, one per line.
    let run = sb.run(&["validate", "job.toml"]).code(2);
    assert_eq!(
        run.stderr
            .lines()
            .filter(|l| l.contains("job.toml:"))
            .count(),
        3,
        "{}",
        run.stderr
    );
}

#[test]
fn a_crate_directory_is_no_job_manifest() {
    let sb = Sandbox::new();
    let krate = sb.path().join("mycrate");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"mycrate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n",
    )
    .unwrap();
    let run = sb
        .run(&["batch", "DATA", "mycrate"])
        .code(2)
        .one_line_error();
    assert!(
        run.stderr.contains(
            "Cargo.toml: not a job manifest (it looks like a crate's Cargo.toml); a job manifest sets prompt, source, editable, allow and verify"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("unknown"), "{}", run.stderr);
    assert!(!sb.log().exists());
    // A provider file where a job belongs says where it goes.
    std::fs::write(
        sb.path().join("local.toml"),
        "name = \"local\"\n\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    )
    .unwrap();
    sb.run(&["batch", "DATA", "local.toml"])
        .code(2)
        .one_line_error()
        .stderr_has(
            "local.toml: a provider file, not a job manifest: give it with --provider FILE",
        );
}

#[test]
fn a_provider_typo_lists_the_keys_of_its_kind() {
    let sb = Sandbox::new();
    job(
        &sb,
        &[(
            "kind = \"script\"\nscript = \"s.jsonl\"",
            "kind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodle = \"m\"",
        )],
        "",
    );
    let run = sb.run(&["validate", "job.toml"]).code(2);
    assert!(
        run.stderr.contains(
            "provider.modle: not a key for kind \"openai\", did you mean model? (its keys: base_url, model, api_key_env, mode, temperature, max_tokens, timeout, max_retries, retry_for)"
        ),
        "{}",
        run.stderr
    );
    // No key of another kind is offered.
    assert!(!run.stderr.contains("program"), "{}", run.stderr);
}

#[test]
fn a_verify_command_outside_the_allowlist_gets_the_rule_that_admits_it() {
    let sb = Sandbox::new();
    job(
        &sb,
        &[
            ("allow = [\"true\"]", "allow = [\"cargo build **\"]"),
            (
                "verify = [\"true\"]",
                "verify = [\"cargo\", \"test\", \"--offline\"]",
            ),
        ],
        "",
    );
    let run = sb.run(&["validate", "job.toml"]).code(2);
    assert!(
        run.stderr
            .contains("job.toml:5:10: verify: not allowed by any allow rule: ")
            && run
                .stderr
                .contains("add \"cargo test **\" to allow to admit it"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unknown_family_lists_the_families_there_are() {
    let sb = Sandbox::new();
    let jobs = format!("{}/jobs", env!("CARGO_MANIFEST_DIR"));
    let run = sb
        .run(&["batch", "DATA", &jobs, "--family", "off_by_on"])
        .code(2)
        .one_line_error();
    assert!(
        run.stderr.contains("has family \"off_by_on\"; did you mean off_by_one? families: accumulator_reset, clamp_range, "),
        "{}",
        run.stderr
    );
    assert!(!sb.log().exists());
    let run = sb
        .run(&["batch", "DATA", &jobs, "--family", "nosuch"])
        .code(2);
    assert!(
        run.stderr.contains("families: accumulator_reset, "),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("did you mean"), "{}", run.stderr);
}

#[test]
fn retry_with_no_attempts_left_points_to_a_rerun() {
    let sb = Sandbox::new();
    job(&sb, &[], "");
    // The script finishes without an edit: the one attempt fails no_edit.
    sb.run(&["batch", "DATA", "job.toml"]).code(1);
    let run = sb.run(&["retry", "DATA", "job"]).code(2).one_line_error();
    assert!(
        run.stderr
            .contains("cannot retry job \"job\": its 1 attempt is used; ")
            && run.stderr.contains(" JOBS... --rerun failed"),
        "{}",
        run.stderr
    );
}

/// The progress line of a refused decision says why it was refused.
#[test]
fn an_invalid_step_says_why() {
    let sb = Sandbox::new();
    job(&sb, &[], "");
    std::fs::write(
        sb.path().join("s.jsonl"),
        "\"this is not a decision\"\n{\"kind\":\"finish\",\"summary\":\"x\"}\n",
    )
    .unwrap();
    let run = crate::harness::Run::from(
        sb.command(&["batch", "DATA", "job.toml"])
            .env("CI", "1")
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 1, "{run:#?}");
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("step 1: invalid"))
        .unwrap_or_else(|| panic!("no step line:\n{}", run.stderr));
    assert!(line.contains("step 1: invalid decision: "), "{line}");
    assert!(
        line.len() > line.find("invalid decision: ").unwrap() + 20,
        "{line}"
    );
}

/// `watch` on a queued job that no runner holds says so, and how to start
/// one, instead of waiting without a word.
#[test]
fn watch_says_when_nothing_runs_the_queued_jobs() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "lonely"]).ok();
    let mut watch = sb
        .command(&["watch", "DATA", "--interval-ms", "50"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = watch.stdout.take().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let started = Instant::now();
    let mut seen = Vec::new();
    let note = loop {
        let left = Duration::from_secs(60).saturating_sub(started.elapsed());
        match receive.recv_timeout(left) {
            Ok(line) if line.starts_with("nothing is running") => break line,
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = watch.kill();
                panic!("no note from watch in 60 s: {seen:#?}");
            }
        }
    };
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(
        note.contains("the queued job (lonely): no runner holds it"),
        "{note}"
    );
    assert!(note.contains("agent-runtime batch "), "{note}");
    assert!(note.contains("watch goes on waiting"), "{note}");
}
