//! `[setup]` through the real binary, offline: the setup commands fill the
//! job cache once, every later command sees it read-only (an agent whose
//! verify tries to write into it changes nothing, byte for byte), a rerun
//! reuses it without running anything, and a failed setup is
//! `setup_failed` with its output kept. Manifest errors name file, line
//! and field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Sandbox, log_lines};

const SEED: &str = "hello from setup\n";

/// Every regular file under `root`, by relative path, with its bytes.
pub fn tree_bytes(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
            return;
        };
        for entry in entries.flatten() {
            let child = rel.join(entry.file_name());
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                walk(root, &child, out);
            } else if kind.is_file() {
                out.insert(child.clone(), std::fs::read(root.join(&child)).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, Path::new(""), &mut out);
    out
}

/// The only directory under `DATA/cache/` (one job, one key).
pub fn only_cache(data: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(data.join("cache"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "one job cache: {dirs:?}");
    dirs[0].clone()
}

/// A unit test the agent writes into `src/lib.rs`: during verify it tries
/// to write each path of `targets` (Rust expressions giving a `String`)
/// and records what happened in `attack-report.txt` in its workspace.
pub fn attack_test(targets: &[&str]) -> String {
    let targets = targets.join(",\n            ");
    format!(
        r#"
#[cfg(test)]
mod attack {{
    use std::io::Write;

    fn home() -> String {{
        std::env::var("CARGO_HOME").unwrap_or_default()
    }}

    fn try_write(path: &str) -> String {{
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .and_then(|mut f| f.write_all(b"poisoned"));
        match opened {{
            Ok(()) => format!("WRITTEN {{path}}\n"),
            Err(e) => format!("refused {{path}}: {{e}}\n"),
        }}
    }}

    #[test]
    fn poison_the_caches() {{
        let _ = home();
        let mut report = String::new();
        let targets: Vec<String> = vec![
            {targets}
        ];
        for path in targets {{
            report.push_str(&try_write(&path));
        }}
        std::fs::write("attack-report.txt", report).unwrap();
    }}
}}
"#
    )
}

/// Writes a scripted provider file: `write_file src/lib.rs`, verify, finish.
pub fn fix_script(path: &Path, lib: &str) {
    let lines = [
        json!({"kind": "write_file", "path": "src/lib.rs", "content": lib}),
        json!({"kind": "verify"}),
        json!({"kind": "finish", "summary": "fixed"}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n") + "\n").unwrap();
}

/// A crate `seeded` whose hidden tests need the file setup puts in the
/// cache; the fix makes `answer()` 42 and attacks the cache.
fn write_job(root: &Path, setup: &str) -> PathBuf {
    let source = root.join("source");
    std::fs::create_dir_all(source.join("src")).unwrap();
    std::fs::write(
        source.join("Cargo.toml"),
        "[package]\nname = \"seeded\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        source.join("Cargo.lock"),
        "version = 4\n\n[[package]]\nname = \"seeded\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(source.join("seed.txt"), SEED).unwrap();
    std::fs::write(
        source.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    41\n}\n",
    )
    .unwrap();
    let acceptance = root.join("acceptance/tests");
    std::fs::create_dir_all(&acceptance).unwrap();
    std::fs::write(
        acceptance.join("hidden.rs"),
        format!(
            "#[test]\nfn the_answer() {{\n    assert_eq!(seeded::answer(), 42);\n}}\n\n\
             #[test]\nfn the_cache_holds_what_setup_put_there() {{\n    \
             let path = std::env::var(\"SEED_FILE\").unwrap();\n    \
             assert_eq!(std::fs::read_to_string(path).unwrap(), {SEED:?});\n}}\n"
        ),
    )
    .unwrap();
    let lib = format!(
        "pub fn answer() -> u32 {{\n    42\n}}\n{}",
        attack_test(&[
            r#"std::env::var("SEED_FILE").unwrap()"#,
            r#"format!("{}/registry/seed.txt", home())"#,
            r#"format!("{}/planted.txt", home())"#,
            r#"format!("{}/../planted.txt", home())"#,
        ])
    );
    fix_script(&root.join("fix.jsonl"), &lib);
    let manifest = root.join("seeded.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"id = "seeded"
prompt = "Make answer() return 42."
source = "source"
editable = ["src/**/*.rs"]
allow = ["cargo test **"]
verify = ["cargo", "test", "--offline", "--quiet"]

[env]
SEED_FILE = "{{cache}}/seed.txt"

{setup}

[acceptance]
dir = "acceptance"
command = ["cargo", "test", "--offline", "--quiet"]

[limits]
attempts = 1

[provider]
kind = "script"
script = "fix.jsonl"
"#
        ),
    )
    .unwrap();
    manifest
}

// `seed.txt` is not a file the language table names (a lock or manifest
// file): the setup, which sees only its inputs, declares it.
const SETUP: &str = r#"[setup]
network = false
inputs = ["seed.txt"]
commands = [
  ["cp", "seed.txt", "{cache}/seed.txt"],
  ["mkdir", "-p", "{cache}/cargo/registry"],
  ["cp", "seed.txt", "{cache}/cargo/registry/seed.txt"],
]"#;

fn events<'a>(lines: &'a [Value], ty: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == ty).collect()
}

