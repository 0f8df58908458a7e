//! Loading manifests and provider files: defaults, normalization and the
//! exact wording and placement of every kind of refusal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::manifest::ResultsFormat;
use crate::protocol::ManifestSnapshot;
use crate::protocol::units::ByteSize;

/// A temp dir with `jobs/`, `src/` (the source tree), `hidden/` (acceptance
/// tests), `replies.jsonl` and `task.md`.
pub(super) struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    pub(super) fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in ["jobs", "src/inner", "hidden"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("replies.jsonl"), "{\"kind\":\"verify\"}\n").unwrap();
        std::fs::write(root.join("task.md"), "Fix it.\n").unwrap();
        Fixture { dir }
    }

    pub(super) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(super) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root().join("jobs").join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(super) fn load(&self, text: &str) -> Result<Manifest, ManifestError> {
        load_manifest(&self.write("job.toml", text))
    }

    /// The error text with the temp dir cut off, e.g. `jobs/job.toml:3:8: ...`.
    pub(super) fn error(&self, text: &str) -> String {
        let err = self.load(text).unwrap_err().to_string();
        err.replace(&format!("{}/", self.root().display()), "")
    }

    /// For each `(extra, expected)`: the minimal manifest with `extra`
    /// fails with an error that starts with `expected`.
    pub(super) fn assert_errors(&self, cases: &[(&str, &str)]) {
        for (extra, expected) in cases {
            let got = self.error(&with(extra));
            assert!(
                got.starts_with(expected),
                "for {extra:?}\n got: {got}\nwant: {expected}"
            );
        }
    }
}

pub(super) const MINIMAL: &str = r#"prompt = "Fix it."
source = "../src"
editable = ["**/*.rs"]
allow = ["cargo test **"]
verify = ["cargo", "test"]
"#;

pub(super) fn with(extra: &str) -> String {
    format!("{MINIMAL}{extra}")
}

#[test]
fn minimal_manifest_gets_every_default() {
    let fx = Fixture::new();
    let m = fx.load(MINIMAL).unwrap();
    assert_eq!(m.id, "job");
    assert_eq!(m.family, "job");
    assert_eq!(m.prompt, "Fix it.");
    assert_eq!(m.prompt_file, None);
    assert_eq!(m.source, fx.root().join("src").canonicalize().unwrap());
    assert_eq!(m.trace, Trace::Metadata);
    assert!(m.env.is_empty());
    assert_eq!(m.acceptance, None);
    assert_eq!(m.limits, Limits::default());
    assert_eq!(m.limits.attempts, 2);
    assert_eq!(m.limits.max_steps, 16);
    assert_eq!(m.limits.max_invalid, 3);
    assert_eq!(m.limits.wall_time, Duration::from_secs(900));
    assert_eq!(m.limits.command_timeout, Duration::from_secs(120));
    assert_eq!(m.limits.output_cap, ByteSize(64 * 1024));
    assert_eq!(m.limits.observation_cap, ByteSize(16 * 1024));
    assert_eq!(m.limits.token_budget, 500_000);
    assert_eq!(m.provider, None);
    assert_eq!(m.sandbox.mode, SandboxMode::Auto);
    assert!(!m.sandbox.network);
}

