//! Baseline and acceptance runs: the acceptance command on a clean copy of
//! the pristine source (plus, for acceptance, the agent's patch), with the
//! acceptance dir overlaid. The agent never sees these copies.
//!
//! The copies go through directory descriptors ([`crate::beneath`]): names
//! are carried exactly, symlinks are copied as symlinks and never followed,
//! and the source and the acceptance dir are only ever read. How tests are
//! listed, run and named is the language table's ([`crate::lang`]); a
//! libtest run is in `per_test.rs`, the inventory of a baseline that could
//! not collect its tests in `fallback.rs`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::cache_use::CacheUse;
use super::carried::Carried;
use super::commands::{AttemptCommands, policy_for};
use super::decoys::{Decoys, TwinRequest};
use super::patch::PatchError;
use crate::agent::copy_tree;
use crate::beneath::{AtPath, Dir, overlay};
use crate::cache::LayerError;
use crate::cancel::CancelToken;
use crate::exec::{AllowList, ExecError, ExecOutcome};
use crate::integrity::{CanaryResult, TwinResult, kept_out};
use crate::lang::{Language, PinContext, RunModel};
use crate::manifest::{Acceptance, Manifest, ResultsFormat};
use crate::protocol::{CommandFor, Event, TestRuns};
use crate::verdict::{Inventory, InventorySource, TestResults};

/// Failures preparing a check (not a verdict).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
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

/// What a check runs: the job, the copy to build, and what it is for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckSpec<'a> {
    pub manifest: &'a Manifest,
    pub acceptance: &'a Acceptance,
    /// The copy, made afresh.
    pub dir: &'a Path,
    /// The runner's copy of the agent's changes (acceptance); `None` for
    /// the baseline.
    pub patch: Option<&'a Carried>,
    /// Where the commands and their output are written (`<role>.log`).
    pub log: &'a Path,
    /// Runner-owned directory for the test binaries (libtest).
    pub bin_dir: &'a Path,
    /// The data dir, denied to every command.
    pub data_root: &'a Path,
    pub cache: &'a CacheUse,
    /// Acceptance: the baseline's inventory, whose tests are the ones run.
    pub inventory: Option<&'a Inventory>,
    /// Tests run at once (libtest): `max(1, cores / batch workers)`.
    pub parallel: usize,
    /// The hidden test files to plant a canary in (relative to the
    /// acceptance dir); `None` when the run has no canaries.
    pub canaries: Option<&'a [String]>,
    /// The twins to plant in the hidden test files; `None` when the run
    /// has none.
    pub twins: Option<&'a TwinRequest>,
}

impl CheckSpec<'_> {
    pub(super) fn is_baseline(&self) -> bool {
        self.patch.is_none()
    }
}

/// One command as the log records it: a command, or a test binary whose
/// tests ran one per process (its outcome then sums them up).
#[derive(Debug, Clone)]
pub(crate) struct CheckCommand {
    pub outcome: ExecOutcome,
    pub tests: Option<TestRuns>,
}

impl CheckCommand {
    pub(super) fn plain(outcome: ExecOutcome) -> CheckCommand {
        CheckCommand {
            outcome,
            tests: None,
        }
    }

    /// Its `command` event, for a check of `role`.
    pub(crate) fn event(&self, role: CommandFor) -> Event {
        crate::agent::command_event_of_tests(0, role, &self.outcome, self.tests.clone())
    }
}

