//! The help a newcomer reads: demo first, every argument described,
//! examples where they help, one `--version`.

use crate::harness::Sandbox;

const COMMANDS: [&str; 19] = [
    "demo", "batch", "check", "run", "enqueue", "status", "watch", "report", "cancel", "retry",
    "replay", "gc", "exec", "doctor", "import", "validate", "schema", "view", "agents",
];

#[test]
fn the_top_level_help_starts_with_demo_and_points_to_the_docs() {
    let sb = Sandbox::new();
    let help = sb.run(&["--help"]).ok().stdout;
    insta::assert_snapshot!(help);
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(&listed[..COMMANDS.len()], COMMANDS);
    assert!(help.contains("-V, --version"));
}

/// The help of the commands a newcomer reaches for first, each pinned.
#[test]
fn the_help_of_each_main_command_is_pinned() {
    let sb = Sandbox::new();
    crate::snapshot::redacted(Some(sb.path())).bind(|| {
        for command in ["batch", "check", "validate", "report", "gc", "doctor"] {
            let help = sb.run(&[command, "--help"]).ok().stdout;
            insta::assert_snapshot!(format!("help_{command}"), help);
        }
    });
}

#[test]
fn every_argument_of_every_command_is_described() {
    let sb = Sandbox::new();
    for command in COMMANDS {
        // The short help puts each description on its argument's line.
        let help = sb.run(&[command, "-h"]).ok().stdout;
        for line in help.lines() {
            let trimmed = line.trim();
            let bare_positional =
                trimmed.starts_with('<') && trimmed.ends_with('>') && !trimmed.contains(' ');
            assert!(
                !bare_positional,
                "{command}: {trimmed} has no description:\n{help}"
            );
        }
        assert!(
            !help.contains("--version"),
            "{command} repeats --version:\n{help}"
        );
        for odd in ["<INTERVAL_MS>", "<TIMEOUT>", "<OUTPUT_CAP>"] {
            assert!(!help.contains(odd), "{command}: value name {odd}");
        }
    }
}

/// The lines of a help section: from its title to the next blank line.
fn section<'a>(help: &'a str, title: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// Every command the top-level help lists ends its `--help` with examples
/// of itself and the exit codes it can give, all of them the policy's.
#[test]
fn every_command_shows_examples_and_its_exit_codes() {
    let sb = Sandbox::new();
    let top = sb.run(&["--help"]).ok().stdout;
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= COMMANDS.len(), "{commands:?}");
    for command in commands {
        let help = sb.run(&[command, "--help"]).ok().stdout;
        let examples = section(&help, "Examples:");
        assert!(!examples.is_empty(), "{command} has no examples:\n{help}");
        for line in &examples {
            assert!(
                line.starts_with("  agent-runtime ") || line.contains(" agent-runtime "),
                "{command}: not an example: {line}"
            );
        }
        assert!(
            examples
                .iter()
                .any(|l| l.contains(&format!("agent-runtime {command}"))),
            "{command}: no example of itself:\n{help}"
        );
        let codes: Vec<u32> = section(&help, "Exit codes:")
            .iter()
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect();
        assert!(
            codes.contains(&0) && codes.contains(&2),
            "{command}: exit codes {codes:?}:\n{help}"
        );
        for code in &codes {
            assert!(
                [0, 1, 2, 130].contains(code),
                "{command}: exit code {code} is not the policy's"
            );
        }
        if command == "batch" {
            assert_eq!(codes, [0, 1, 2, 130], "{help}");
        }
    }
}

/// One name per kind of value: a count is `<N>` and a job `<ID>`
/// everywhere, in the usage line and in the list of arguments alike.
#[test]
fn placeholders_are_the_same_in_every_command() {
    let sb = Sandbox::new();
    for command in COMMANDS {
        let help = sb.run(&[command, "--help"]).ok().stdout;
        for odd in ["<K>", "<F>", "<ATTEMPTS>", "<INSTANCE>", "[ID]"] {
            assert!(!help.contains(odd), "{command}: {odd}:\n{help}");
        }
    }
    // A flag that did nothing is gone.
    let report = sb.run(&["report", "--help"]).ok().stdout;
    assert!(!report.contains("--merge"), "{report}");
    let enqueue = sb.run(&["enqueue", "--help"]).ok().stdout;
    assert!(
        enqueue.contains("Usage: agent-runtime enqueue <DATA> <ID>"),
        "{enqueue}"
    );
    assert!(enqueue.contains("\n  <ID>\n"), "{enqueue}");
    let batch = sb.run(&["batch", "--help"]).ok().stdout;
    for flag in [
        "--attempts <N>",
        "--repeat <N>",
        "--family <FAMILY>",
        "--report <DIR>",
        "--provider <FILE>",
    ] {
        assert!(batch.contains(flag), "{flag}:\n{batch}");
    }
}

