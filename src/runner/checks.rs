//! Baseline and acceptance runs: the acceptance command on a clean copy of
//! the pristine source (plus, for acceptance, the agent's patch), with the
//! acceptance dir overlaid. The agent never sees these copies.
//!
//! The copies go through directory descriptors ([`crate::beneath`]): names
//! are carried exactly, symlinks are copied as symlinks and never followed,
//! and the source and the acceptance dir are only ever read.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::cache_use::CacheUse;
use super::carried::Carried;
use super::commands::{AttemptCommands, policy_for};
use super::patch::PatchError;
use crate::agent::copy_tree;
use crate::beneath::{AtPath, Dir, overlay};
use crate::cache::{LayerError, dependency_hashes};
use crate::cancel::CancelToken;
use crate::exec::{AllowList, ExecError, ExecOutcome};
use crate::manifest::{Acceptance, Manifest, ResultsFormat};
use crate::verdict::{TestResults, parse_junit, parse_libtest};

/// Failures preparing a check (not a verdict).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("failed to prepare {}: {source}", .path.display())]
    Prepare {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to copy {} to {}: {source}", .from.display(), .to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: AtPath,
    },
    #[error("failed to apply the agent's patch: {0}")]
    Patch(#[from] PatchError),
    #[error("bad acceptance command: {0}")]
    Rule(String),
    #[error("failed to copy the dependency layer: {0}")]
    Layer(#[from] LayerError),
    #[error(transparent)]
    Exec(#[from] ExecError),
}

/// A check's run: what the executor reported, and the per-test results
/// when the job's results format reads them.
#[derive(Debug)]
pub struct CheckRun {
    /// The commands run, in order (the build, then each test binary, for
    /// `libtest`; the acceptance command otherwise).
    pub commands: Vec<ExecOutcome>,
    /// Per-test results, `None` with `results = "exit"`.
    pub results: Option<TestResults>,
    /// Why results are incomplete or absent, in one line (a failed build,
    /// a missing JUnit file, a summary that disagrees with its lines).
    pub note: Option<String>,
    /// The hashes of the dependencies' build units, read from cargo's
    /// messages (`libtest` only): what a trusted build can give the
    /// dependency layer.
    pub dependency_hashes: BTreeSet<String>,
}

impl CheckRun {
    /// Whether any command was cancelled.
    pub fn cancelled(&self) -> bool {
        self.commands.iter().any(|c| c.cancelled)
    }

    /// The exit-status verdict (`results = "exit"` only).
    pub fn exit_passed(&self) -> bool {
        !self.commands.is_empty() && self.commands.iter().all(ExecOutcome::success)
    }
}

/// Bytes kept of a build's artifact list and of a test binary's output:
/// the runner reads these whole, so they must not be cut.
const RESULTS_OUTPUT_CAP: usize = 8 << 20;
/// Largest test binary copied out of the build.
const MAX_TEST_BINARY: u64 = 1 << 30;
/// Largest JUnit file read.
const MAX_JUNIT: u64 = crate::verdict::MAX_JUNIT_BYTES as u64;

/// Builds `dir` afresh: pristine source, then `patch` (the runner's copy
/// of the changed files, editable paths only), then the acceptance dir on top; runs the acceptance command there
/// as the job's results format says, and writes the output to `log`.
/// `libtest` copies the test binaries into `bin_dir` (runner-owned, outside
/// the copy, read-only to commands) and runs them from there. The copy's
/// build starts from its own copy of the dependency layer in `cache`, and
/// sees the job cache read-only.
#[allow(clippy::too_many_arguments)]
pub fn run_check(
    manifest: &Manifest,
    acceptance: &Acceptance,
    dir: &Path,
    patch: Option<&Carried>,
    log: &Path,
    bin_dir: &Path,
    data_root: &Path,
    cache: &CacheUse,
    cancel: &CancelToken,
) -> Result<CheckRun, CheckError> {
    let prepare = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckError::Prepare { path, source }
    };
    for old in [dir, bin_dir] {
        if old.exists() {
            fs::remove_dir_all(old).map_err(prepare(old))?;
        }
    }
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent).map_err(prepare(parent))?;
    }
    let copy = |from: &Path| {
        let (from, to) = (from.to_path_buf(), dir.to_path_buf());
        move |source| CheckError::Copy { from, to, source }
    };
    copy_tree(&manifest.source, dir).map_err(copy(&manifest.source))?;
    if let Some(patch) = patch {
        let editable = crate::agent::editable_set(&manifest.editable)
            .map_err(|e| CheckError::Rule(e.to_string()))?;
        patch.apply(dir, &editable)?;
    }
    overlay(&acceptance.dir, dir).map_err(copy(&acceptance.dir))?;
    cache.seed(dir)?;

    let format = acceptance.results_format();
    let rule =
        |argv: &[String]| AllowList::exact(argv).map_err(|e| CheckError::Rule(e.to_string()));
    let mut allow = rule(&acceptance.command)?;
    if format == ResultsFormat::Libtest {
        allow = allow.union(rule(&libtest_argv(&acceptance.command).0)?);
    }
    let mut policy = policy_for(manifest, vec![data_root.to_path_buf()]);
    // The acceptance files are read-only to the code under test, even
    // where the copy around them is writable (a build script cannot
    // rewrite a hidden test before it is compiled).
    policy
        .readable
        .extend(acceptance_files(&acceptance.dir, dir));
    let deadline = Instant::now() + manifest.limits.command_timeout;
    let mut commands = AttemptCommands::new(manifest, dir, allow, policy, deadline);
    cache.apply(&mut commands, manifest);
    let mut report = CheckLog::default();
    let run = match format {
        ResultsFormat::Exit => {
            let outcome = commands.run_argv(&acceptance.command, cancel)?;
            report.command(&acceptance.command, &outcome);
            CheckRun {
                commands: vec![outcome],
                results: None,
                note: None,
                dependency_hashes: BTreeSet::new(),
            }
        }
        ResultsFormat::Junit(rel) => {
            // A file left by the patch must not stand in for the run's.
            let _ = fs::remove_file(dir.join(&rel));
            let outcome = commands.run_argv(&acceptance.command, cancel)?;
            report.command(&acceptance.command, &outcome);
            let (results, note) = match read_junit(dir, &rel) {
                Ok(results) => (Some(results), None),
                Err(why) => (Some(TestResults::default()), Some(why)),
            };
            CheckRun {
                commands: vec![outcome],
                results,
                note,
                dependency_hashes: BTreeSet::new(),
            }
        }
        ResultsFormat::Libtest => {
            libtest(acceptance, dir, bin_dir, &commands, &mut report, cancel)?
        }
    };
    if let Some(note) = &run.note {
        report.text.push_str(&format!("note: {note}\n"));
    }
    if let Some(parent) = log.parent() {
        fs::create_dir_all(parent).map_err(prepare(parent))?;
    }
    fs::write(log, report.text).map_err(prepare(log))?;
    Ok(run)
}