#[test]
fn full_manifest_resolves_paths_against_its_directory() {
    let fx = Fixture::new();
    let m = fx
        .load(
            r#"id = "full-1"
family = "fam"
prompt_file = "../task.md"
source = "../src/./inner/.."
editable = ["src/**/*.rs", "Cargo.toml"]
allow = ["cargo test **"]
verify = ["cargo", "test", "--offline"]
trace = "full"

[env]
RUST_BACKTRACE = "0"

[acceptance]
dir = "../hidden"
command = ["cargo", "test"]
baseline = "skip"

[limits]
attempts = 5
wall_time = "1h"
command_timeout = "500ms"
output_cap = 512
observation_cap = "1MiB"
token_budget = 1000

[provider]
kind = "script"
script = ["../replies.jsonl", "../replies.jsonl"]

[sandbox]
mode = "required"
network = true
"#,
        )
        .unwrap();
    let root = fx.root().canonicalize().unwrap();
    assert_eq!(m.id, "full-1");
    assert_eq!(m.family, "fam");
    assert_eq!(m.prompt, "Fix it.\n");
    assert_eq!(m.prompt_file, Some(root.join("task.md")));
    assert_eq!(m.source, root.join("src"));
    assert_eq!(m.trace, Trace::Full);
    assert_eq!(m.env.get("RUST_BACKTRACE").map(String::as_str), Some("0"));
    let acceptance = m.acceptance.clone().unwrap();
    assert_eq!(acceptance.dir, root.join("hidden"));
    assert_eq!(acceptance.baseline, Baseline::Skip);
    assert_eq!(m.limits.attempts, 5);
    assert_eq!(m.limits.max_steps, 16);
    assert_eq!(m.limits.wall_time, Duration::from_secs(3600));
    assert_eq!(m.limits.command_timeout, Duration::from_millis(500));
    assert_eq!(m.limits.output_cap, ByteSize(512));
    assert_eq!(m.limits.observation_cap, ByteSize(1 << 20));
    let Some(ProviderConfig::Script(script)) = &m.provider else {
        panic!("expected a script provider: {:?}", m.provider);
    };
    assert_eq!(script.script, vec![root.join("replies.jsonl"); 2]);
    assert_eq!(m.sandbox.mode, SandboxMode::Required);
    assert!(m.sandbox.network);
}

#[test]
fn the_example_job_in_the_repository_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs/off_by_one.toml");
    let m = load_manifest(&path).unwrap();
    assert_eq!(m.id, "off_by_one");
    assert!(m.acceptance.is_some());
    assert!(matches!(m.provider, Some(ProviderConfig::Script(_))));
}

#[test]
fn errors_name_file_line_column_and_field() {
    let fx = Fixture::new();
    let cases: &[(&str, &str)] = &[
        (
            "[limits]\nwall_time = \"15 minutes\"\n",
            "jobs/job.toml:7:13: limits.wall_time: invalid duration \"15 minutes\" (use e.g. 90s, 15m, 1h)",
        ),
        (
            "[limits]\ncommand_timeout = 120\n",
            "jobs/job.toml:7:19: limits.command_timeout: must be a duration with its unit, e.g. \"120s\" or \"120ms\" (found the whole number 120)",
        ),
        (
            "[limits]\noutput_cap = \"64KB\"\n",
            "jobs/job.toml:7:14: limits.output_cap: invalid size \"64KB\" (use e.g. 512, 16KiB, 1MiB)",
        ),
        (
            "[limits]\nmax_steps = 0\n",
            "jobs/job.toml:7:13: limits.max_steps: must be at least 1",
        ),
        (
            "[limits]\nmax_steps = \"many\"\n",
            "jobs/job.toml:7:13: limits.max_steps: must be a whole number (found the string \"many\")",
        ),
        (
            "colour = \"blue\"\n",
            "jobs/job.toml:6:1: colour: unknown key; a job manifest takes id, family, prompt, prompt_file, source, editable, allow, verify, trace, [env], [metadata], [acceptance], [setup], [limits], [provider], [sandbox], [agent], [oracle], [check], [price]",
        ),
        (
            "[limits]\nbogus = 1\n",
            "jobs/job.toml:7:1: limits.bogus: unknown key; [limits] takes attempts, max_steps, max_invalid, max_restarts, wall_time",
        ),
        (
            "trace = \"verbose\"\n",
            "jobs/job.toml:6:9: trace: unknown value \"verbose\" (one of \"metadata\", \"full\")",
        ),
        (
            "[sandbox]\nmode = \"maybe\"\n",
            "jobs/job.toml:7:8: sandbox.mode: unknown value \"maybe\" (one of \"off\", \"auto\", \"required\")",
        ),
        (
            "[env]\nPATH = \"/evil\"\n",
            "jobs/job.toml:7:1: env.PATH: PATH is controlled by the runtime and cannot be set by a job",
        ),
        (
            "[env]\nLD_PRELOAD = \"x.so\"\n",
            "jobs/job.toml:7:1: env.LD_PRELOAD: LD_PRELOAD is controlled by the runtime",
        ),
        (
            "[env]\n\"A-B\" = \"1\"\n",
            "jobs/job.toml:7:1: env.A-B: \"A-B\" is not a variable name",
        ),
        (
            "[env]\nX = 1\n",
            "jobs/job.toml:7:5: env.X: must be a string (found the whole number 1)",
        ),
        (
            "[acceptance]\ncommand = [\"cargo\", \"test\"]\n",
            "jobs/job.toml:6:1: acceptance.dir: required key is missing",
        ),
        (
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"cargo\"]\nbaseline = \"always\"\n",
            "jobs/job.toml:9:12: acceptance.baseline: unknown value \"always\" (one of \"must_fail\", \"skip\")",
        ),
        (
            "[acceptance]\ndir = \"../src/inner\"\ncommand = [\"cargo\", \"test\"]\n",
            "jobs/job.toml:7:7: acceptance.dir: ",
        ),
        (
            "[acceptance]\ndir = \"../nowhere\"\ncommand = [\"cargo\", \"test\"]\n",
            "jobs/job.toml:7:7: acceptance.dir: ",
        ),
        (
            "[acceptance]\ndir = \"../hidden\"\ncommand = []\n",
            "jobs/job.toml:8:11: acceptance.command: must name a program",
        ),
        (
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"x\"]\nresults = \"tap\"\n",
            "jobs/job.toml:9:11: acceptance.results: unknown results format \"tap\"",
        ),
        (
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"x\"]\nresults = \"junit:../r.xml\"\n",
            "jobs/job.toml:9:11: acceptance.results: junit:../r.xml: the path must be relative",
        ),
    ];
    fx.assert_errors(cases);
}

