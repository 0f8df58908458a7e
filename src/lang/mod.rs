//! The language table: what differs per language when the runner judges tests,
//! behind one trait, one file per language, and what a language needs around
//! its tests (setup inputs, build checks, importer layouts). How a test runner
//! lists its tests, runs one, reports results, what its names look like in the
//! inventory, and which test functions a hidden test file defines.
//!
//! The table also says what the integrity checks need to know of each
//! harness: the directories its tools write (build outputs and caches),
//! the files that configure or extend it (`conftest.py`, `build.rs`), the
//! internals a fix has no business naming, and how to plant a canary (a
//! must-fail test under a fresh name) in a hidden test file.
//!
//! - `mod.rs` (here): `Language`, its run model, the table and the lookup by
//!   `[acceptance]`, and the unions the integrity checks use: build dirs,
//!   harness files, test files, harness internals.
//! - `tooling.rs`: the [`Tooling`] trait: setup inputs and how they make a
//!   cache key, the scaffold a setup copy needs, links into the cache, which
//!   commands build, the build check, declared test names, enabling skipped
//!   tests, an Exercism track's job layout.
//! - `rust.rs`: cargo and libtest: the build and the test binaries, `--list`
//!   and `--exact` runs, `kind/target::name` names, `#[test]` functions of
//!   `tests/*.rs`, a one-test run's anomalies; its canary, a `#[test]` fn after
//!   one of the file's tests, in its module; build dir `target/`; harness files
//!   `build.rs`, `.cargo/config*`; internals `process::exit`, `.init_array`,
//!   `test result:`...
//! - `rust_scan.rs`: its lexer: tests, their spans and the places between them.
//! - `rust_twins.rs`: its twins: the body as a closure, then `panic!`.
//! - `rust_tooling.rs`: its `Tooling`: Cargo files as inputs, dependency tables
//!   as the key.
//! - `python.rs`: pytest: the pinned harness (the pristine configuration by
//!   `-c`, autoload off), the `--collect-only` listing and collection errors,
//!   node ids ↔ JUnit names, parameters of a case, `test*` functions of
//!   `test_*.py`; its canary, a module-level `test_` function; build dirs
//!   `__pycache__/`, `.pytest_cache/`; harness files `conftest.py`,
//!   `pytest.ini`, `setup.cfg`, `tox.ini`, `pyproject.toml`'s `[tool.pytest]`;
//!   internals `_pytest`, `sys.exit`...
//! - `python_scan.rs`: its logical lines, decorators and functions.
//! - `python_twins.rs`: its twins.
//! - `python_tooling.rs`: its `Tooling`: node ids and Django ids as declared
//!   names, requirements read from `pyproject.toml`/`setup.cfg`.
//! - `javascript.rs`: Jest with jest-junit: no listing, names `file::describe ›
//!   title`, `test`/`it` calls read statically, `xtest` enabled, `node_modules`
//!   linked from the cache; build dir `node_modules/`; harness files
//!   `jest.config*`, `babel.config*`, `.babelrc`; internals `process.exit`...;
//!   and its `Tooling`.
//! - `javascript_twins.rs`: its twins and canary, with a reading of each test
//!   call's callback.
//! - `twins.rs`: what every twin shares: fresh names and tokens, edits applied
//!   to a file's text.
//! - `canary.rs`: what every canary shares: a name in the file's style drawn
//!   with `fastrand`, an ordinary failing assertion.
//!
//! A language without canaries or twins leaves `plant_canary` and `plant_twins`
//! at their default (`None`).
//!
//! Pure: it builds argv lists and reads text, and never runs a command or reads
//! a file itself (the runner does, and hands it the output and text). Nothing
//! outside this folder matches on a language: the runner asks the table.

mod canary;
mod javascript;
mod javascript_twins;
mod python;
mod python_scan;
mod python_tooling;
mod python_twins;
mod rust;
mod rust_scan;
mod rust_tooling;
mod rust_twins;
mod tooling;
mod twins;

use std::path::Path;

use crate::manifest::Acceptance;
use crate::verdict::TestOutcome;

pub(crate) use javascript::JavaScript;
pub(crate) use python::Python;
pub(crate) use python_tooling::{PYTEST_JUNIT_FILE, declared_requirements};
pub(crate) use rust::Rust;
pub(crate) use tooling::{Exercise, Tooling, names_match, split_command};
pub(crate) use twins::{Twin, Twinned, Wanted};

/// How a language's tests are run for a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunModel {
    /// A build makes test binaries; each binary lists its tests and each
    /// test runs alone in its own process, under its own timeout (libtest).
    PerTest,
    /// The acceptance command runs every test at once and writes a results
    /// file; the runner lists the tests first (pytest).
    OneRun,
}

