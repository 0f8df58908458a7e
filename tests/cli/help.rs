//! The help a newcomer reads: demo first, every argument described,
//! examples where they help, one `--version`.

use crate::harness::Sandbox;

const COMMANDS: [&str; 16] = [
    "demo", "batch", "check", "run", "enqueue", "status", "watch", "report", "cancel", "retry",
    "replay", "gc", "exec", "doctor", "validate", "schema",
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

#[test]
fn the_main_commands_show_examples() {
    let sb = Sandbox::new();
    for command in ["batch", "run", "exec", "check", "replay"] {
        let help = sb.run(&[command, "--help"]).ok().stdout;
        assert!(
            help.contains("\nExamples:\n  agent-runtime "),
            "{command}:\n{help}"
        );
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
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(narrow.stdout.contains("…"), "{}", narrow.stdout);
    assert!(narrow.stdout.starts_with("JOB "), "{}", narrow.stdout);
    assert!(narrow.stdout.contains("LAST STEP"), "{}", narrow.stdout);
    // A pipe without COLUMNS gets the whole ids.
    let wide = sb.run(&["status", "DATA"]).ok();
    assert!(wide.stdout.contains("exercise_one"), "{}", wide.stdout);
}