#[test]
fn results_format_defaults_by_command_and_is_left_out_of_the_hash_when_unset() {
    let fx = Fixture::new();
    let cargo = fx
        .load(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"cargo\", \"test\"]\n",
        ))
        .unwrap();
    let acceptance = cargo.acceptance.clone().unwrap();
    assert_eq!(acceptance.results, None);
    assert_eq!(acceptance.results_format(), ResultsFormat::Libtest);
    let pytest = fx
        .load(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"pytest\"]\nresults = \"junit:out/r.xml\"\n",
        ))
        .unwrap();
    assert_eq!(
        pytest.acceptance.unwrap().results_format(),
        ResultsFormat::Junit("out/r.xml".into())
    );
    let other = fx
        .load(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"make\", \"check\"]\n",
        ))
        .unwrap();
    assert_eq!(
        other.acceptance.unwrap().results_format(),
        ResultsFormat::Exit
    );
    // Unset, the key is not in the stored form (older hashes hold).
    let stored = serde_json::to_string(&cargo.acceptance).unwrap();
    assert!(!stored.contains("results"), "{stored}");
}

#[test]
fn test_timeout_is_a_duration_left_out_of_the_hash_when_unset_and_warned_about_off_libtest() {
    let fx = Fixture::new();
    let plain = fx
        .load(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"cargo\", \"test\"]\n",
        ))
        .unwrap();
    let stored = serde_json::to_string(&plain.acceptance).unwrap();
    assert!(!stored.contains("test_timeout"), "{stored}");
    assert!(plain.warnings().is_empty());
    let timed = fx
        .load(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"cargo\", \"test\"]\ntest_timeout = \"5s\"\n",
        ))
        .unwrap();
    let acceptance = timed.acceptance.clone().unwrap();
    assert_eq!(
        acceptance.test_timeout,
        Some(std::time::Duration::from_secs(5))
    );
    assert_ne!(timed.hash(), plain.hash());
    let rebuilt = Manifest::from_snapshot(&timed.to_snapshot()).unwrap();
    assert_eq!(rebuilt.hash(), timed.hash());
    assert!(timed.warnings().is_empty());
    let junit = fx
        .load(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"pytest\"]\nresults = \"junit:r.xml\"\ntest_timeout = \"5s\"\n",
        ))
        .unwrap();
    let warnings = junit.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("job.toml:10:16: acceptance.test_timeout has no effect"),
        "{warnings:?}"
    );
    assert!(
        fx.error(&with(
            "[acceptance]\ndir = \"../hidden\"\ncommand = [\"cargo\", \"test\"]\ntest_timeout = \"0s\"\n",
        ))
        .contains("acceptance.test_timeout: must be greater than zero")
    );
}