/// A test binary a build made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TestBinary {
    /// Prefix of its tests' inventory names (`test/acceptance`).
    pub label: String,
    /// The name it runs as (`argv[0]`).
    pub target: String,
    /// Relative to the build's tree.
    pub path: std::path::PathBuf,
    /// The package root (relative to the tree), where it runs.
    pub package: std::path::PathBuf,
}

/// What a listing said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Listing {
    /// The tests, in the runner's own names, in the order listed.
    pub tests: Vec<String>,
    /// Test files the runner could not collect (an import error), as the
    /// runner names them (`tests/test_x.py`).
    pub uncollectable: Vec<String>,
}

/// What a one-test run reported about its test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OneRun {
    Reported(TestOutcome),
    /// The process ended without reporting the test (an `exit(0)` before
    /// it, a crash, a name the binary does not have).
    NotReported,
    /// It reported something other than the one test it was asked for.
    Garbled(String),
}

/// Lines of a run's output kept from its first error on (see
/// [`Language::first_error`]), and bytes at most.
pub(crate) const EXCERPT_LINES: usize = 40;
pub(crate) const EXCERPT_BYTES: usize = 4096;

/// Where a run's first error is in its output (see
/// [`Language::first_error`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FirstError {
    /// The line the excerpt starts on.
    pub start: usize,
    /// What the error is, in one line.
    pub named: String,
    /// What failed: `the tests did not build`, `the tests did not collect`.
    pub what: &'static str,
}

/// One language's test runner.
pub(crate) trait Language: Sync {
    /// Its name in notes and docs (`rust`, `python`).
    fn name(&self) -> &'static str;

    /// Whether `acceptance` runs this language's test runner.
    fn runs(&self, acceptance: &Acceptance) -> bool;

    fn model(&self) -> RunModel;

    /// [`RunModel::OneRun`]: whether the runner can list its tests without
    /// running them (pytest can; Jest cannot, and its run's results are
    /// the inventory).
    fn lists(&self) -> bool {
        true
    }

    /// [`RunModel::PerTest`]: the build command for `command` and the
    /// arguments every test binary gets (what followed `--`).
    fn build_argv(&self, command: &[String]) -> (Vec<String>, Vec<String>) {
        (command.to_vec(), Vec::new())
    }

    /// [`RunModel::PerTest`]: the test binaries a build's output names,
    /// relative to `dir` (the build's tree, canonical); anything outside
    /// it is ignored.
    fn test_binaries(&self, _build_output: &str, _dir: &Path) -> Vec<TestBinary> {
        Vec::new()
    }

    /// The command that lists the tests `runner` would run: a test
    /// binary's arguments ([`RunModel::PerTest`], `argv[0]` first) or the
    /// acceptance command ([`RunModel::OneRun`]).
    fn list_argv(&self, runner: &[String]) -> Vec<String>;

    /// Reads a listing's standard output (`exit` is its exit code). An
    /// error means the runner could not list at all.
    fn read_listing(&self, stdout: &str, exit: Option<i32>) -> Result<Listing, ListingError>;

    /// [`RunModel::PerTest`]: the command that runs the one test `name`
    /// (as listed) of `runner`, ignored tests included.
    fn run_one_argv(&self, runner: &[String], _name: &str) -> Vec<String> {
        runner.to_vec()
    }

    /// [`RunModel::PerTest`]: what a one-test run's output says of `name`.
    fn read_one(&self, _name: &str, _stdout: &str) -> OneRun {
        OneRun::NotReported
    }

    /// [`RunModel::PerTest`]: what the test `name` printed of its own in a
    /// one-test run that did not pass (`stdout` is the run's): the part of
    /// the output the harness gives the test. `None` when the harness marks
    /// out nothing; the runner then keeps the run's last output.
    fn failure_output(&self, _name: &str, _stdout: &str) -> Option<String> {
        None
    }

    /// Where a run that failed before reporting its tests says why: among
    /// `lines` of its output, the line its first error starts on and the
    /// line that names it (rustc's first `error[`, pytest's `ERROR
    /// collecting`, Jest's `Test suite failed to run`). `None` when the
    /// output shows none.
    fn first_error(&self, _lines: &[&str]) -> Option<FirstError> {
        None
    }

    /// The inventory name of `listed` (a name as the runner lists it) in
    /// the test binary labelled `unit` (empty for [`RunModel::OneRun`]).
    fn inventory_name(&self, unit: &str, listed: &str) -> String;