#[test]
fn enqueue_without_an_id_mentions_the_job_form() {
    let sb = Sandbox::new();
    let run = sb.run(&["enqueue", "DATA"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--job <FILE>"), "{}", run.stderr);
}

#[test]
fn report_writes_into_data_report_by_default() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "t1"]).ok();
    sb.run(&["report", "DATA"]).ok();
    assert!(sb.data().join("report/report.html").is_file());
    let two = sb.run(&["report", "DATA", "DATA"]);
    assert_eq!(two.code, 2, "{two:#?}");
    assert!(two.stderr.contains("--out DIR"), "{}", two.stderr);
}

#[test]
fn the_status_table_fits_the_terminal() {
    let sb = Sandbox::new();
    for id in [
        "a_rather_long_job_identifier_of_a_real_corpus_exercise_one",
        "a_rather_long_job_identifier_of_a_real_corpus_exercise_two",
        "short",
    ] {
        sb.run(&["enqueue", "DATA", id]).ok();
    }
    let narrow = crate::harness::Run::from(
        sb.command(&["status", "DATA"])
            .env("COLUMNS", "80")
            .output()
            .unwrap(),
    );
    assert_eq!(narrow.code, 0, "{narrow:#?}");
    for line in narrow.stdout.lines() {
        let width = agent_runtime::table::width(line);
        assert!(width <= 80, "{width} columns: {line}");
    }
    assert!(narrow.stdout.contains("…"), "{}", narrow.stdout);
    assert!(narrow.stdout.starts_with("JOB "), "{}", narrow.stdout);
    // Headers are abbreviated before the last step column goes.
    assert!(narrow.stdout.contains("  STEP  "), "{}", narrow.stdout);
    // A pipe without COLUMNS gets the whole ids.
    let wide = sb.run(&["status", "DATA"]).ok();
    assert!(wide.stdout.contains("exercise_one"), "{}", wide.stdout);
}

#[test]
fn validate_reads_provider_files_and_helps_with_paths() {
    let sb = Sandbox::new();
    std::fs::write(
        sb.path().join("local.toml"),
        "name = \"local\"\n\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    )
    .unwrap();
    sb.run(&["validate", "local.toml"])
        .ok()
        .stdout_has("ok local.toml (provider local, kind openai)");
    std::fs::create_dir_all(sb.path().join("empty")).unwrap();
    let empty = sb.run(&["validate", "empty"]).code(2);
    assert_eq!(
        empty.stderr.trim(),
        "error: empty: directory holds no *.toml files and no job folders (*/job.toml)",
        "{}",
        empty.stderr
    );
    let root = env!("CARGO_MANIFEST_DIR");
    let typo = format!("{root}/jobs/off_by_one");
    let run = sb.run(&["validate", &typo]).code(2);
    assert!(
        run.stderr.contains("(did you mean ") && run.stderr.contains("off_by_one.toml?)"),
        "{}",
        run.stderr
    );
}

#[test]
fn batch_lists_every_bad_manifest_before_running_anything() {
    let sb = Sandbox::new();
    for name in ["a", "b"] {
        std::fs::write(
            sb.path().join(format!("{name}.toml")),
            "prompt = \"x\"\nsource = \"nowhere\"\nverify = [\"true\"]\n",
        )
        .unwrap();
    }
    let run = sb.run(&["batch", "DATA", "a.toml", "b.toml"]).code(2);
    assert!(run.stderr.contains("a.toml:"), "{}", run.stderr);
    assert!(run.stderr.contains("b.toml:"), "{}", run.stderr);
    assert!(
        run.stderr.contains("2 of 2 manifests invalid"),
        "{}",
        run.stderr
    );
    assert!(!sb.data().join("events.log").exists());
}

#[test]
fn a_batch_reports_exactly_the_jobs_it_planned() {
    let sb = Sandbox::new();
    sb.run(&["enqueue", "DATA", "lifecycle-task"]).ok();
    let root = env!("CARGO_MANIFEST_DIR");
    let job = format!("{root}/evaluation/controls/success.toml");
    let run = sb.run(&["batch", "DATA", &job]).ok();
    assert!(run.stdout.contains("succeeded 1/1"), "{}", run.stdout);
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sb.data().join("report/results.json")).unwrap())
            .unwrap();
    let jobs = results["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    assert_eq!(results["totals"]["jobs"], 1);
    // `report` still covers the whole log.
    sb.run(&["report", "DATA", "--out", "all"]).ok();
    let all: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sb.path().join("all/results.json")).unwrap())
            .unwrap();
    assert_eq!(all["jobs"].as_array().unwrap().len(), 2);
}