#[test]
fn canary_and_strict_integrity_leave_the_hash_alone_at_their_defaults() {
    let fx = Fixture::new();
    let acceptance = "[acceptance]\ndir = \"../hidden\"\ncommand = [\"cargo\", \"test\"]\n";
    let plain = fx.load(&with(acceptance)).unwrap();
    let stored = serde_json::to_string(&plain.acceptance).unwrap();
    assert!(
        !stored.contains("canary") && !stored.contains("strict"),
        "{stored}"
    );
    let spelled = fx
        .load(&with(&format!(
            "{acceptance}canary = true\nstrict_integrity = false\n"
        )))
        .unwrap();
    assert_eq!(spelled.hash(), plain.hash());
    let off = fx
        .load(&with(&format!(
            "{acceptance}canary = false\nstrict_integrity = true\n"
        )))
        .unwrap();
    assert_ne!(off.hash(), plain.hash());
    let rebuilt = Manifest::from_snapshot(&off.to_snapshot()).unwrap();
    let rebuilt = rebuilt.acceptance.unwrap();
    assert!(!rebuilt.canary && rebuilt.strict_integrity);
    assert!(plain.acceptance.unwrap().canary);
}

#[test]
fn the_oracle_rides_in_the_snapshot_outside_the_hash() {
    let fx = Fixture::new();
    std::fs::write(fx.root().join("fix.diff"), "").unwrap();
    let plain = fx.load(MINIMAL).unwrap();
    let with_oracle = fx
        .load(&with("[oracle]\npatch = \"../fix.diff\"\n"))
        .unwrap();
    assert_eq!(with_oracle.hash(), plain.hash());
    let wire = serde_json::to_value(plain.to_snapshot()).unwrap();
    assert!(wire.get("oracle").is_none());
    let wire = serde_json::to_value(with_oracle.to_snapshot()).unwrap();
    assert!(wire["oracle"]["patch"].is_string(), "{wire}");
    let rebuilt = Manifest::from_snapshot(&with_oracle.to_snapshot()).unwrap();
    assert!(matches!(
        rebuilt.oracle,
        Some(crate::manifest::Oracle::Patch(_))
    ));
    assert_eq!(rebuilt.hash(), plain.hash());
}