/// The acceptance files as they lie in the copy.
fn acceptance_files(acceptance_dir: &Path, copy: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(acceptance_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| copy.join(entry.file_name()))
        .collect()
}

/// The text of `<role>.log`: each command and its output.
#[derive(Default)]
struct CheckLog {
    text: String,
}

impl CheckLog {
    fn command(&mut self, argv: &[String], outcome: &ExecOutcome) {
        self.text
            .push_str(&super::commands::command_log(argv, outcome));
    }
}

fn read_junit(dir: &Path, rel: &str) -> Result<TestResults, String> {
    let root = Dir::open(dir).map_err(|e| format!("cannot open the check copy: {e}"))?;
    let (bytes, _) = root
        .read_capped(Path::new(rel), MAX_JUNIT)
        .map_err(|e| format!("no usable JUnit file {rel}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{rel} is not UTF-8"))?;
    parse_junit(&text).map_err(|e| format!("{rel}: {e}"))
}

/// One test binary cargo built.
struct TestBinary {
    /// `kind/target`, the prefix of its tests' names.
    label: String,
    target: String,
    /// Relative to the copy.
    path: PathBuf,
    /// The package root (relative to the copy), where cargo runs it.
    package: PathBuf,
}

/// The libtest path: build the tests (compile only), copy the binaries out
/// of the agent's reach, run each from there and read its per-test lines.
fn libtest(
    acceptance: &Acceptance,
    dir: &Path,
    bin_dir: &Path,
    commands: &AttemptCommands,
    report: &mut CheckLog,
    cancel: &CancelToken,
) -> Result<CheckRun, CheckError> {
    let (build_argv, test_args) = libtest_argv(&acceptance.command);
    let build = commands.run_argv_capped(&build_argv, RESULTS_OUTPUT_CAP, cancel)?;
    report.command(&build_argv, &build);
    let mut run = CheckRun {
        commands: Vec::new(),
        results: Some(TestResults {
            tests: Default::default(),
            complete: true,
        }),
        note: None,
        dependency_hashes: dependency_hashes(&build.stdout.to_text()),
    };
    // Cargo reports absolute paths.
    let canonical = dir.canonicalize().map_err(|source| CheckError::Prepare {
        path: dir.to_path_buf(),
        source,
    })?;
    let binaries = test_binaries(&build.stdout.to_text(), &canonical);
    let built = build.success();
    run.commands.push(build);
    if !built || binaries.is_empty() {
        run.results = Some(TestResults::default());
        run.note = Some(if built {
            "the build produced no test binary".to_string()
        } else {
            "the tests did not build".to_string()
        });
        return Ok(run);
    }
    fs::create_dir_all(bin_dir).map_err(|source| CheckError::Prepare {
        path: bin_dir.to_path_buf(),
        source,
    })?;
    let bin_dir = bin_dir
        .canonicalize()
        .map_err(|source| CheckError::Prepare {
            path: bin_dir.to_path_buf(),
            source,
        })?;
    let root = Dir::open(dir).map_err(|source| CheckError::Prepare {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut notes = Vec::new();
    // Every binary is copied out before any of them runs: a test binary
    // runs with the copy writable, so one run first could otherwise
    // replace the others in `target/` before they are copied.
    let mut copies = Vec::new();
    for (i, binary) in binaries.iter().enumerate() {
        let copied = bin_dir.join(format!("{i}-{}", binary.target));
        match copy_binary(&root, &binary.path, &copied) {
            Ok(()) => copies.push((binary, copied)),
            Err(why) => notes.push(format!("{}: {why}", binary.label)),
        }
    }
    for (binary, copied) in copies {
        let mut argv = vec![binary.target.clone()];
        argv.extend(test_args.iter().cloned());
        let cwd = canonical.join(&binary.package);
        let outcome = commands.run_binary(&copied, &argv, &cwd, RESULTS_OUTPUT_CAP, cancel)?;
        report.command(&argv, &outcome);
        let stop = outcome.cancelled;
        match parse_libtest(&outcome.stdout.to_text()) {
            Ok(results) => {
                if !results.complete {
                    notes.push(format!("{} ended before its summary", binary.label));
                }
                if let Some(all) = run.results.as_mut()
                    && let Err(why) = all.merge(results, &binary.label)
                {
                    notes.push(why);
                }
            }
            Err(why) => {
                notes.push(format!("{}: {why}", binary.label));
                if let Some(all) = run.results.as_mut() {
                    all.complete = false;
                }
            }
        }
        run.commands.push(outcome);
        if stop {
            break;
        }
    }
    // The copies served their run; they are the bulk of an attempt's
    // artifacts and tell nothing the log does not.
    let _ = fs::remove_dir_all(&bin_dir);
    if !notes.is_empty() {
        run.note = Some(notes.join("; "));
    }
    Ok(run)
}

/// The build command (`--no-run`, artifacts as JSON on stdout) and the
/// arguments for each test binary (whatever followed `--`).
fn libtest_argv(command: &[String]) -> (Vec<String>, Vec<String>) {
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

/// Test executables from cargo's JSON messages, relative to the copy
/// (anything outside it is ignored).
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

/// Copies a built binary (opened beneath the copy, no symlinks) to `to`,
/// read-only and executable.
fn copy_binary(root: &Dir, rel: &Path, to: &Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let (mut from, meta) = root.open_file(rel).map_err(|e| e.to_string())?;
    if meta.size > MAX_TEST_BINARY {
        return Err(format!("{} bytes, over {MAX_TEST_BINARY}", meta.size));
    }
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o555)
        .open(to)
        .map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    std::io::copy(&mut (&mut from).take(MAX_TEST_BINARY), &mut out)
        .map_err(|e| format!("cannot copy: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_gets_no_run_and_json_and_binaries_get_what_follows_the_dashes() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let (build, tests) = libtest_argv(&argv("cargo test --offline -- --test-threads=1"));
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
        let found = test_binaries(out, dir);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].label, "test/sum");
        assert_eq!(found[0].path, Path::new("target/debug/deps/sum-1"));
    }
}