#[test]
fn setup_fills_the_job_cache_once_and_later_commands_cannot_change_it() {
    let sb = Sandbox::new();
    let manifest = write_job(sb.path(), SETUP);
    let manifest = manifest.to_str().unwrap();
    sb.run(&["batch", "DATA", manifest, "--keep", "all"]).ok();

    let lines = log_lines(&sb);
    let setup = events(&lines, "setup");
    assert_eq!(setup.len(), 1, "{setup:?}");
    assert_eq!(setup[0]["result"], "passed");
    assert!(setup[0].get("reused").is_none(), "{}", setup[0]);
    assert!(setup[0]["duration_ms"].is_u64());
    let setup_commands = lines
        .iter()
        .filter(|l| l["type"] == "command" && l["role"] == "setup")
        .count();
    assert_eq!(setup_commands, 3);
    // Setup comes before the baseline, which saw the cache (its hidden
    // test reading the seed passed at baseline: it is pass-to-pass).
    let baseline = &events(&lines, "baseline")[0];
    assert_eq!(
        baseline["inventory"]["pass_to_pass"],
        json!(["test/hidden::the_cache_holds_what_setup_put_there"])
    );
    let acceptance = &events(&lines, "acceptance")[0];
    assert_eq!(acceptance["result"], "passed", "{acceptance}");

    // The agent's verify ran its attack, and every write was refused.
    let report =
        std::fs::read_to_string(sb.data().join("work/seeded/1/attack-report.txt")).unwrap();
    assert_eq!(report.lines().count(), 4, "{report}");
    assert!(!report.contains("WRITTEN"), "{report}");
    // The property: the cache holds exactly what setup put there, byte for
    // byte, and nothing else.
    let cache = only_cache(&sb.data());
    let files = tree_bytes(&cache.join("setup"));
    let mut expected: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();
    expected.insert("seed.txt".into(), SEED.into());
    expected.insert("cargo/registry/seed.txt".into(), SEED.into());
    for config in ["config.toml", "config"] {
        if let Some((path, bytes)) = files.get_key_value(Path::new("cargo").join(config).as_path())
        {
            expected.insert(path.clone(), bytes.clone());
        }
    }
    assert_eq!(files, expected);
    assert!(sb.data().join("runs/seeded/1/setup.log").is_file());

    // A rerun of the same job reuses the cache: nothing runs.
    sb.run(&["batch", "DATA", manifest, "--rerun", "all"]).ok();
    let lines = log_lines(&sb);
    let replaced = lines.iter().position(|l| l["type"] == "replaced").unwrap();
    let after = &lines[replaced..];
    let setup = events(after, "setup");
    assert_eq!(setup.len(), 1);
    assert_eq!(setup[0]["reused"], true, "{}", setup[0]);
    assert_eq!(setup[0]["duration_ms"], 0);
    assert!(
        !after
            .iter()
            .any(|l| l["type"] == "command" && l["role"] == "setup"),
        "a reused setup runs nothing"
    );
    assert_eq!(events(after, "acceptance")[0]["result"], "passed");
    assert_eq!(tree_bytes(&cache.join("setup")), files);
}

