//! `validate` and `schema` through the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_agent-runtime");

/// A temp dir with `jobs/`, a source tree and a script.
struct Jobs {
    dir: tempfile::TempDir,
}

impl Jobs {
    fn new() -> Jobs {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("jobs")).unwrap();
        std::fs::create_dir_all(dir.path().join("fixture/src")).unwrap();
        // What `editable` names: a glob that matches nothing is warned of.
        std::fs::write(dir.path().join("fixture/src/lib.rs"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("hidden")).unwrap();
        std::fs::write(dir.path().join("replies.jsonl"), "{\"kind\":\"verify\"}\n").unwrap();
        Jobs { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root().join("jobs").join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Runs the binary in the temp dir.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.root())
            .output()
            .unwrap()
    }
}

const GOOD: &str = r#"prompt = "Fix it."
source = "../fixture"
editable = ["src/**/*.rs"]
allow = ["cargo test **"]
verify = ["cargo", "test"]

[acceptance]
dir = "../hidden"
command = ["cargo", "test"]

[provider]
kind = "script"
script = "../replies.jsonl"
"#;

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn good_manifests_pass_with_exit_0() {
    let jobs = Jobs::new();
    jobs.write("alpha.toml", GOOD);
    jobs.write("beta.toml", &format!("family = \"fam\"\n{GOOD}"));
    let output = jobs.run(&["validate", "jobs"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "ok jobs/alpha.toml (id=alpha, family=alpha)\nok jobs/beta.toml (id=beta, family=fam)\n"
    );
    // Globs and repeated files give each manifest once.
    let output = jobs.run(&["validate", "jobs/*.toml", "jobs/alpha.toml"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output).lines().count(), 2);
}

#[test]
fn the_repository_example_job_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(BIN)
        .args(["validate", "jobs/off_by_one.toml"])
        .current_dir(root)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "ok jobs/off_by_one.toml (id=off_by_one, family=off_by_one)\n"
    );
}