/// A check's run: what the executor reported, and the per-test results
/// when the job's results format reads them.
#[derive(Debug, Default)]
pub(crate) struct CheckRun {
    /// The commands run, in order (the build, then each test binary, for
    /// `libtest`; the listing and the acceptance command otherwise).
    pub commands: Vec<CheckCommand>,
    /// Per-test results by inventory name, `None` with `results = "exit"`.
    pub results: Option<TestResults>,
    /// The tests the runner listed, by inventory name; `None` when it did
    /// not list (a runner the language table does not know, or an
    /// acceptance run that runs the inventory's names).
    pub listed: Option<Vec<String>>,
    /// Why the harness is broken, with the command's stderr tail: it could
    /// not run its test runner, wrote no results file, or listed no test.
    /// Only the baseline calls that `harness_error`.
    pub harness: Option<String>,
    /// Why the hidden tests could not be collected or built, when so.
    pub uncollectable: Option<String>,
    /// The test files that did not collect, as the runner names them
    /// (empty when it does not say, or for a build that failed).
    pub uncollectable_files: Vec<String>,
    /// The inventory of a baseline that could not collect its tests: where
    /// it came from and its names (none found: empty).
    pub fallback: Option<(InventorySource, Vec<String>)>,
    /// Why results are incomplete or absent, in one line (a failed build,
    /// a missing JUnit file, a summary that disagrees with its lines).
    pub note: Option<String>,
    /// The hashes of the dependencies' build units, read from cargo's
    /// messages (`libtest` only): what a trusted build can give the
    /// dependency layer.
    pub dependency_hashes: BTreeSet<String>,
    /// The run was asked to plant canaries.
    pub canaries_asked: bool,
    /// What the run reported of each canary it planted (taken out of
    /// `results` and `listed`).
    pub canaries: Vec<CanaryResult>,
    /// Hidden test files that could take no canary, and why.
    pub unplanted: Vec<String>,
    /// The run was asked to plant twins.
    pub twins_asked: bool,
    /// What the run reported of each twin (taken out of `results` and
    /// `listed`).
    pub twins: Vec<TwinResult>,
    /// Tests asked for twins that could get none, and why.
    pub refused: Vec<(String, String)>,
    /// Why twins could not be calibrated at this baseline.
    pub twins_off: Option<String>,
    /// The test binaries a libtest run copied out of the build.
    pub binaries: Vec<super::per_test::Copied>,
    /// Run names of the tests whose process could not start because a
    /// test before them broke the tree: each fails, and a twin among them
    /// is not judged (it never ran).
    pub unstarted: BTreeSet<String>,
    /// Anomalies of the results (a test reported twice, a summary that
    /// disagrees with its lines, output after the harness's end), each in
    /// one line naming the test.
    pub anomalies: Vec<String>,
}

impl CheckRun {
    /// Whether any command was cancelled.
    pub(crate) fn cancelled(&self) -> bool {
        self.commands.iter().any(|c| c.outcome.cancelled)
    }

    /// The exit-status verdict (`results = "exit"` only).
    pub(crate) fn exit_passed(&self) -> bool {
        !self.commands.is_empty() && self.commands.iter().all(|c| c.outcome.success())
    }

    pub(super) fn add_note(&mut self, note: String) {
        self.note = Some(match self.note.take() {
            Some(old) => format!("{old}; {note}"),
            None => note,
        });
    }
}

/// Bytes kept of a build's artifact list and of a test binary's output:
/// the runner reads these whole, so they must not be cut.
pub(super) const RESULTS_OUTPUT_CAP: usize = 8 << 20;

/// Builds the copy afresh: pristine source, then the patch (editable
/// paths only), then the acceptance dir on top; runs the acceptance
/// command there as the job's results format and language say, and writes
/// the output to the log. `libtest` copies the test binaries into the bin
/// dir (runner-owned, outside the copy, read-only to commands) and runs
/// each test from there in its own process. The copy's build starts from
/// its own copy of the dependency layer, and sees the job cache read-only.
/// The whole check runs inside `[limits] wall_time`.
pub(crate) fn run_check(
    spec: &CheckSpec<'_>,
    cancel: &CancelToken,
) -> Result<CheckRun, CheckError> {
    let run = run_check_once(spec, cancel)?;
    let broken = run.harness.is_some() || run.uncollectable.is_some();
    if !(spec.is_baseline() && spec.twins.is_some() && broken) || run.cancelled() {
        return Ok(run);
    }
    // The rewritten hidden tests did not run at the baseline: run it as
    // the files are, so the twins cannot be what broke it.
    let plain = CheckSpec {
        twins: None,
        ..*spec
    };
    let mut again = run_check_once(&plain, cancel)?;
    let why = run
        .harness
        .clone()
        .or_else(|| run.uncollectable.clone())
        .unwrap_or_default();
    again.twins_asked = true;
    again.twins_off = Some(
        if again.harness.is_some() || again.uncollectable.is_some() {
            "the hidden tests do not run on the pristine source, so no twin could be calibrated"
                .to_string()
        } else {
            format!("the hidden tests with their twins did not run ({why}); without them they do")
        },
    );
    let mut commands = run.commands;
    commands.append(&mut again.commands);
    again.commands = commands;
    Ok(again)
}

