//! Rust: `cargo test` builds the test binaries (libtest), each lists its
//! tests (`--list --format terse`) and runs one alone (`--exact NAME`).
//! Inventory names are `kind/target::path::test` (`test/acceptance::sums`,
//! `lib/mycrate::tests::small`).

use std::path::Path;

use super::canary::{draw_failing, draw_name, style_of};
use super::rust_scan::{scan, scan_tests};
use super::twins::{Twinned, Wanted};
use super::{Canary, FirstError, Language, Listing, ListingError, OneRun, RunModel, TestBinary};
use crate::manifest::{Acceptance, ResultsFormat};
use crate::verdict::{TestOutcome, libtest_failure, libtest_summary};

/// cargo and libtest.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Rust;

impl Language for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn runs(&self, acceptance: &Acceptance) -> bool {
        acceptance.results_format() == ResultsFormat::Libtest
    }

    fn model(&self) -> RunModel {
        RunModel::PerTest
    }

    /// `cargo test [ARGS] -- [TEST_ARGS]` builds with `--no-run` and the
    /// artifacts as JSON on stdout; each binary gets `TEST_ARGS`.
    fn build_argv(&self, command: &[String]) -> (Vec<String>, Vec<String>) {
        let split = command.iter().position(|a| a == "--");
        let (cargo, tests) = match split {
            Some(at) => (&command[..at], &command[at + 1..]),
            None => (command, &[][..]),
        };
        let mut build = cargo.to_vec();
        build.push("--no-run".into());
        build.push("--message-format=json-render-diagnostics".into());
        (build, tests.to_vec())
    }

    fn first_error(&self, lines: &[&str]) -> Option<FirstError> {
        let at = |prefix: &str| {
            lines
                .iter()
                .position(|l| l.trim_start().starts_with(prefix))
        };
        let start = at("error[").or_else(|| at("error:"))?;
        Some(FirstError {
            start,
            named: lines[start].trim().to_string(),
            what: "the tests did not build",
        })
    }

    fn test_binaries(&self, build_output: &str, dir: &Path) -> Vec<TestBinary> {
        test_binaries(build_output, dir)
    }

    /// Ignored tests are listed too: they run, and count, like the others.
    fn list_argv(&self, runner: &[String]) -> Vec<String> {
        let mut argv = runner.to_vec();
        argv.extend(["--list", "--format", "terse"].map(String::from));
        argv
    }

    /// `NAME: test` lines; benchmarks are not tests.
    fn read_listing(&self, stdout: &str, exit: Option<i32>) -> Result<Listing, ListingError> {
        if exit != Some(0) {
            return Err(ListingError::Failed {
                runner: "the test binary",
                tests: "its tests",
                exit,
            });
        }
        let tests = stdout
            .lines()
            .filter_map(|line| line.trim_end().strip_suffix(": test"))
            .map(String::from)
            .collect();
        Ok(Listing {
            tests,
            uncollectable: Vec::new(),
        })
    }

    /// The pretty format, whatever `TEST_ARGS` asked for, so the one
    /// test's result reads the same every time.
    fn run_one_argv(&self, runner: &[String], name: &str) -> Vec<String> {
        let mut argv = runner.to_vec();
        argv.extend(["--exact", name, "--include-ignored", "--format", "pretty"].map(String::from));
        argv
    }

    /// The run's summary (the last one: a test may print a line that looks
    /// like one before it) names exactly one test, passed or failed.
    fn read_one(&self, _name: &str, stdout: &str) -> OneRun {
        match libtest_summary(stdout) {
            None => OneRun::NotReported,
            Some(Err(why)) => OneRun::Garbled(why.to_string()),
            Some(Ok(counts)) => match counts {
                (0, 0, 0) => OneRun::NotReported,
                (1, 0, 0) => OneRun::Reported(TestOutcome::Passed),
                (0, 1, 0) => OneRun::Reported(TestOutcome::Failed),
                (0, 0, 1) => OneRun::Reported(TestOutcome::Skipped),
                (p, f, i) => OneRun::Garbled(format!(
                    "one test asked for, {p} passed, {f} failed and {i} ignored reported"
                )),
            },
        }
    }

    /// libtest's `---- NAME stdout ----` block: the panic message and
    /// what the test printed.
    fn failure_output(&self, name: &str, stdout: &str) -> Option<String> {
        libtest_failure(name, stdout)
    }

    fn inventory_name(&self, unit: &str, listed: &str) -> String {
        format!("{unit}::{listed}")
    }

    fn listed_name<'a>(&self, unit: &str, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(unit)?.strip_prefix("::")
    }

    /// `tests/NAME.rs` and `tests/NAME/main.rs`: cargo's integration test
    /// targets `NAME` (unless `Cargo.toml` renames them).
    fn is_test_file(&self, rel: &str) -> bool {
        target_of(rel).is_some()
    }

    fn defined_tests(&self, rel: &str, text: &str) -> Vec<String> {
        let Some(target) = target_of(rel) else {
            return Vec::new();
        };
        scan_tests(text)
            .into_iter()
            .map(|path| format!("test/{target}::{path}"))
            .collect()
    }

    fn test_of_file(&self, rel: &str, name: &str) -> bool {
        target_of(rel).is_some_and(|target| {
            name.strip_prefix("test/")
                .and_then(|rest| rest.strip_prefix(target))
                .is_some_and(|rest| rest.starts_with("::"))
        })
    }

    /// libtest prints nothing after its summary, and a passed test has its
    /// own `test NAME ... ok` line before it.
    fn one_run_anomaly(&self, name: &str, stdout: &str) -> Option<String> {
        let lines: Vec<&str> = stdout.lines().map(str::trim_end).collect();
        let end = lines.iter().rposition(|l| l.starts_with("test result: "))?;
        if let Some(extra) = lines[end + 1..].iter().find(|l| !l.trim().is_empty()) {
            let shown: String = extra.chars().take(80).collect();
            return Some(format!("output after the harness's summary: {shown:?}"));
        }
        // A `should_panic` test's line says so.
        let own = [
            format!("test {name} ... ok"),
            format!("test {name} - should panic ... ok"),
        ];
        let reported = lines[..end].iter().any(|l| own.iter().any(|o| o == l));
        match libtest_summary(stdout) {
            Some(Ok((1, 0, 0))) if !reported => Some(
                "the summary counts one test passed, but no line reports this test passed".into(),
            ),
            _ => None,
        }
    }

    /// A `#[test]` function after one of the file's tests (or before the
    /// first), in its module, asserting `left + right == expected` where
    /// it is not.
    fn plant_canary(&self, rel: &str, text: &str, rng: &mut fastrand::Rng) -> Option<Canary> {
        let target = target_of(rel)?;
        let found = scan(text);
        if found.tests.is_empty() || found.slots.is_empty() {
            return None;
        }
        let own: Vec<&str> = found
            .tests
            .iter()
            .map(|path| path.rsplit("::").next().unwrap_or(path))
            .collect();
        let function = draw_name(style_of(&own, ""), &own, text, rng);
        let slot = &found.slots[rng.usize(..found.slots.len())];
        let indent = "    ".repeat(slot.modules.len());
        let failing = draw_failing(rng);
        let body = [
            format!("fn {function}() {{"),
            format!("    let expected = {};", failing.expected),
            format!("    let actual = {} + {};", failing.left, failing.right),
            format!("    assert_eq!(actual, expected, \"{}\");", failing.message),
            "}".to_string(),
        ];
        let mut block = "#[test]".to_string();
        for line in body {
            block.push('\n');
            block.push_str(&indent);
            block.push_str(&line);
        }
        let insert = if slot.before {
            format!("{block}\n\n{indent}")
        } else {
            format!("\n\n{indent}{block}")
        };
        let at = slot.at.min(text.len());
        let mut planted = String::with_capacity(text.len() + insert.len());
        planted.push_str(text.get(..at)?);
        planted.push_str(&insert);
        planted.push_str(text.get(at..)?);
        let mut path = slot.modules.clone();
        path.push(function);
        Some(Canary {
            text: planted,
            name: format!("test/{target}::{}", path.join("::")),
        })
    }

    fn plant_twins(
        &self,
        rel: &str,
        text: &str,
        wanted: Wanted<'_>,
        also: &str,
        rng: &mut fastrand::Rng,
    ) -> Option<Twinned> {
        super::rust_twins::plant(target_of(rel)?, text, wanted, also, rng)
    }

    fn build_dirs(&self) -> &'static [&'static str] {
        &["target"]
    }

    /// Cargo writes a lock file for a package that ships none.
    fn build_outputs(&self) -> &'static [&'static str] {
        &["Cargo.lock"]
    }

    /// Build scripts (run before the tests are compiled), cargo's
    /// configuration (`runner`, `rustflags`, `[env]`) and the toolchain
    /// file, at any depth.
    fn is_harness_file(&self, rel: &str) -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        let file = parts.last().copied().unwrap_or(rel);
        file == "build.rs"
            || file.starts_with("rust-toolchain")
            || parts
                .windows(2)
                .any(|pair| pair[0] == ".cargo" && pair[1].starts_with("config"))
    }

    /// A `Cargo.toml` keeps the pristine version's harness: its tables and
    /// keys that decide what builds and runs the tests (`[patch]`,
    /// `[replace]`, `[[test]]`, `[[bench]]`, `[profile]`, and
    /// `build`, `autotests`, `autobenches` of `[package]`, `harness` and
    /// `test` of `[lib]`); the rest (dependencies, features, metadata) is
    /// the patch's.
    fn pin_file(&self, rel: &str, patched: &str, pristine: Option<&str>) -> Option<String> {
        if rel.rsplit('/').next() != Some("Cargo.toml") {
            return None;
        }
        let mut doc: toml::Table = patched.parse().ok()?;
        let old: toml::Table = pristine.and_then(|p| p.parse().ok()).unwrap_or_default();
        let mut changed = false;
        for key in ["patch", "replace", "test", "bench", "profile"] {
            changed |= pin_key(&mut doc, &old, &[key]);
        }
        for key in ["build", "autotests", "autobenches"] {
            changed |= pin_key(&mut doc, &old, &["package", key]);
        }
        for key in ["harness", "test"] {
            changed |= pin_key(&mut doc, &old, &["lib", key]);
        }
        if !changed {
            return None;
        }
        toml::to_string(&doc).ok()
    }

    /// Ending the test process early, running code before `main`, talking
    /// to libtest's own command line or printing its summary.
    fn harness_internals(&self) -> &'static [&'static str] {
        &[
            "process::exit",
            ".init_array",
            "#[ctor",
            "ctor::ctor",
            "--list",
            "--exact",
            "test result:",
        ]
    }
}