/// `demo` needs no checkout (its jobs are in the binary) and leaves
/// nothing behind unless asked to.
#[test]
fn demo_runs_from_an_empty_directory_and_leaves_nothing_behind() {
    let sb = Sandbox::new();
    let cwd = sb.path().join("empty");
    let tmp = sb.path().join("tmp");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let run = crate::harness::Run::from(
        std::process::Command::new(crate::harness::BIN)
            .arg("demo")
            .current_dir(&cwd)
            .env("TMPDIR", &tmp)
            .env("CARGO_NET_OFFLINE", "true")
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    // One bundled job fails on purpose, and the demo still succeeds.
    assert!(run.stdout.contains("succeeded 8/9"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("demo: off_by_one_overfit fails on purpose: its scripted fix special-cases the visible test"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("demo: off_by_one_overfit failed as intended (tests_failed)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("off_by_one_overfit: tests_failed: failing: test/acceptance::"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("removed its scratch directory"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("report: "), "{}", run.stdout);
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0);
}

/// A second batch on a data dir whose job another batch is running waits
/// for it and reports how it ended.
#[test]
fn a_second_batch_waits_for_the_jobs_another_runner_holds() {
    let sb = Sandbox::new();
    let source = sb.path().join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(source.join("a.txt"), "old\n").unwrap();
    std::fs::write(
        sb.path().join("s.jsonl"),
        "{\"kind\":\"write_file\",\"path\":\"a.txt\",\"content\":\"new\\n\"}\n{\"kind\":\"finish\",\"summary\":\"done\"}\n",
    )
    .unwrap();
    std::fs::write(
        sb.path().join("slow.toml"),
        "id = \"slow\"\nprompt = \"x\"\nsource = \"source\"\neditable = [\"*.txt\"]\nallow = [\"sleep **\"]\nverify = [\"sleep\", \"3\"]\n\n[limits]\nattempts = 1\n\n[provider]\nkind = \"script\"\nscript = \"s.jsonl\"\n",
    )
    .unwrap();
    let mut first = sb
        .command(&["batch", "DATA", "slow.toml"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !crate::harness::log_lines(&sb)
        .iter()
        .any(|l| l["type"] == "attempt_started")
    {
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let second = sb.run(&["batch", "DATA", "slow.toml"]);
    assert!(first.wait().unwrap().success());
    assert_eq!(second.code, 0, "{second:#?}");
    assert!(
        second
            .stderr
            .contains("waiting for 1 job another runner is running"),
        "{}",
        second.stderr
    );
    assert!(second.stdout.contains("succeeded 1/1"), "{}", second.stdout);
}

#[test]
fn progress_never_counts_back_and_failures_say_why_in_one_line() {
    let sb = Sandbox::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let retried = format!("{root}/evaluation/controls/opposite_attempts.toml");
    let wrong = format!("{root}/evaluation/controls/wrong_fix.toml");
    let run = sb.run(&["batch", "DATA", &retried, &wrong]);
    assert_eq!(run.code, 1, "{run:#?}");
    let mut last = 0;
    for line in run.stderr.lines().filter(|l| l.starts_with('[')) {
        let done: usize = line[1..line.find('/').unwrap()].trim().parse().unwrap();
        assert!(
            done >= last,
            "the counter went back: {line}\n{}",
            run.stderr
        );
        last = done;
    }
    assert_eq!(last, 2, "{}", run.stderr);
    // The failed job's cause, in one line, as the reports show it.
    let cause = run
        .stderr
        .lines()
        .find(|l| l.starts_with("wrong_fix: tests_failed: "))
        .unwrap_or_else(|| panic!("no cause line:\n{}", run.stderr));
    assert!(cause.len() > "wrong_fix: tests_failed: ".len(), "{cause}");

    // `run` says why too.
    sb.run(&["enqueue", "ONE", "--job", &wrong]).ok();
    let one = sb.run(&["run", "ONE", "wrong_fix"]);
    assert_eq!(one.code, 1, "{one:#?}");
    assert!(
        one.stdout
            .contains("outcome=failed failure_kind=tests_failed"),
        "{}",
        one.stdout
    );
    assert!(one.stderr.starts_with("cause: "), "{}", one.stderr);
}

#[test]
fn a_provider_error_names_the_provider_once() {
    let sb = Sandbox::new();
    std::fs::write(
        sb.path().join("claude.toml"),
        "name = \"claude\"\n\n[provider]\nkind = \"anthropic\"\nmodel = \"m\"\napi_key_env = \"NO_SUCH_KEY_FOR_THIS_TEST\"\n",
    )
    .unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let job = format!("{root}/jobs/off_by_one.toml");
    let run = sb.run(&["batch", "DATA", &job, "--provider", "claude.toml"]);
    assert_eq!(run.code, 2, "{run:#?}");
    let line = run.stderr.trim();
    assert!(
        line.contains(
            "claude (anthropic provider): the API key variable NO_SUCH_KEY_FOR_THIS_TEST"
        ),
        "{line}"
    );
    assert_eq!(line.matches("anthropic").count(), 1, "{line}");
}