/// One run of [`run_check`], with the decoys it asks for.
fn run_check_once(spec: &CheckSpec<'_>, cancel: &CancelToken) -> Result<CheckRun, CheckError> {
    let hidden: BTreeSet<String> = super::fallback::hidden_files(&spec.acceptance.dir)
        .into_iter()
        .collect();
    let mut report = CheckLog::default();
    prepare_tree(spec, spec.dir, |dir| match spec.patch {
        Some(patch) => {
            let editable = crate::agent::editable_set(&spec.manifest.editable)
                .map_err(|e| CheckError::Rule(e.to_string()))?;
            // Test infrastructure the patch touches keeps its clean
            // version unless `editable` names it exactly.
            let keep = |rel: &str| !kept_out(rel, &hidden, &spec.manifest.editable);
            for rel in patch.paths().iter().filter(|rel| !keep(rel)) {
                report
                    .text
                    .push_str(&format!("kept out of the acceptance tree: {rel}\n"));
            }
            patch.apply_kept(dir, &editable, &keep)?;
            if let Some(lang) = crate::lang::for_acceptance(spec.acceptance) {
                pin_files(spec, lang, dir, &patch.paths(), &mut report);
            }
            Ok(())
        }
        None => Ok(()),
    })?;
    let lang = crate::lang::for_acceptance(spec.acceptance);
    let decoys = match lang {
        Some(lang) if spec.canaries.is_some() || spec.twins.is_some() => super::decoys::plant(
            &spec.acceptance.dir,
            spec.dir,
            lang,
            &spec.acceptance.command,
            spec.canaries,
            spec.twins,
            &mut report,
        )?,
        _ => Decoys::default(),
    };
    // The harness reads the runner's configuration, never the tree's.
    let original = spec;
    let pinned = match lang {
        Some(lang) => pin(spec, lang)?,
        None => None,
    };
    let acceptance;
    let pinned_spec;
    let spec = match pinned {
        Some(command) => {
            acceptance = Acceptance {
                command,
                ..spec.acceptance.clone()
            };
            pinned_spec = CheckSpec {
                acceptance: &acceptance,
                ..*spec
            };
            &pinned_spec
        }
        None => spec,
    };
    let commands = check_commands(spec, spec.dir, lang)?;
    let mut run = run_in(spec, &commands, lang, &decoys, &mut report, cancel)?;
    if let Some(lang) = lang {
        super::decoys::take(&mut run, lang, &decoys, &mut report);
        if !spec.is_baseline() && run.twins_asked && !run.cancelled() {
            again_alone(
                spec,
                &commands,
                lang,
                &decoys,
                &mut run,
                &mut report,
                cancel,
            )?;
        }
    }
    let _ = fs::remove_dir_all(spec.bin_dir);
    // A declared inventory needs no fallback: a test that does not
    // collect counts as failing.
    if spec.is_baseline()
        && !spec.acceptance.has_explicit_inventory()
        && let (Some(lang), Some(why)) = (lang, &run.uncollectable)
    {
        report.text.push_str(&format!(
            "note: {why}: the inventory comes from the oracle or the hidden files\n"
        ));
        run.fallback = Some(super::fallback::inventory(
            original,
            lang,
            &mut report,
            &mut run,
            cancel,
        )?);
    }
    if let Some(note) = &run.note {
        report.text.push_str(&format!("note: {note}\n"));
    }
    if let Some(why) = &run.harness {
        report.text.push_str(&format!("harness: {why}\n"));
    }
    let prepare = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckError::Prepare { path, source }
    };
    if let Some(parent) = spec.log.parent() {
        fs::create_dir_all(parent).map_err(prepare(parent))?;
    }
    fs::write(spec.log, report.text).map_err(prepare(spec.log))?;
    Ok(run)
}

