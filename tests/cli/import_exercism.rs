//! `import exercism` through the real binary, on synthetic tracks in the
//! real layout (see `tracks.rs`): a track imports (deprecated and broken
//! exercises named as left out), `check` calls its exercises valid, a
//! provider that changes nothing gets none accepted, a wrong fix is
//! caught, every test of a multi-test exercise is in the inventory
//! (skipped and ignored ones included), and no exercise is `leaky`.
//! Python and JavaScript set up from their registries and skip, saying
//! why, where those cannot be reached.

use std::path::Path;
use std::time::Instant;

use agent_runtime_test_support::{Need, skip};

use crate::harness::Sandbox;
use crate::tracks::{
    Lang, TESTS, disk_usage, final_kind, provider, records, registry_unreachable, write_track,
};

/// Imports a track of `count` exercises; returns the output dir.
fn import(sb: &Sandbox, lang: Lang, count: u32) -> std::path::PathBuf {
    let track = write_track(&sb.path().join("tracks"), lang, count, true);
    let out = sb.path().join(format!("jobs-{}", lang.slug()));
    let run = sb.run(&[
        "import",
        "exercism",
        track.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    let slug = lang.slug();
    assert!(
        run.stdout.contains(&format!("imported {count} jobs into")),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "left out {slug}-retired: deprecated in the track's config.json"
        )),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "left out {slug}-add-998: files.solution names x, which is not a file here"
        )),
        "{run:#?}"
    );
    out
}

/// Imports `track` into `out/` under the sandbox, as a user would; the
/// run (which succeeded) and the output directory.
fn import_track(sb: &Sandbox, track: &Path) -> (crate::harness::Run, std::path::PathBuf) {
    let out = sb.path().join("out");
    let run = sb.run(&[
        "import",
        "exercism",
        track.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    (run, out)
}

/// Imports, checks, and runs the no-op and the wrong fix for `lang`
/// (`test` skips where its registry is unreachable).
fn track_round_trip(test: &str, lang: Lang) {
    if let Some(why) = registry_unreachable(lang) {
        skip(Need::Tool, test, &why);
        return;
    }
    let sb = Sandbox::new();
    let out = import(&sb, lang, 2);
    let slug = lang.slug();
    let job = format!("{slug}-add-1");
    let manifest = out.join(&job).join("job.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains(&format!("family = \"{slug}\"")), "{text}");
    assert!(!text.contains("[provider]"), "{text}");
    // A benchmark run keeps what the model said.
    assert!(text.contains("trace = \"full\""), "{text}");
    // The hidden tests are not in the source; the docs are the prompt.
    let source = out.join(&job).join("source");
    assert!(!source.join(".meta").exists() && !source.join(".docs").exists());
    let prompt = std::fs::read_to_string(out.join(&job).join("prompt.md")).unwrap();
    assert!(
        prompt.starts_with("# Introduction") && prompt.contains("adds 1"),
        "{prompt}"
    );

    // As the importer's own advice says: `check DIR`.
    let check_data = sb.path().join("check-data");
    let check = sb.run(&[
        "check",
        out.to_str().unwrap(),
        "--runs",
        "1",
        "--data",
        check_data.to_str().unwrap(),
    ]);
    assert_eq!(check.code, 0, "{check:#?}");
    assert!(check.stdout.contains("2/2 jobs valid"), "{check:#?}");
    assert!(!check.stdout.contains("leaky"), "{check:#?}");
    // Every test of the file is in the inventory, ignored and skipped
    // ones included: F2P + P2P = the tests the file defines.
    let baseline = records(&check_data)
        .into_iter()
        .find(|r| r["job"] == format!("{job}@oracle#1") && r["type"] == "baseline")
        .unwrap();
    let inventory = &baseline["inventory"];
    let total = inventory["fail_to_pass"].as_array().unwrap().len()
        + inventory["pass_to_pass"].as_array().unwrap().len();
    assert_eq!(total, TESTS, "{baseline}");
    eprintln!(
        "{slug}: inventory of {job}: {} F2P + {} P2P = {TESTS} tests in the file",
        inventory["fail_to_pass"].as_array().unwrap().len(),
        inventory["pass_to_pass"].as_array().unwrap().len()
    );

    // A provider that writes the stub back and one with a wrong fix.
    let file = lang.solution("add-1");
    let noop = provider(sb.path(), "noop", &file, lang.stub());
    let wrong = provider(sb.path(), "wrong", &file, &lang.code(1, false));
    for (name, provider) in [("noop", &noop), ("wrong", &wrong)] {
        let run = sb.run(&[
            "batch",
            "DATA",
            manifest.to_str().unwrap(),
            "--provider",
            provider.to_str().unwrap(),
            "--attempts",
            "1",
        ]);
        assert_eq!(run.code, 1, "{name}: {run:#?}");
        let (outcome, kind) = final_kind(&sb.data(), &format!("{job}@{name}"));
        assert_eq!(outcome, "failed", "{name}");
        assert_eq!(kind.as_deref(), Some("tests_failed"), "{name}: {run:#?}");
    }
}