    /// The runner's own name of inventory name `name`, when it belongs to
    /// the unit labelled `unit`: the inverse of [`Language::inventory_name`].
    fn listed_name<'a>(&self, unit: &str, name: &'a str) -> Option<&'a str>;

    /// The test function an inventory name is a case of: itself, or
    /// without its parameters (`tests.t::f[1]` is a case of `tests.t::f`).
    fn function_of<'a>(&self, name: &'a str) -> &'a str {
        name
    }

    /// Whether `rel` (a path in the acceptance dir, `/`-separated) is a
    /// test file whose tests [`Language::defined_tests`] can read.
    fn is_test_file(&self, rel: &str) -> bool;

    /// The inventory names of the test functions the test file `rel`
    /// defines (`text` is its content), read without running anything.
    fn defined_tests(&self, rel: &str, text: &str) -> Vec<String>;

    /// Whether the inventory name `name` is a test of the test file `rel`
    /// (one [`Language::is_test_file`] accepts): what ties a canary's file
    /// to the other tests a run reported of it (a canary missing from a
    /// file whose other tests were reported is forged), and which files an
    /// acceptance run plants canaries in. A language with canaries must
    /// say; the default knows no file's tests (its canaries would then
    /// never be planted at acceptance).
    fn test_of_file(&self, _rel: &str, _name: &str) -> bool {
        false
    }

    /// [`RunModel::PerTest`]: anomalies of a one-test run's output that do
    /// not change what it reported but do not come from an honest harness
    /// (no line for the test the summary counts, output after the
    /// summary), in one line.
    fn one_run_anomaly(&self, _name: &str, _stdout: &str) -> Option<String> {
        None
    }

    /// Why canaries cannot run with the acceptance `command` (it stops
    /// at its first failure, which a canary always is), if they cannot.
    fn canaries_unfit(&self, _command: &[String]) -> Option<String> {
        None
    }

    /// Plants a canary in the hidden test file `rel` (`text` is its
    /// content): one test that must fail, an ordinary assertion with an
    /// ordinary failure message, under a name in the style of the file's
    /// own test names that the file does not use, at a position among its
    /// tests, all drawn from `rng`. `None` when the language has no
    /// canaries or the file's tests cannot be found in `text`.
    fn plant_canary(&self, _rel: &str, _text: &str, _rng: &mut fastrand::Rng) -> Option<Canary> {
        None
    }

    /// Renames the tests of the hidden test file `rel` (`text` is its
    /// content) to fresh names, and plants `wanted(name)` twins of each
    /// (by the inventory name of its function), each at a random place
    /// among its siblings (see `twins.rs`). A test whose name is written
    /// anywhere else (in `text`, or in `also`: the acceptance command) keeps
    /// it. `None` when the language has no twins or finds no test in the
    /// file.
    fn plant_twins(
        &self,
        _rel: &str,
        _text: &str,
        _wanted: Wanted<'_>,
        _also: &str,
        _rng: &mut fastrand::Rng,
    ) -> Option<Twinned> {
        None
    }

    /// [`RunModel::OneRun`]: the acceptance `command` narrowed to the tests
    /// `names` (inventory names of this run), to run them again alone;
    /// `None` when the runner cannot select tests.
    fn select_argv(&self, _command: &[String], _names: &[String]) -> Option<Vec<String>> {
        None
    }

    /// The acceptance `command` with the harness pinned for a check: the
    /// runner's own options (the pristine configuration, copied outside
    /// the tree, in place of anything the tree holds) and the files the
    /// runner writes for it. `None` when the language pins nothing (or
    /// the command already names its configuration).
    fn pin_harness(&self, _command: &[String], _ctx: &PinContext<'_>) -> Option<Pinned> {
        None
    }

    /// Variables every check's commands run with (the manifest's `[env]`
    /// wins): what keeps the harness from loading anything by itself.
    fn harness_env(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The text laid on a check copy for `rel` (`patched`, as the patch
    /// has it), with what configures the harness in a file that is not
    /// the harness's alone taken from `pristine` (the source's version,
    /// `None` where it has none): `Cargo.toml`'s `[patch]` or `[[test]]`,
    /// `package.json`'s `jest` key. `None`: lay it as it is.
    fn pin_file(&self, _rel: &str, _patched: &str, _pristine: Option<&str>) -> Option<String> {
        None
    }

    /// Whether `rel` is a file the language's interpreter runs at startup
    /// wherever it lies on its path (`.pth`, `sitecustomize.py`): a patch
    /// carrying one is rejected unless `editable` names it exactly.
    fn is_startup_file(&self, _rel: &str) -> bool {
        false
    }

    /// Directories (one path component) that this language's tools write
    /// in a tree: build outputs and caches. The integrity checks never look
    /// inside them, and a verify-only job's workspace keeps them.
    fn build_dirs(&self) -> &'static [&'static str] {
        &[]
    }

    /// Files this language's build writes beside the sources when the
    /// source has none (`Cargo.lock`): build output, not a change.
    fn build_outputs(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether `rel` is a file that configures or extends this language's
    /// test harness (how tests are collected, run or reported): a patch
    /// touching one is a tamper signal, and acceptance uses the pristine
    /// (or hidden) version unless an `editable` entry names it exactly.
    fn is_harness_file(&self, _rel: &str) -> bool {
        false
    }

    /// Harness configuration inside a file that is not the harness's
    /// alone (`pyproject.toml`'s `[tool.pytest...]` tables): the
    /// configuration found, so a change to it is signalled (the file is
    /// never dropped).
    fn harness_config(&self, _rel: &str, _text: &str) -> Option<String> {
        None
    }

    /// Strings a change to the code under test has no business naming:
    /// the harness's internals and the ways out of it.
    fn harness_internals(&self) -> &'static [&'static str] {
        &[]
    }
}