/// The acceptance command with the language's harness pinned, its files
/// written into the check's runner-owned dir; `None` when it pins
/// nothing.
fn pin(spec: &CheckSpec<'_>, lang: &dyn Language) -> Result<Option<Vec<String>>, CheckError> {
    let read = |rel: &str| -> Option<String> {
        [&spec.acceptance.dir, &spec.manifest.source]
            .iter()
            .find_map(|root| {
                let path = root.join(rel);
                let meta = fs::symlink_metadata(&path).ok()?;
                (meta.is_file() && meta.len() <= MAX_CONFIG)
                    .then(|| fs::read_to_string(&path).ok())
                    .flatten()
            })
    };
    let tree = spec
        .dir
        .canonicalize()
        .map_err(|source| CheckError::Prepare {
            path: spec.dir.to_path_buf(),
            source,
        })?;
    let context = PinContext {
        tree: &tree,
        config_dir: spec.bin_dir,
        plugins: &spec.acceptance.plugins,
        pristine: &read,
    };
    let Some(pinned) = lang.pin_harness(&spec.acceptance.command, &context) else {
        return Ok(None);
    };
    let prepare = |source| CheckError::Prepare {
        path: spec.bin_dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(spec.bin_dir).map_err(prepare)?;
    for (name, text) in &pinned.files {
        fs::write(spec.bin_dir.join(name), text).map_err(prepare)?;
    }
    Ok(Some(pinned.command))
}

/// Puts back, in each file the patch laid on the copy at `dir` among
/// `paths`, what configures the harness in it, as the pristine source
/// has it (`Cargo.toml`'s `[patch]`, `package.json`'s `jest` key).
fn pin_files(
    spec: &CheckSpec<'_>,
    lang: &dyn Language,
    dir: &Path,
    paths: &[String],
    report: &mut CheckLog,
) {
    let Ok(tree) = Dir::open(dir) else {
        return;
    };
    for rel in paths {
        let Ok((bytes, _)) = tree.read_capped(Path::new(rel), MAX_CONFIG) else {
            continue;
        };
        let Ok(patched) = String::from_utf8(bytes) else {
            continue;
        };
        let pristine = fs::read_to_string(spec.manifest.source.join(rel)).ok();
        if let Some(pinned) = lang.pin_file(rel, &patched, pristine.as_deref())
            && tree
                .write_file(Path::new(rel), pinned.as_bytes(), 0o644)
                .is_ok()
        {
            report.text.push_str(&format!(
                "pinned to the pristine harness: {rel} (what configures the tests is the source's)\n"
            ));
        }
    }
}

/// Largest configuration file of the pristine source a harness is pinned
/// to.
const MAX_CONFIG: u64 = 1 << 20;

/// Runs again, alone, each twin that failed without its token while its
/// test passed, and records what it reported then.
fn again_alone(
    spec: &CheckSpec<'_>,
    commands: &AttemptCommands,
    lang: &dyn Language,
    decoys: &Decoys,
    run: &mut CheckRun,
    report: &mut CheckLog,
    cancel: &CancelToken,
) -> Result<(), CheckError> {
    let Some(results) = &run.results else {
        return Ok(());
    };
    let candidates = crate::integrity::rerun_candidates(&run.twins, &results.tests);
    if candidates.is_empty() {
        return Ok(());
    }
    let names = super::decoys::candidate_names(run, decoys, &candidates);
    report.text.push_str(&format!(
        "twins: {} run again alone\n",
        crate::words::count(names.len(), "twin")
    ));
    let again = match (lang.model(), spec.acceptance.results_format()) {
        (RunModel::PerTest, _) => super::per_test::run_alone(lang, commands, run, &names, cancel)?,
        (RunModel::OneRun, ResultsFormat::Junit(rel)) => {
            let Some(argv) = lang.select_argv(&spec.acceptance.command, &names) else {
                return Ok(());
            };
            let _ = fs::remove_file(commands.dir.join(&rel));
            let outcome = commands.run_argv(&argv, cancel)?;
            run.commands.push(CheckCommand::plain(outcome));
            super::one_run::read_junit(&commands.dir, &rel).unwrap_or_default()
        }
        _ => return Ok(()),
    };
    super::decoys::record_again(run, decoys, &candidates, &again);
    Ok(())
}

/// Makes `dir` afresh: the pristine source, then `change` (the patch, or
/// the oracle), then the acceptance dir, then the dependency layer.
pub(super) fn prepare_tree(
    spec: &CheckSpec<'_>,
    dir: &Path,
    change: impl FnOnce(&Path) -> Result<(), CheckError>,
) -> Result<(), CheckError> {
    let prepare = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckError::Prepare { path, source }
    };
    for old in [dir, spec.bin_dir] {
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
    copy_tree(&spec.manifest.source, dir).map_err(copy(&spec.manifest.source))?;
    change(dir)?;
    overlay(&spec.acceptance.dir, dir).map_err(copy(&spec.acceptance.dir))?;
    let builds = spec
        .cache
        .builds(std::iter::once(spec.acceptance.command.as_slice()));
    spec.cache.seed(dir, builds)?;
    Ok(())
}

/// The commands of a check in `dir`: the acceptance command and what the
/// language derives from it (the build, the listing), sandboxed with the
/// data dir denied and the acceptance files read-only, inside the job's
/// wall time.
pub(super) fn check_commands(
    spec: &CheckSpec<'_>,
    dir: &Path,
    lang: Option<&dyn Language>,
) -> Result<AttemptCommands, CheckError> {
    let acceptance = spec.acceptance;
    let rule =
        |argv: &[String]| AllowList::exact(argv).map_err(|e| CheckError::Rule(e.to_string()));
    let mut allow = rule(&acceptance.command)?;
    if let Some(lang) = lang {
        let extra = match lang.model() {
            RunModel::PerTest => lang.build_argv(&acceptance.command).0,
            RunModel::OneRun if lang.lists() => lang.list_argv(&acceptance.command),
            RunModel::OneRun => acceptance.command.clone(),
        };
        allow = allow.union(rule(&extra)?);
    }
    let mut policy = policy_for(spec.manifest, vec![spec.data_root.to_path_buf()]);
    // The runner's own files of the check (the harness's configuration,
    // the test binaries) are read there.
    policy.readable.push(spec.bin_dir.to_path_buf());
    // The acceptance files are read-only to the code under test, even
    // where the copy around them is writable (a build script cannot
    // rewrite a hidden test before it is compiled).
    policy
        .readable
        .extend(acceptance_files(&acceptance.dir, dir));
    // Each command has its own timeout; the check as a whole (a build,
    // then every test in its own process) stays inside the wall time.
    let deadline = Instant::now() + spec.manifest.limits.wall_time;
    let mut commands = AttemptCommands::new(spec.manifest, dir, allow, policy, deadline);
    spec.cache.apply(&mut commands, spec.manifest);
    for (key, value) in lang.map(|l| l.harness_env()).unwrap_or_default() {
        if !spec.manifest.env.contains_key(*key) {
            commands
                .env
                .insert((*key).to_string(), (*value).to_string());
        }
    }
    Ok(commands)
}

/// Runs the check's commands as its results format and language say;
/// the decoys (canaries, twins) are run like the inventory's tests.
fn run_in(
    spec: &CheckSpec<'_>,
    commands: &AttemptCommands,
    lang: Option<&dyn Language>,
    decoys: &Decoys,
    report: &mut CheckLog,
    cancel: &CancelToken,
) -> Result<CheckRun, CheckError> {
    let acceptance = spec.acceptance;
    match (acceptance.results_format(), lang) {
        (ResultsFormat::Exit, _) => {
            let outcome = commands.run_argv(&acceptance.command, cancel)?;
            report.command(&acceptance.command, &outcome);
            Ok(CheckRun {
                commands: vec![CheckCommand::plain(outcome)],
                ..CheckRun::default()
            })
        }
        (ResultsFormat::Libtest, Some(lang)) => {
            super::per_test::run(spec, lang, commands, decoys, report, cancel)
        }
        (ResultsFormat::Junit(rel), lang) => {
            super::one_run::one_run(spec, &rel, lang, commands, &decoys.extra(), report, cancel)
        }
        (ResultsFormat::Libtest, None) => Err(CheckError::Rule(
            "results = \"libtest\" has no language to run it".into(),
        )),
    }
}

/// What the tree of a check is, for notes.
pub(super) fn tree_name(spec: &CheckSpec<'_>) -> &'static str {
    if spec.is_baseline() {
        "pristine source"
    } else {
        "patched source"
    }
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
pub(super) struct CheckLog {
    pub(super) text: String,
}

impl CheckLog {
    pub(super) fn command(&mut self, argv: &[String], outcome: &ExecOutcome) {
        self.text
            .push_str(&super::commands::command_log(argv, outcome));
    }
}

/// The last lines of a command's stderr, on one line: what a broken
/// harness said about itself.
pub(super) fn stderr_tail(outcome: &ExecOutcome) -> String {
    const LINES: usize = 3;
    const CHARS: usize = 300;
    let text = outcome.stderr.to_text();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(LINES)..].join(" | ");
    match tail.char_indices().rev().nth(CHARS) {
        Some((at, _)) => format!("…{}", &tail[at..]),
        None => tail,
    }
}

/// `why`, with the stderr tail when there is one.
pub(super) fn with_tail(why: &str, stderr: &str) -> String {
    if stderr.is_empty() {
        why.to_string()
    } else {
        format!("{why}; stderr: {stderr}")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::exec::Captured;

    fn outcome(stderr: &str) -> ExecOutcome {
        ExecOutcome {
            program: "python3".into(),
            resolved: "/usr/bin/python3".into(),
            argc: 3,
            exit_code: Some(1),
            signal: None,
            duration: Duration::from_millis(5),
            stdout: Captured::default(),
            stderr: Captured {
                head: stderr.as_bytes().to_vec(),
                total_bytes: stderr.len() as u64,
                ..Captured::default()
            },
            timed_out: false,
            cancelled: false,
            leaked: false,
            drain_timed_out: false,
            oom: false,
            sandbox_layers: Vec::new(),
            resources: crate::exec::Resources::default(),
        }
    }

    #[test]
    fn a_per_test_run_s_missing_tests_take_no_cause_from_a_test_s_output() {
        use crate::runner::harness_output::harness_output;
        let mut run = CheckRun::default();
        run.commands.push(CheckCommand::plain(outcome(
            "error: the test printed this\n",
        )));
        // libtest runs each test alone: a missing one timed out.
        assert_eq!(harness_output(&run, &crate::lang::Rust, true), None);
        // The same words from a build the check calls uncollectable.
        run.uncollectable = Some("the tests do not build".into());
        let found = harness_output(&run, &crate::lang::Rust, true).unwrap();
        assert_eq!(
            found.cause,
            "the tests did not build: error: the test printed this"
        );
        // A one-run runner's missing tests: its output says why.
        let mut pytest = CheckRun::default();
        pytest.commands.push(CheckCommand::plain(outcome(
            "____ ERROR collecting t_test.py ____\nE   ImportError: x\n",
        )));
        assert!(harness_output(&pytest, &crate::lang::Python, true).is_some());
        assert_eq!(harness_output(&pytest, &crate::lang::Python, false), None);
    }

    #[test]
    fn the_stderr_tail_is_the_last_lines_on_one_line() {
        let o = outcome("a\n\nb\nc\n/usr/bin/python3: No module named pytest\n");
        assert_eq!(
            stderr_tail(&o),
            "b | c | /usr/bin/python3: No module named pytest"
        );
        let long = "x".repeat(1000);
        assert!(stderr_tail(&outcome(&long)).chars().count() <= 302);
        assert_eq!(with_tail("why", ""), "why");
        assert_eq!(with_tail("why", "tail"), "why; stderr: tail");
    }
}