#[test]
fn a_rust_track_imports_validates_and_catches_the_noop_and_a_wrong_fix() {
    track_round_trip(
        "a_rust_track_imports_validates_and_catches_the_noop_and_a_wrong_fix",
        Lang::Rust,
    );
}

#[test]
fn a_python_track_imports_validates_and_catches_the_noop_and_a_wrong_fix() {
    track_round_trip(
        "a_python_track_imports_validates_and_catches_the_noop_and_a_wrong_fix",
        Lang::Python,
    );
}

#[test]
fn a_javascript_track_imports_validates_and_catches_the_noop_and_a_wrong_fix() {
    track_round_trip(
        "a_javascript_track_imports_validates_and_catches_the_noop_and_a_wrong_fix",
        Lang::JavaScript,
    );
}

#[test]
fn a_track_of_140_exercises_imports_in_under_5_seconds() {
    let sb = Sandbox::new();
    let track = write_track(&sb.path().join("tracks"), Lang::Python, 140, false);
    let out = sb.path().join("out");
    let started = Instant::now();
    let run = sb.run(&[
        "import",
        "exercism",
        track.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let took = started.elapsed();
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("imported 140 jobs"), "{run:#?}");
    eprintln!("imported 140 exercises in {took:?}");
    assert!(took.as_secs() < 5, "took {took:?}");
    let validate = sb.run(&["validate", out.join("*/job.toml").to_str().unwrap()]);
    assert_eq!(validate.code, 0, "{validate:#?}");
    assert_eq!(validate.stdout.lines().count(), 140);
    // The directory itself, as the importer's advice names it: the same jobs.
    let by_dir = sb.run(&["validate", out.to_str().unwrap()]);
    assert_eq!(by_dir.stdout, validate.stdout, "{by_dir:#?}");
    // The practice folder and one exercise import too; the same ids twice
    // into one folder are refused, never overwritten.
    let one = sb.run(&[
        "import",
        "exercism",
        track.join("exercises/practice/add-7").to_str().unwrap(),
        "--out",
        sb.path().join("one").to_str().unwrap(),
        "--visible-tests",
    ]);
    assert_eq!(one.code, 0, "{one:#?}");
    let source = sb.path().join("one/python-add-7/source");
    assert!(source.join("add_7_test.py").is_file(), "--visible-tests");
    let again = sb.run(&[
        "import",
        "exercism",
        track.join("exercises/practice").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.code, 2, "{again:#?}");
    assert!(again.stderr.contains("already exists"), "{again:#?}");
}

#[test]
fn tracks_this_machine_cannot_run_are_named_with_the_reason() {
    let sb = Sandbox::new();
    let track = sb.path().join("go");
    std::fs::create_dir_all(track.join("exercises/practice/hello/.meta")).unwrap();
    std::fs::write(
        track.join("config.json"),
        r#"{"language": "Go", "slug": "go", "exercises": {"practice": [{"slug": "hello"}]}}"#,
    )
    .unwrap();
    std::fs::write(
        track.join("exercises/practice/hello/.meta/config.json"),
        r#"{"files": {"solution": ["hello.go"], "test": ["hello_test.go"], "example": [".meta/example.go"]}}"#,
    )
    .unwrap();
    let run = sb.run(&[
        "import",
        "exercism",
        track.to_str().unwrap(),
        "--out",
        sb.path().join("out").to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr
            .contains("left out go-hello: go: the Go toolchain is not installed"),
        "{run:#?}"
    );
}

/// Twenty Python jobs with the same setup share one cache.
#[test]
fn twenty_python_jobs_with_the_same_setup_share_one_cache() {
    if let Some(why) = registry_unreachable(Lang::Python) {
        skip(
            Need::Tool,
            "twenty_python_jobs_with_the_same_setup_share_one_cache",
            &why,
        );
        return;
    }
    let sb = Sandbox::new();
    let track = write_track(&sb.path().join("tracks"), Lang::Python, 20, false);
    let (_, out) = import_track(&sb, &track);
    let data = sb.path().join("check-data");
    let check = sb.run(&[
        "check",
        out.join("*/job.toml").to_str().unwrap(),
        "--runs",
        "1",
        "--data",
        data.to_str().unwrap(),
    ]);
    assert_eq!(check.code, 0, "{check:#?}");
    assert!(check.stdout.contains("20/20 jobs valid"), "{check:#?}");
    let caches: Vec<_> = std::fs::read_dir(data.join("cache"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    assert_eq!(caches.len(), 1, "one cache for 20 jobs: {caches:?}");
    let one = disk_usage(&caches[0].path());
    eprintln!(
        "20 Python jobs: 1 cache of {:.1} MiB (one cache per job would hold {:.1} MiB)",
        one as f64 / 1048576.0,
        (one * 20) as f64 / 1048576.0
    );
    let setups = records(&data)
        .into_iter()
        .filter(|r| r["type"] == "setup")
        .collect::<Vec<_>>();
    assert_eq!(setups.len(), 20);
    assert_eq!(
        setups.iter().filter(|s| s.get("reused").is_none()).count(),
        1
    );
    let key = caches[0].file_name().to_str().unwrap().to_string();
    assert!(setups.iter().all(|s| s["cache"] == key.as_str()));
    // gc keeps a cache the log's jobs refer to, and removes one no job does.
    let stray = data.join("cache").join("0".repeat(32));
    std::fs::create_dir_all(stray.join("setup")).unwrap();
    let gc = sb.run(&["gc", data.to_str().unwrap()]);
    assert_eq!(gc.code, 0, "{gc:#?}");
    assert!(
        gc.stdout.contains("removed 1 cache no job refers to"),
        "{gc:#?}"
    );
    assert!(!stray.exists() && caches[0].path().is_dir());
}

/// The job's hidden tests never reach its source.
#[test]
fn hidden_tests_stay_out_of_the_source_unless_asked() {
    let sb = Sandbox::new();
    let track = write_track(&sb.path().join("tracks"), Lang::JavaScript, 1, false);
    let (_, out) = import_track(&sb, &track);
    let job = out.join("javascript-add-1");
    assert!(!job.join("source/add-1.spec.js").exists());
    let hidden = std::fs::read_to_string(job.join("tests/add-1.spec.js")).unwrap();
    assert!(!hidden.contains("xtest"), "every test enabled: {hidden}");
    assert!(Path::new(&job.join("source/package.json")).is_file());
}

/// Every file under `dir`, relative, `/`-separated.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.push(
                    path.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out.sort();
    out
}

/// A crafted track: the example at the exercise's root, a test named
/// `tests//x`, reference solutions in `.approaches/` and `.articles/`,
/// and a config whose paths leave the exercise. Nothing of the answer or
/// the tests reaches any source; the escaping config is left out, named.
#[test]
fn the_answer_and_the_tests_never_reach_the_source_however_named() {
    let sb = Sandbox::new();
    let track = write_track(&sb.path().join("tracks"), Lang::Rust, 2, false);
    let practice = track.join("exercises/practice");
    let write = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // add-1: the example at the root, the test named with `//` and `./`.
    let one = practice.join("add-1");
    std::fs::rename(one.join(".meta/example.rs"), one.join("example.rs")).unwrap();
    write(
        &one.join(".meta/config.json"),
        r#"{"files": {"solution": ["./src/lib.rs", "Cargo.toml"], "test": ["tests//add-1.rs"], "example": ["example.rs/"]}}"#,
    );
    for dir in [".approaches/fast", ".articles/speed"] {
        write(&one.join(dir).join("snippet.txt"), "x + 1 // the answer\n");
    }
    // add-2: a config whose example lies outside the exercise.
    let two = practice.join("add-2");
    write(
        &practice.join("outside.rs"),
        "pub fn add(x: u64) -> u64 { x + 2 }\n",
    );
    write(
        &two.join(".meta/config.json"),
        r#"{"files": {"solution": ["src/lib.rs"], "test": ["tests/add-2.rs"], "example": ["../outside.rs"]}}"#,
    );
    let (run, out) = import_track(&sb, &track);
    assert!(
        run.stderr.contains(
            "left out rust-add-2: files.example names ../outside.rs, which leaves the exercise"
        ),
        "{run:#?}"
    );
    assert!(!out.join("rust-add-2").exists());
    let source = out.join("rust-add-1/source");
    assert_eq!(
        files_under(&source),
        [".gitignore", "Cargo.toml", "src/lib.rs"],
        "{run:#?}"
    );
    // The hidden test and the oracle are where they belong.
    assert!(out.join("rust-add-1/tests/tests/add-1.rs").is_file());
    let oracle = std::fs::read_to_string(out.join("rust-add-1/oracle.jsonl")).unwrap();
    assert!(oracle.contains("increment_for_this_exercise"), "{oracle}");
}

/// A Jest suite whose stub throws while Jest collects it (a call at
/// `describe` time) reports no test at the baseline; its inventory comes
/// from the oracle's run, as pytest's uncollectable files' do, with the
/// note that says so, and the task is valid.
#[test]
fn a_jest_suite_that_throws_at_collection_takes_its_inventory_from_the_oracle() {
    let test = "a_jest_suite_that_throws_at_collection_takes_its_inventory_from_the_oracle";
    if let Some(why) = registry_unreachable(Lang::JavaScript) {
        skip(Need::Tool, test, &why);
        return;
    }
    let sb = Sandbox::new();
    let track = write_track(&sb.path().join("tracks"), Lang::JavaScript, 1, false);
    let spec = track.join("exercises/practice/add-1/add-1.spec.js");
    let text = std::fs::read_to_string(&spec).unwrap();
    // Called while the suite is collected: the stub throws there.
    let text = text.replacen(
        "describe('add 1', () => {\n",
        "describe('add 1', () => {\n  const warm = add(0);\n",
        1,
    );
    std::fs::write(&spec, text).unwrap();
    let (_, out) = import_track(&sb, &track);
    let check = sb.run(&[
        "check",
        out.to_str().unwrap(),
        "--runs",
        "1",
        "--data",
        sb.path().join("check-data").to_str().unwrap(),
    ]);
    assert_eq!(check.code, 0, "{check:#?}");
    assert!(check.stdout.contains("1/1 job valid"), "{check:#?}");
    assert!(
        check
            .stdout
            .contains("note: baseline not collectable: inventory from the oracle"),
        "{check:#?}"
    );
}

/// An exercise whose test files include one the language's runner does
/// not judge (rust-macros' compile-fail doctests) is left out, named:
/// imported, it would be a task no fix passes.
#[test]
fn an_exercise_with_tests_the_runner_cannot_judge_is_left_out_named() {
    let sb = Sandbox::new();
    let track = write_track(&sb.path().join("tracks"), Lang::Rust, 2, false);
    let dir = track.join("exercises/practice/add-2");
    let meta = dir.join(".meta/config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    config["files"]["test"]
        .as_array_mut()
        .unwrap()
        .push("src/compile_fail_tests.rs".into());
    std::fs::write(&meta, config.to_string()).unwrap();
    std::fs::write(
        dir.join("src/compile_fail_tests.rs"),
        "/// ```compile_fail\n/// let x: u8 = 256;\n/// ```\npub fn x() {}\n",
    )
    .unwrap();
    let (run, out) = import_track(&sb, &track);
    assert!(
        run.stderr.contains(
            "left out rust-add-2: files.test names src/compile_fail_tests.rs, which the rust runner does not judge"
        ),
        "{run:#?}"
    );
    assert!(out.join("rust-add-1/job.toml").is_file());
    assert!(!out.join("rust-add-2").exists());
}

/// A fix that passes verify (its syntax checks) but throws as Jest loads
/// it: the suite fails to run, and the cause says with what.
#[test]
fn a_jest_suite_that_fails_to_run_says_why_in_the_cause() {
    let test = "a_jest_suite_that_fails_to_run_says_why_in_the_cause";
    if let Some(why) = registry_unreachable(Lang::JavaScript) {
        skip(Need::Tool, test, &why);
        return;
    }
    let sb = Sandbox::new();
    let track = write_track(&sb.path().join("tracks"), Lang::JavaScript, 1, false);
    let (_, out) = import_track(&sb, &track);
    let broken = provider(
        sb.path(),
        "broken",
        "add-1.js",
        "throw new Error('broken while loaded');\nexport const add = (x) => x + 1;\n",
    );
    let run = sb.run(&[
        "batch",
        "DATA",
        out.to_str().unwrap(),
        "--provider",
        broken.to_str().unwrap(),
        "--attempts",
        "1",
    ]);
    assert_eq!(run.code, 1, "{run:#?}");
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("javascript-add-1@broken: "))
        .unwrap_or_else(|| panic!("no cause line: {run:#?}"));
    assert!(
        line.contains("the tests did not collect: ") && line.contains("broken while loaded"),
        "{line}"
    );
    let excerpt = std::fs::read_to_string(
        sb.data()
            .join("runs/javascript-add-1@broken/1/harness_output.txt"),
    )
    .unwrap();
    assert!(excerpt.contains("Test suite failed to run"), "{excerpt}");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sb.data().join("report/results.json")).unwrap(),
    )
    .unwrap();
    let kept = results["jobs"][0]["harness_output"]
        .as_str()
        .unwrap_or_default();
    assert!(kept.contains("broken while loaded"), "{results:#}");
}