/// What a check needs to pin a harness (see [`Language::pin_harness`]).
pub(crate) struct PinContext<'a> {
    /// The check's copy, where the harness runs.
    pub tree: &'a Path,
    /// A runner-owned directory outside the tree, readable by the
    /// harness, where the files of [`Pinned`] go.
    pub config_dir: &'a Path,
    /// `[acceptance] plugins`.
    pub plugins: &'a [String],
    /// A file of the hidden tests or, failing that, of the pristine
    /// source, by relative path: never the patch's.
    pub pristine: &'a dyn Fn(&str) -> Option<String>,
}

/// A harness pinned for a check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pinned {
    pub command: Vec<String>,
    /// Files written into the config dir: name and content.
    pub files: Vec<(String, String)>,
}

/// A canary planted in a hidden test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Canary {
    /// The file's content with the canary in it.
    pub text: String,
    /// The canary's inventory name.
    pub name: String,
}

/// Every language the runner knows.
const LANGUAGES: &[&dyn Language] = &[&Rust, &Python, &JavaScript];

/// Every language's tooling, by the same names.
const TOOLING: &[&dyn Tooling] = &[&Rust, &Python, &JavaScript];

/// The language named `name` (as its tooling names it).
pub(crate) fn language(name: &str) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|lang| lang.name() == name)
}

/// The tooling of the language named `name` (`rust`, `python`,
/// `javascript`).
pub(crate) fn tooling(name: &str) -> Option<&'static dyn Tooling> {
    TOOLING.iter().copied().find(|t| t.tooling_name() == name)
}

/// The tooling of the language whose test runner `acceptance` runs.
pub(crate) fn tooling_for(acceptance: &Acceptance) -> Option<&'static dyn Tooling> {
    for_acceptance(acceptance).and_then(|lang| tooling(lang.name()))
}

/// The language whose test runner `acceptance` runs, if the table knows it
/// (a JUnit file written by anything else, or `results = "exit"`, has none).
pub(crate) fn for_acceptance(acceptance: &Acceptance) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|lang| lang.runs(acceptance))
}

/// Internals every harness shares: a process re-running its own binary.
const COMMON_INTERNALS: &[&str] = &["/proc/self/exe"];

/// The build dirs of every language in the table (a job without
/// `[acceptance]` has no language, and its workspace may hold any).
pub(crate) fn build_dirs() -> Vec<&'static str> {
    let mut dirs: Vec<&'static str> = LANGUAGES
        .iter()
        .flat_map(|lang| lang.build_dirs().iter().copied())
        .collect();
    dirs.sort_unstable();
    dirs.dedup();
    dirs
}

/// Why a test runner's listing says nothing of its tests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ListingError {
    /// `runner` (`pytest`, `the test binary`) exited `exit` (`None`:
    /// killed) instead of listing `tests` (`the tests`, `its tests`).
    #[error("{runner} could not list {tests} ({})", match .exit {
        Some(code) => format!("exit {code}"),
        None => "killed".to_string(),
    })]
    Failed {
        runner: &'static str,
        tests: &'static str,
        exit: Option<i32>,
    },
    /// The runner has no way to list.
    #[error("{0}")]
    Unsupported(&'static str),
}

/// Every language's build outputs (see [`Language::build_outputs`]).
pub(crate) fn build_outputs() -> Vec<&'static str> {
    let mut files: Vec<&'static str> = LANGUAGES
        .iter()
        .flat_map(|lang| lang.build_outputs().iter().copied())
        .collect();
    files.sort_unstable();
    files.dedup();
    files
}