#[test]
fn top_level_refusals_are_placed_at_their_key() {
    let fx = Fixture::new();
    let replace = |from: &str, to: &str| fx.error(&MINIMAL.replace(from, to));
    assert_eq!(
        replace("source = \"../src\"", "source = \"../missing\""),
        format!(
            "jobs/job.toml:2:10: source: {}/missing does not exist: No such file or directory (os error 2)",
            fx.root().display()
        )
        .replace(&format!("{}/", fx.root().display()), "")
    );
    assert!(
        replace("source = \"../src\"", "source = \"../task.md\"")
            .starts_with("jobs/job.toml:2:10: source: ")
    );
    assert!(
        replace("source = \"../src\"", "source = \"../task.md\"")
            .ends_with("task.md is not a directory")
    );
    assert_eq!(
        replace("source = \"../src\"\n", ""),
        "jobs/job.toml:1:1: source: required key is missing"
    );
    assert_eq!(
        replace("verify = [\"cargo\", \"test\"]", "verify = []"),
        "jobs/job.toml:5:10: verify: must name a program: e.g. [\"cargo\", \"test\"]"
    );
    assert_eq!(
        replace("verify = [\"cargo\", \"test\"]", "verify = \"cargo test\""),
        "jobs/job.toml:5:10: verify: must be a list: the program and its arguments, e.g. [\"cargo\", \"test\"] (found the string \"cargo test\")"
    );
    assert_eq!(
        replace("prompt = \"Fix it.\"\n", ""),
        "jobs/job.toml:1:1: prompt: required key is missing (or set prompt_file)"
    );
    assert_eq!(
        replace(
            "prompt = \"Fix it.\"",
            "prompt = \"Fix it.\"\nprompt_file = \"../task.md\""
        ),
        "jobs/job.toml:2:1: prompt_file: set either prompt or prompt_file, not both"
    );
    assert_eq!(
        replace("prompt = \"Fix it.\"", "id = \"a/b\"\nprompt = \"x\""),
        "jobs/job.toml:1:6: id: job id \"a/b\" contains '/'; use only letters, digits, '.', '_' and '-'"
    );
    assert_eq!(
        replace(
            "editable = [\"**/*.rs\"]",
            "editable = [\"src/*.rs\", \"../x\"]"
        ),
        "jobs/job.toml:3:25: editable[1]: \"../x\" must be relative to the workspace, without \"..\""
    );
    assert_eq!(
        replace("editable = [\"**/*.rs\"]", "editable = [\"src/[.rs\"]"),
        "jobs/job.toml:3:13: editable[0]: invalid glob \"src/[.rs\": unclosed character class; missing ']'"
    );
    assert_eq!(
        replace(
            "allow = [\"cargo test **\"]",
            "allow = [\"/usr/bin/cargo test\"]"
        ),
        "jobs/job.toml:4:10: allow[0]: rule \"/usr/bin/cargo test\" must start with a program name, not a path"
    );
    assert_eq!(
        replace(
            "prompt = \"Fix it.\"",
            "prompt = \"Fix it.\"\nprompt = \"again\""
        ),
        "jobs/job.toml:2:1: duplicate key"
    );
}

#[test]
fn an_id_is_needed_when_the_file_name_is_not_one() {
    let fx = Fixture::new();
    let path = fx.write("bad name.toml", MINIMAL);
    let err = load_manifest(&path).unwrap_err().to_string();
    assert!(
        err.contains("bad name.toml:1:1: id: not set, and the file name cannot be used instead"),
        "{err}"
    );
    let with_id = fx.write("bad name.toml", &format!("id = \"good\"\n{MINIMAL}"));
    assert_eq!(load_manifest(&with_id).unwrap().id, "good");
}

#[test]
fn verify_allowed_hook_reports_at_verify() {
    let fx = Fixture::new();
    let m = fx.load(MINIMAL).unwrap();
    m.check_verify_allowed(|_, _| Ok(())).unwrap();
    let err = m
        .check_verify_allowed(|allow, verify| {
            Err(format!("{} rules, argv of {}", allow.len(), verify.len()))
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(
            "jobs/job.toml:5:10: verify: not allowed by any allow rule: 1 rules, argv of 2"
        ),
        "{err}"
    );
    let rebuilt = Manifest::from_snapshot(&m.to_snapshot()).unwrap();
    let err = rebuilt
        .check_verify_allowed(|_, _| Err("no".into()))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "manifest snapshot of job job: verify: not allowed by any allow rule: no"
    );
}

#[test]
fn snapshot_round_trips_and_hash_is_stable() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs/off_by_one.toml");
    let m = load_manifest(&path).unwrap();
    let snapshot = m.to_snapshot();
    // The stored form, as the log holds it.
    let wire = serde_json::to_value(&snapshot).unwrap();
    assert_eq!(wire["format"], SNAPSHOT_FORMAT);
    assert_eq!(wire["hash"], m.hash());
    assert_eq!(wire["manifest"]["limits"]["wall_time"], "15m");
    assert_eq!(wire["manifest"]["limits"]["output_cap"], "64KiB");
    assert_eq!(wire["manifest"]["provider"]["kind"], "script");
    let rebuilt = Manifest::from_snapshot(&snapshot).unwrap();
    assert_eq!(rebuilt.to_snapshot(), snapshot);
    assert_eq!(rebuilt.hash(), m.hash());
    assert_eq!(rebuilt.limits, m.limits);
    assert_eq!(rebuilt.provider, m.provider);
    // Through text, as the log stores it.
    let text = serde_json::to_string(&snapshot).unwrap();
    let reparsed: ManifestSnapshot = serde_json::from_str(&text).unwrap();
    assert_eq!(reparsed, snapshot);
    assert_eq!(Manifest::from_snapshot(&reparsed).unwrap().hash(), m.hash());
    // Loading again gives the same hash; 64 hex digits.
    assert_eq!(load_manifest(&path).unwrap().hash(), m.hash());
    assert_eq!(m.hash().len(), 64);
    assert!(m.hash().chars().all(|c| c.is_ascii_hexdigit()));
}

