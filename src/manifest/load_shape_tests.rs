//! Errors that say the fix: suggestions for misspelt keys and values,
//! examples for values of the wrong shape, every error of a file in file
//! order, and one line for a file that is not a manifest at all.

use super::load_tests::{Fixture, MINIMAL, with};

#[test]
fn a_misspelt_key_gets_the_key_it_was_meant_to_be() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&with("[limits]\nmax_step = 3\n")),
        "jobs/job.toml:7:1: limits.max_step: unknown key, did you mean max_steps?"
    );
    assert_eq!(
        fx.error(&with("[limit]\nmax_steps = 3\n")),
        "jobs/job.toml:6:2: limit: unknown table, did you mean [limits]?"
    );
    assert_eq!(
        fx.error(&with("max_steps = 3\n")),
        "jobs/job.toml:6:1: max_steps: unknown key here: max_steps is a key of [limits]"
    );
    assert_eq!(
        fx.error(&with("trace = \"ful\"\n")),
        "jobs/job.toml:6:9: trace: unknown value \"ful\", did you mean \"full\"? (one of \"metadata\", \"full\")"
    );
    assert_eq!(
        fx.error(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"x\"]\nresults = \"libtst\"\n"
        )),
        "jobs/job.toml:9:11: acceptance.results: unknown results format \"libtst\" (libtest, junit:PATH, exit); did you mean \"libtest\"?"
    );
}

#[test]
fn a_provider_typo_is_checked_against_the_keys_of_its_kind() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&with(
            "[provider]\nkind = \"openai\"\nbase_url = \"http://x/v1\"\nmodle = \"m\"\n"
        )),
        "jobs/job.toml:9:1: provider.modle: not a key for kind \"openai\", did you mean model? \
         (its keys: base_url, model, api_key_env, mode, temperature, max_tokens, timeout, max_retries, retry_for)"
    );
    assert_eq!(
        fx.error(&with(
            "[provider]\nkind = \"script\"\nscript = \"../replies.jsonl\"\nscirpt = \"x\"\n"
        )),
        "jobs/job.toml:9:1: provider.scirpt: not a key for kind \"script\", did you mean script? (its keys: script, dialect)"
    );
}

#[test]
fn a_value_of_the_wrong_shape_is_shown_in_the_right_one() {
    let fx = Fixture::new();
    let replace = |from: &str, to: &str| fx.error(&MINIMAL.replace(from, to));
    assert_eq!(
        replace("editable = [\"**/*.rs\"]", "editable = \"src/**/*.rs\""),
        "jobs/job.toml:3:12: editable: must be a list of globs, e.g. [\"src/**/*.rs\"] (found the string \"src/**/*.rs\")"
    );
    assert_eq!(
        replace("allow = [\"cargo test **\"]", "allow = \"cargo test **\""),
        "jobs/job.toml:4:9: allow: must be a list of allow rules, e.g. [\"cargo test **\"] (found the string \"cargo test **\")"
    );
    assert_eq!(
        fx.error(&with("[setup]\ncommands = [\"cargo\", \"fetch\"]\n")),
        "jobs/job.toml:7:12: setup.commands: must be a list of commands, each a list of the program and its arguments, e.g. [[\"cargo\", \"fetch\"]] (found one list of strings)"
    );
    assert_eq!(
        fx.error(&with("[limits]\nattempts = 2.5\n")),
        "jobs/job.toml:7:12: limits.attempts: must be a whole number (found the number 2.5)"
    );
    assert_eq!(
        fx.error(&with("[sandbox]\nnetwork = \"yes\"\n")),
        "jobs/job.toml:7:11: sandbox.network: must be true or false (found the string \"yes\")"
    );
}

/// No message names a type of the program's language.
#[test]
fn messages_speak_of_values_not_types() {
    let fx = Fixture::new();
    let cases = [
        "[limits]\nmax_steps = \"many\"\n",
        "[limits]\ntoken_budget = -1\n",
        "[limits]\nwall_time = 90\n",
        "[limits]\nattempts = []\n",
        "[env]\nX = 1\n",
        "trace = 1\n",
        "[provider]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\ntemperature = \"hot\"\n",
        "[provider]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nmax_tokens = 1.5\n",
        "[price]\ninput_per_mtok = \"3\"\noutput_per_mtok = 1\n",
        "[acceptance]\ndir = 1\ncommand = \"cargo test\"\n",
        "limits = 3\n",
        "[sandbox]\ntoolchains = \"../.venv/bin\"\n",
    ];
    for case in cases {
        let text = fx.error(&with(case));
        for word in [
            "u32",
            "u64",
            "i64",
            "f64",
            "sequence",
            "invalid type",
            "variant",
            "field `",
            "a map",
        ] {
            assert!(!text.contains(word), "{case:?}: {word} in {text}");
        }
    }
}

#[test]
fn every_error_of_a_file_is_reported_in_file_order() {
    let fx = Fixture::new();
    let text = MINIMAL
        .replace("source = \"../src\"", "source = \"../missing\"")
        .replace("editable = [\"**/*.rs\"]", "editable = \"src/*.rs\"")
        + "\n[limits]\nmax_step = 3\nwall_time = \"soon\"\n";
    let err = fx.error(&text);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(
        lines[0].starts_with("jobs/job.toml:2:10: source: "),
        "{err}"
    );
    assert!(
        lines[1].starts_with("jobs/job.toml:3:12: editable: must be a list of globs"),
        "{err}"
    );
    assert!(
        lines[2].starts_with(
            "jobs/job.toml:8:1: limits.max_step: unknown key, did you mean max_steps?"
        ),
        "{err}"
    );
    assert!(
        lines[3].starts_with("jobs/job.toml:9:13: limits.wall_time: invalid duration"),
        "{err}"
    );
    // A field the shape check reported is not reported again as missing.
    assert!(!err.contains("editable: required key is missing"), "{err}");
}

#[test]
fn a_file_that_is_no_job_manifest_says_so_once() {
    let fx = Fixture::new();
    let cargo = fx.error(
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n",
    );
    assert_eq!(
        cargo,
        "jobs/job.toml: not a job manifest (it looks like a crate's Cargo.toml); a job manifest sets prompt, source, editable, allow and verify (see docs/manifest.md)"
    );
    assert!(
        fx.error("")
            .starts_with("jobs/job.toml: not a job manifest (it is empty)")
    );
    assert!(
        fx.error("colour = 1\n")
            .starts_with("jobs/job.toml: not a job manifest (its keys are colour)")
    );
    assert_eq!(
        fx.error(
            "name = \"local\"\n[provider]\nkind = \"script\"\nscript = \"../replies.jsonl\"\n"
        ),
        "jobs/job.toml: a provider file, not a job manifest: give it with --provider FILE"
    );
    // A manifest that lacks its main keys is a manifest with errors.
    assert!(
        fx.error("id = \"x\"\n")
            .starts_with("jobs/job.toml:1:1: prompt: required key is missing"),
    );
}