/// Sets the key at `path` of `doc` to what `old` has there (removes it
/// where `old` has none); whether that changed `doc`.
fn pin_key(doc: &mut toml::Table, old: &toml::Table, path: &[&str]) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut theirs = Some(old);
    for parent in parents {
        theirs = theirs
            .and_then(|t| t.get(*parent))
            .and_then(toml::Value::as_table);
    }
    let wanted = theirs.and_then(|t| t.get(*last)).cloned();
    let mut ours = doc;
    for parent in parents {
        match ours.get_mut(*parent).and_then(toml::Value::as_table_mut) {
            Some(table) => ours = table,
            None => return false,
        }
    }
    if ours.get(*last) == wanted.as_ref() {
        return false;
    }
    match wanted {
        Some(value) => {
            ours.insert((*last).to_string(), value);
        }
        None => {
            ours.remove(*last);
        }
    }
    true
}

/// The integration test target a file in `tests/` is.
fn target_of(rel: &str) -> Option<&str> {
    let rest = rel.strip_prefix("tests/")?;
    match rest.split_once('/') {
        None => rest.strip_suffix(".rs"),
        Some((dir, "main.rs")) => Some(dir),
        Some(_) => None,
    }
    .filter(|name| !name.is_empty())
}

/// Test executables from cargo's JSON messages, relative to `dir`.
fn test_binaries(stdout: &str, dir: &Path) -> Vec<TestBinary> {
    let mut found = Vec::new();
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
            continue;
        }
        let (Some(executable), Some(target)) = (
            message["executable"].as_str(),
            message["target"]["name"].as_str(),
        ) else {
            continue;
        };
        let kind = message["target"]["kind"][0].as_str().unwrap_or("test");
        let Ok(path) = Path::new(executable).strip_prefix(dir) else {
            continue;
        };
        let package = message["manifest_path"]
            .as_str()
            .and_then(|m| Path::new(m).parent())
            .and_then(|p| p.strip_prefix(dir).ok())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        found.push(TestBinary {
            label: format!("{kind}/{target}"),
            target: target.to_string(),
            path: path.to_path_buf(),
            package,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_gets_no_run_and_json_and_binaries_get_what_follows_the_dashes() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let (build, tests) = Rust.build_argv(&argv("cargo test --offline -- --test-threads=1"));
        assert_eq!(
            build,
            argv("cargo test --offline --no-run --message-format=json-render-diagnostics")
        );
        assert_eq!(tests, ["--test-threads=1"]);
    }

    #[test]
    fn test_binaries_are_read_from_cargo_messages_inside_the_copy_only() {
        let dir = Path::new("/c");
        let out = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"dep","kind":["lib"]},"profile":{"test":false},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","manifest_path":"/c/Cargo.toml","target":{"name":"sum","kind":["test"]},"profile":{"test":true},"executable":"/c/target/debug/deps/sum-1"}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"x","kind":["lib"]},"profile":{"test":true},"executable":"/etc/evil"}"#,
            "\nnot json\n"
        );
        let found = Rust.test_binaries(out, dir);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].label, "test/sum");
        assert_eq!(found[0].path, Path::new("target/debug/deps/sum-1"));
    }

    #[test]
    fn a_listing_names_tests_not_benchmarks_and_a_failed_one_is_an_error() {
        let out = "a: test\nm::b: test\nbench_x: benchmark\n";
        let listing = Rust.read_listing(out, Some(0)).unwrap();
        assert_eq!(listing.tests, ["a", "m::b"]);
        assert!(Rust.read_listing(out, Some(101)).is_err());
        assert!(Rust.read_listing("", None).is_err());
        assert!(Rust.read_listing("", Some(0)).unwrap().tests.is_empty());
    }

    #[test]
    fn one_run_reads_its_last_summary() {
        let ok = "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n";
        assert_eq!(
            Rust.read_one("a", ok),
            OneRun::Reported(TestOutcome::Passed)
        );
        let failed = "test a ... FAILED\n\nfailures:\n\n---- a stdout ----\ntest result: ok. 1 passed; 0 failed; 0 ignored\n\nfailures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(
            Rust.read_one("a", failed),
            OneRun::Reported(TestOutcome::Failed)
        );
        assert_eq!(Rust.read_one("a", "running 1 test\n"), OneRun::NotReported);
        let none = "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out\n";
        assert_eq!(Rust.read_one("gone", none), OneRun::NotReported);
        let two = "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert!(matches!(Rust.read_one("a", two), OneRun::Garbled(_)));
        let argv = Rust.run_one_argv(&["sum".into()], "m::a");
        assert_eq!(
            argv,
            [
                "sum",
                "--exact",
                "m::a",
                "--include-ignored",
                "--format",
                "pretty"
            ]
        );
    }

    #[test]
    fn names_carry_the_binary_label_both_ways() {
        let name = Rust.inventory_name("test/acceptance", "m::a");
        assert_eq!(name, "test/acceptance::m::a");
        assert_eq!(Rust.listed_name("test/acceptance", &name), Some("m::a"));
        assert_eq!(Rust.listed_name("test/acc", &name), None);
        assert_eq!(Rust.listed_name("lib/x", &name), None);
    }

    #[test]
    fn a_canary_is_a_fresh_failing_test_among_the_files_tests() {
        let text = "use x::sum;\n\n#[test]\nfn sums_to_n() {\n    assert_eq!(sum(4), 10);\n}\n\n#[test]\nfn doubles() {\n    assert_eq!(2 * 3, 6);\n}\n";
        let mut names = std::collections::BTreeSet::new();
        for seed in 0..30 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let canary = Rust
                .plant_canary("tests/acceptance.rs", text, &mut rng)
                .unwrap();
            let function = canary.name.strip_prefix("test/acceptance::").unwrap();
            assert!(!text.contains(function), "{function}");
            let tests = Rust.defined_tests("tests/acceptance.rs", &canary.text);
            assert_eq!(tests.len(), 3, "{}", canary.text);
            assert!(tests.contains(&canary.name));
            assert!(canary.text.contains("assert_eq!(actual, expected"));
            assert!(Rust.test_of_file("tests/acceptance.rs", &canary.name));
            names.insert(canary.name);
        }
        assert!(names.len() > 20);
        // A test inside a module gets its canary in the module.
        let nested = "mod m {\n    #[test]\n    fn a() {}\n}\n";
        let mut rng = fastrand::Rng::with_seed(3);
        let canary = Rust.plant_canary("tests/t.rs", nested, &mut rng).unwrap();
        assert!(canary.name.starts_with("test/t::m::"), "{}", canary.name);
        assert_eq!(Rust.defined_tests("tests/t.rs", &canary.text).len(), 2);
        assert!(
            Rust.plant_canary("tests/t.rs", "fn helper() {}\n", &mut rng)
                .is_none()
        );
        assert!(Rust.plant_canary("src/lib.rs", text, &mut rng).is_none());
        assert!(!Rust.test_of_file("tests/acceptance.rs", "test/acceptance2::x"));
    }

    #[test]
    fn a_one_test_run_that_says_more_or_less_than_libtest_is_an_anomaly() {
        let honest = "\nrunning 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n\n";
        assert_eq!(Rust.one_run_anomaly("a", honest), None);
        let bare = "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert!(Rust.one_run_anomaly("a", bare).is_some());
        let other = "test b ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert!(Rust.one_run_anomaly("a", other).is_some());
        let should_panic = "\nrunning 1 test\ntest p - should panic ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n\n";
        assert_eq!(Rust.one_run_anomaly("p", should_panic), None);
        let after = format!("{honest}forged\n");
        assert!(Rust.one_run_anomaly("a", &after).unwrap().contains("after"));
        assert_eq!(Rust.one_run_anomaly("a", "running 1 test\n"), None);
    }

    #[test]
    fn a_cargo_toml_keeps_the_pristine_harness_and_the_patch_s_dependencies() {
        let pristine = "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\n";
        let patched = "[package]\nname = \"x\"\nversion = \"0.1.0\"\nbuild = \"src/b.rs\"\n\n[dependencies]\nitoa = \"1\"\n\n[[test]]\nname = \"acceptance\"\nharness = false\n\n[patch.crates-io]\nitoa = { path = \"vendor/itoa\" }\n\n[profile.test]\ndebug-assertions = false\n";
        let pinned = Rust
            .pin_file("Cargo.toml", patched, Some(pristine))
            .unwrap();
        let doc: toml::Table = pinned.parse().unwrap();
        assert!(doc["dependencies"].get("itoa").is_some(), "{pinned}");
        for gone in ["test", "patch", "profile"] {
            assert!(doc.get(gone).is_none(), "{pinned}");
        }
        assert!(doc["package"].get("build").is_none(), "{pinned}");
        assert_eq!(Rust.pin_file("Cargo.toml", pristine, Some(pristine)), None);
        assert_eq!(Rust.pin_file("src/lib.rs", patched, None), None);
        assert!(Rust.is_harness_file("rust-toolchain.toml"));
    }

    #[test]
    fn hidden_files_map_to_their_integration_targets() {
        assert!(Rust.is_test_file("tests/acceptance.rs"));
        assert!(Rust.is_test_file("tests/suite/main.rs"));
        assert!(!Rust.is_test_file("tests/suite/helper.rs"));
        assert!(!Rust.is_test_file("src/lib.rs"));
        assert_eq!(
            Rust.defined_tests("tests/acceptance.rs", "#[test]\nfn sums() {}\n"),
            ["test/acceptance::sums"]
        );
        assert_eq!(
            Rust.defined_tests("tests/suite/main.rs", "#[test] fn a() {}"),
            ["test/suite::a"]
        );
    }
}