/// Whether `rel` configures or extends any known test harness.
pub(crate) fn is_harness_file(rel: &str) -> bool {
    LANGUAGES.iter().any(|lang| lang.is_harness_file(rel))
}

/// Whether `rel` is a file an interpreter of the table runs at startup.
pub(crate) fn is_startup_file(rel: &str) -> bool {
    LANGUAGES.iter().any(|lang| lang.is_startup_file(rel))
}

/// Whether `rel` is a test file by any language's pattern.
pub(crate) fn is_any_test_file(rel: &str) -> bool {
    LANGUAGES.iter().any(|lang| lang.is_test_file(rel))
}

/// Harness configuration any language finds in the shared file `rel`.
pub(crate) fn harness_config(rel: &str, text: &str) -> Option<String> {
    LANGUAGES
        .iter()
        .find_map(|lang| lang.harness_config(rel, text))
}

/// Every harness internal the table knows, in order, without repeats.
pub(crate) fn harness_internals() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = COMMON_INTERNALS.to_vec();
    for name in LANGUAGES
        .iter()
        .flat_map(|lang| lang.harness_internals().iter().copied())
    {
        if !all.contains(&name) {
            all.push(name);
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{Baseline, ResultsFormat};

    fn acceptance(command: &[&str], results: Option<ResultsFormat>) -> Acceptance {
        Acceptance {
            dir: "/a".into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            baseline: Baseline::MustFail,
            results,
            test_timeout: None,
            fail_to_pass: Vec::new(),
            pass_to_pass: Vec::new(),
            flaky: Vec::new(),
            canary: true,
            twins: true,
            plugins: Vec::new(),
            strict_integrity: false,
        }
    }

    #[test]
    fn the_table_picks_the_language_by_command_and_results() {
        let cargo = acceptance(&["cargo", "test", "--offline"], None);
        assert_eq!(for_acceptance(&cargo).map(|l| l.name()), Some("rust"));
        let junit = Some(ResultsFormat::Junit("r.xml".into()));
        let pytest = acceptance(&["python3", "-m", "pytest", "-q"], junit.clone());
        assert_eq!(for_acceptance(&pytest).map(|l| l.name()), Some("python"));
        let bare = acceptance(&["pytest"], junit.clone());
        assert_eq!(for_acceptance(&bare).map(|l| l.name()), Some("python"));
        assert!(for_acceptance(&acceptance(&["sh", "judge.sh"], junit)).is_none());
        let exit = acceptance(&["python3", "-m", "pytest"], Some(ResultsFormat::Exit));
        assert!(for_acceptance(&exit).is_none());
        let jest = acceptance(
            &["node", "node_modules/jest/bin/jest.js", "--ci"],
            Some(ResultsFormat::Junit("j.xml".into())),
        );
        assert_eq!(for_acceptance(&jest).map(|l| l.name()), Some("javascript"));
        assert_eq!(
            tooling_for(&jest).map(|t| t.tooling_name()),
            Some("javascript")
        );
    }

    #[test]
    fn the_integrity_lists_cover_every_language_and_the_unlisted_harnesses() {
        let dirs = build_dirs();
        for dir in ["target", "__pycache__", "node_modules", ".pytest_cache"] {
            assert!(dirs.contains(&dir), "{dir} in {dirs:?}");
        }
        for file in [
            "conftest.py",
            "tests/conftest.py",
            "pytest.ini",
            "setup.cfg",
            "tox.ini",
            "build.rs",
            ".cargo/config.toml",
            "sub/.cargo/config",
            "jest.config.js",
        ] {
            assert!(is_harness_file(file), "{file}");
        }
        for file in [
            "src/lib.rs",
            "calc.py",
            "pyproject.toml",
            "Cargo.toml",
            "src/build.rs.txt",
        ] {
            assert!(!is_harness_file(file), "{file}");
        }
        assert!(is_any_test_file("tests/acceptance.rs"));
        assert!(is_any_test_file("tests/test_calc.py"));
        assert!(!is_any_test_file("src/lib.rs"));
        let internals = harness_internals();
        for name in [
            "/proc/self/exe",
            "_pytest",
            "pytest_runtest",
            "sys.exit",
            "process::exit",
            "test result:",
        ] {
            assert!(internals.contains(&name), "{name}");
        }
        assert!(
            harness_config(
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"-p x\"\n"
            )
            .is_some()
        );
        assert!(harness_config("pyproject.toml", "[project]\nname = \"x\"\n").is_none());
    }
}