/// Each class of bad manifest: exit 2, and stderr names file:line:col and
/// the field.
#[test]
fn each_class_of_bad_manifest_fails_with_its_place_and_field() {
    let cases: &[(&str, &str, &str)] = &[
        ("syntax", "", "jobs/syntax.toml:1:18: invalid basic string"),
        (
            "duration",
            "[limits]\nwall_time = \"15 minutes\"\n",
            "jobs/duration.toml:15:13: limits.wall_time: invalid duration \"15 minutes\" (use e.g. 90s, 15m, 1h)",
        ),
        (
            "size",
            "[limits]\noutput_cap = \"lots\"\n",
            "jobs/size.toml:15:14: limits.output_cap: invalid size \"lots\"",
        ),
        (
            "unknown_key",
            "colour = \"red\"\n",
            "jobs/unknown_key.toml:14:1: provider.colour: not a key for kind \"script\" (its keys: script, dialect)",
        ),
        (
            "wrong_type",
            "[sandbox]\nnetwork = \"no\"\n",
            "jobs/wrong_type.toml:15:11: sandbox.network: must be true or false (found the string \"no\")",
        ),
        (
            "reserved_env",
            "[env]\nHOME = \"/root\"\n",
            "jobs/reserved_env.toml:15:1: env.HOME: HOME is controlled by the runtime",
        ),
        (
            "provider_key",
            "",
            "jobs/provider_key.toml:14:1: provider.model: not a key for kind \"script\"",
        ),
    ];
    let jobs = Jobs::new();
    for (name, extra, expected) in cases {
        let text = if *name == "provider_key" {
            format!("{GOOD}model = \"m\"\n")
        } else if *name == "syntax" {
            GOOD.replace("prompt = \"Fix it.\"", "prompt = \"Fix it.")
        } else {
            format!("{GOOD}{extra}")
        };
        jobs.write(&format!("{name}.toml"), &text);
        let output = jobs.run(&["validate", &format!("jobs/{name}.toml")]);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", stderr(&output));
        assert!(
            stderr(&output).starts_with(expected),
            "{name}\n got: {}\nwant: {expected}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty());
    }
}

#[test]
fn semantic_refusals_point_at_the_offending_line() {
    let jobs = Jobs::new();
    jobs.write("nosrc.toml", &GOOD.replace("../fixture", "../missing"));
    jobs.write(
        "peek.toml",
        &GOOD.replace("dir = \"../hidden\"", "dir = \"../fixture/src\""),
    );
    jobs.write("bad-id.toml", &format!("id = \"no spaces\"\n{GOOD}"));
    jobs.write("both.toml", &format!("prompt_file = \"x.md\"\n{GOOD}"));
    let output = jobs.run(&["validate", "jobs"]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("jobs/bad-id.toml:1:6: id: job id \"no spaces\" contains ' '"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("jobs/both.toml:1:1: prompt_file: set either prompt or prompt_file"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("jobs/nosrc.toml:2:10: source: "),
        "{err}"
    );
    assert!(lines[2].contains("missing does not exist"), "{err}");
    assert!(
        lines[3].starts_with("jobs/peek.toml:8:7: acceptance.dir: "),
        "{err}"
    );
    assert!(
        lines[3].ends_with("the model could read the hidden tests"),
        "{err}"
    );
    assert_eq!(lines[4], "error: 4 of 4 manifests invalid");
}

#[test]
fn good_and_bad_together_report_both_and_exit_2() {
    let jobs = Jobs::new();
    jobs.write("good.toml", GOOD);
    jobs.write("bad.toml", &format!("{GOOD}[limits]\nmax_steps = 0\n"));
    let output = jobs.run(&[
        "validate",
        "jobs/good.toml",
        "jobs/bad.toml",
        "jobs/none*.toml",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stdout(&output),
        "ok jobs/good.toml (id=good, family=good)\n"
    );
    let err = stderr(&output);
    assert!(
        err.contains("jobs/none*.toml: glob matched no files"),
        "{err}"
    );
    assert!(
        err.contains("jobs/bad.toml:15:13: limits.max_steps: must be at least 1"),
        "{err}"
    );
}

#[test]
fn a_malformed_script_is_caught_by_validate() {
    let jobs = Jobs::new();
    std::fs::write(
        jobs.root().join("replies.jsonl"),
        "{\"kind\":\"verify\"}\n{oops\n",
    )
    .unwrap();
    jobs.write("job.toml", GOOD);
    let output = jobs.run(&["validate", "jobs/job.toml"]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.starts_with("jobs/job.toml: provider.script: "), "{err}");
    assert!(err.contains("replies.jsonl:2:2: invalid JSON"), "{err}");
}

#[test]
fn validate_needs_at_least_one_argument() {
    let jobs = Jobs::new();
    assert_eq!(jobs.run(&["validate"]).status.code(), Some(2));
}

#[test]
fn schema_decision_prints_the_published_schema() {
    let jobs = Jobs::new();
    let output = jobs.run(&["schema", "decision"]);
    assert_eq!(output.status.code(), Some(0));
    let published = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/decision.schema.json"),
    )
    .unwrap();
    assert_eq!(stdout(&output), published);
    let schema: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(schema["oneOf"].as_array().unwrap().len(), 7);
    assert_eq!(jobs.run(&["schema", "nope"]).status.code(), Some(2));
}

/// What `validate` says of a folder of jobs with a bit of everything: a
/// valid job, one without a provider, misspelt keys and values, a wrong
/// shape and a bad duration, a crate's `Cargo.toml`, a file that is not
/// TOML.
#[test]
fn validate_output_snapshot() {
    let jobs = Jobs::new();
    jobs.write("a_good.toml", &format!("id = \"good\"\n{GOOD}"));
    jobs.write(
        "b_no_provider.toml",
        &format!(
            "id = \"bare\"\n{}",
            GOOD.split("[provider]").next().unwrap()
        ),
    );
    jobs.write(
        "c_typos.toml",
        &format!(
            "id = \"typos\"\n{}",
            GOOD.replace("[acceptance]", "trace = \"ful\"\n\n[limits]\nmax_step = 3\nwall_time = \"15 minutes\"\n\n[acceptance]")
                .replace("editable = [\"src/**/*.rs\"]", "editable = \"src/**/*.rs\"")
        ),
    );
    jobs.write(
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    jobs.write(
        "d_broken.toml",
        "id = \"broken\"\nprompt = \"unterminated\n",
    );
    let out = jobs.run(&["validate", "jobs"]);
    assert_eq!(out.status.code(), Some(2));
    let text = format!(
        "exit {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status.code().unwrap_or(-1),
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    crate::snapshot::redacted(Some(jobs.root())).bind(|| insta::assert_snapshot!(text));
}