#[test]
fn hash_follows_content_and_prompt_file_bytes() {
    let fx = Fixture::new();
    let base = fx.load(MINIMAL).unwrap().hash();
    assert_eq!(
        fx.load(&format!("# a comment\n{MINIMAL}")).unwrap().hash(),
        base
    );
    assert_ne!(
        fx.load(&with("[limits]\nmax_steps = 17\n")).unwrap().hash(),
        base
    );
    // Spelling a default out changes nothing.
    assert_eq!(
        fx.load(&with("[limits]\nmax_steps = 16\n")).unwrap().hash(),
        base
    );

    let from_file = MINIMAL.replace("prompt = \"Fix it.\"", "prompt_file = \"../task.md\"");
    let before = fx.load(&from_file).unwrap().hash();
    std::fs::write(fx.root().join("task.md"), "Fix it better.\n").unwrap();
    assert_ne!(fx.load(&from_file).unwrap().hash(), before);
}

#[test]
fn snapshot_refusals_say_why() {
    let fx = Fixture::new();
    let snapshot = serde_json::to_value(fx.load(MINIMAL).unwrap().to_snapshot()).unwrap();
    let read =
        |wire: serde_json::Value| -> ManifestSnapshot { serde_json::from_value(wire).unwrap() };
    let mut wrong_format = snapshot.clone();
    wrong_format["format"] = 99.into();
    let wrong_format = read(wrong_format);
    assert!(
        Manifest::from_snapshot(&wrong_format)
            .unwrap_err()
            .to_string()
            .contains("unsupported format 99")
    );
    let mut tampered = snapshot.clone();
    tampered["manifest"]["limits"]["max_steps"] = 99.into();
    let tampered = read(tampered);
    assert!(
        Manifest::from_snapshot(&tampered)
            .unwrap_err()
            .to_string()
            .contains("hash mismatch for job job")
    );
    let mut unknown = snapshot;
    unknown["manifest"]["surprise"] = true.into();
    let unknown = read(unknown);
    assert!(
        matches!(unknown, ManifestSnapshot::Unreadable { .. }),
        "a snapshot this build cannot read still reads as a value"
    );
    assert!(
        Manifest::from_snapshot(&unknown)
            .unwrap_err()
            .to_string()
            .contains("unknown field `surprise`")
    );
}

#[test]
fn an_agent_s_memory_is_a_size_of_at_least_a_mebibyte() {
    let fx = Fixture::new();
    let m = fx
        .load(&with(
            "\n[agent]\nname = \"claude-code\"\nmode = \"contained\"\nmemory = \"3GiB\"\n",
        ))
        .unwrap();
    assert_eq!(m.agent.unwrap().memory, Some(3 << 30));
    let m = fx
        .load(&with("\n[agent]\nname = \"claude-code\"\n"))
        .unwrap();
    assert_eq!(m.agent.unwrap().memory, None);
    fx.assert_errors(&[
        (
            "\n[agent]\nname = \"codex\"\nmemory = \"1KiB\"\n",
            "jobs/job.toml:9:10: agent.memory: must be at least 1MiB",
        ),
        (
            "\n[agent]\nname = \"codex\"\nmemory = \"lots\"\n",
            "jobs/job.toml:9:",
        ),
    ]);
}