#[test]
fn a_failed_setup_is_setup_failed_before_any_model_call_with_its_output_kept() {
    let sb = Sandbox::new();
    let setup = "[setup]\nnetwork = false\ncommands = [[\"ls\", \"no-such-file\"]]";
    let manifest = write_job(sb.path(), setup);
    let run = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stdout.contains("setup_failed"), "{run:#?}");
    assert!(
        run.stderr
            .contains("setup_failed: its [setup] failed (not the model's doing)"),
        "{run:#?}"
    );
    // Reports count it as a failure of the infrastructure, not the model's.
    let report = std::fs::read_to_string(sb.data().join("report/report.md")).unwrap();
    assert!(
        report.contains("1 failure of the infrastructure (not the model's): 1 setup_failed"),
        "{report}"
    );
    assert!(report.contains("setup_failed (infrastructure)"), "{report}");
    let lines = log_lines(&sb);
    let setup = events(&lines, "setup");
    assert_eq!(setup[0]["result"], "failed");
    let cause = setup[0]["cause"].as_str().unwrap();
    assert!(cause.contains("`ls` exited 2"), "{cause}");
    assert_eq!(
        events(&lines, "attempt_finished")[0]["failure_kind"],
        "setup_failed"
    );
    for never in ["baseline", "decision", "acceptance"] {
        assert!(
            events(&lines, never).is_empty(),
            "no {never} after a failed setup"
        );
    }
    let log = std::fs::read_to_string(sb.data().join("runs/seeded/1/setup.log")).unwrap();
    assert!(log.contains("no-such-file"), "{log}");
    // Not marked done: a retry would run it again.
    assert!(!only_cache(&sb.data()).join("setup.done").exists());
}

#[test]
fn setup_keys_are_checked_with_file_line_and_field() {
    let sb = Sandbox::new();
    let cases = [
        (
            "[setup]\ncommands = []",
            "setup.commands: must list at least one command",
        ),
        (
            "[setup]\ncommands = [[\"cargo\", \"fetch\"], []]",
            "setup.commands[1]: must name a program",
        ),
        (
            "[setup]\ncommands = [[\"/usr/bin/cargo\", \"fetch\"]]",
            "setup.commands[0]: \"/usr/bin/cargo\" must be a program name, not a path",
        ),
        (
            "[setup]\nnetwork = true",
            "setup.commands: required key is missing",
        ),
        (
            "[setup]\ncommands = [[\"cargo\"]]\nnet = true",
            "setup.net: unknown key, did you mean network?",
        ),
        (
            "[setup]\ncommands = [[\"cargo\"]]\nnetwork = \"yes\"",
            "setup.network",
        ),
    ];
    for (setup, message) in cases {
        let manifest = write_job(sb.path(), setup);
        let run = sb.run(&["validate", manifest.to_str().unwrap()]).code(2);
        let line = run.stderr.lines().next().unwrap_or_default();
        assert!(line.contains("seeded.toml:"), "{line}");
        assert!(line.contains(message), "{setup:?}: {line}");
        // file:line:col points into the [setup] table.
        let at: Vec<&str> = line.split(':').collect();
        let number: usize = at[1].parse().unwrap();
        assert!(number >= 11, "{setup:?}: {line}");
    }
    // {cache} needs a [setup] table.
    let manifest = write_job(sb.path(), "");
    let run = sb.run(&["validate", manifest.to_str().unwrap()]).code(2);
    assert!(run.stderr.contains("env.SEED_FILE: {cache}"), "{run:#?}");
    assert!(run.stderr.contains("seeded.toml:9:13:"), "{run:#?}");
}

#[test]
fn demo_leaves_out_a_job_whose_setup_needs_the_network_when_there_is_none() {
    let sb = Sandbox::new();
    let jobs = sb.path().join("jobs");
    std::fs::create_dir_all(jobs.join("src")).unwrap();
    std::fs::write(
        jobs.join("script.jsonl"),
        "{\"kind\":\"write_file\",\"path\":\"out.txt\",\"content\":\"x\"}\n\
         {\"kind\":\"verify\"}\n{\"kind\":\"finish\",\"summary\":\"done\"}\n",
    )
    .unwrap();
    let job = |id: &str, setup: &str| {
        format!(
            "id = \"{id}\"\nprompt = \"p\"\nsource = \"src\"\neditable = [\"*.txt\"]\n\
             allow = [\"true\"]\nverify = [\"true\"]\n{setup}\n\
             [provider]\nkind = \"script\"\nscript = \"script.jsonl\"\n"
        )
    };
    std::fs::write(jobs.join("local.toml"), job("local", "")).unwrap();
    let fetch = "[setup]\ncommands = [[\"true\"]]\n";
    std::fs::write(jobs.join("fetching.toml"), job("fetching", fetch)).unwrap();
    let run = sb
        .command(&["demo", "--jobs", jobs.to_str().unwrap()])
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .unwrap();
    let run = crate::harness::Run::from(run).ok();
    assert!(
        run.stdout
            .contains("demo: skipping fetching: its [setup] needs the network and"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("succeeded 1/1"), "{run:#?}");
}
