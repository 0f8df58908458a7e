//! Tests run one per process, each under its own timeout (the
//! cargo-nextest model): the build makes the test binaries, the runner
//! copies them out of the copy's reach, each binary lists its tests and
//! each test runs alone, a few at a time. A test that hangs is killed at
//! `[acceptance] test_timeout` and is failed and named; the others run on.
//!
//! At the baseline the listing is the inventory; at acceptance the
//! inventory's names are run (a name the binary no longer has reports
//! nothing and is missing), so only a run without an inventory lists.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::checks::{
    CheckCommand, CheckError, CheckLog, CheckRun, CheckSpec, RESULTS_OUTPUT_CAP, stderr_tail,
    with_tail,
};
use super::commands::AttemptCommands;
use super::decoys::Decoys;
use super::test_runs::Summary;
use crate::beneath::Dir;
use crate::cache::dependency_hashes;
use crate::cancel::CancelToken;
use crate::exec::{ExecError, ExecOutcome};
use crate::lang::{Language, OneRun, TestBinary};
use crate::verdict::{EXCERPT_BYTES, TestOutcome, TestResults, cap};

/// Largest test binary copied out of the build.
const MAX_TEST_BINARY: u64 = 1 << 30;

/// Which tests a check runs: `max(1, cores / workers)` at a time.
pub(crate) fn test_parallelism(workers: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    (cores / workers.max(1)).max(1)
}

/// The libtest path: build, copy the binaries, then list and run each
/// binary's tests one per process.
pub(super) fn run(
    spec: &CheckSpec<'_>,
    lang: &dyn Language,
    commands: &AttemptCommands,
    decoys: &Decoys,
    report: &mut CheckLog,
    cancel: &CancelToken,
) -> Result<CheckRun, CheckError> {
    let extra = decoys.extra();
    let mut run = CheckRun {
        results: Some(TestResults::default()),
        ..CheckRun::default()
    };
    let Some(built) = build(spec, lang, commands, report, &mut run, cancel)? else {
        return Ok(run);
    };
    let copies = copy_binaries(spec.bin_dir, &built.canonical, &built.binaries, &mut run)?;
    let listing = spec.patch.is_none() || spec.inventory.is_none();
    let mut listed = Vec::new();
    // The binaries' runs see the copy read-only but for its build dirs,
    // so no test can change what the next one runs (`chmod 000` on its
    // package dir, a data file rewritten).
    let lister = read_only_tree(commands, lang);
    let mut runner = lister.clone();
    runner.timeout = spec
        .acceptance
        .test_timeout_or(spec.manifest.limits.command_timeout);
    let own = OwnCopies::new(spec.bin_dir.join("own"), &runner);
    for (binary, copied) in &copies {
        let unit = built.unit(lang, binary, copied);
        let (names, listing_outcome) = if listing {
            match unit.list(&lister, report, &mut run, cancel)? {
                (Some(names), outcome) => (names, Some(outcome)),
                (None, outcome) => {
                    run.commands.push(CheckCommand {
                        outcome,
                        tests: None,
                    });
                    continue;
                }
            }
        } else {
            // The inventory's tests under their names of this run, and the
            // decoys, all in one random order.
            let mut names: Vec<String> = spec
                .inventory
                .into_iter()
                .flat_map(|inventory| inventory.names())
                .map(|name| decoys.run_name(lang, name))
                .chain(extra.iter().cloned())
                .filter_map(|name| lang.listed_name(&binary.label, &name).map(String::from))
                .collect();
            fastrand::Rng::new().shuffle(&mut names);
            (names, None)
        };
        listed.extend(names.iter().map(|n| lang.inventory_name(&binary.label, n)));
        if listing_outcome.as_ref().is_some_and(|o| o.cancelled) {
            run.commands
                .extend(listing_outcome.map(|outcome| CheckCommand {
                    outcome,
                    tests: None,
                }));
            break;
        }
        if names.is_empty() && listing_outcome.is_none() {
            // Nothing of this binary is in the inventory.
            continue;
        }
        let command = unit.run_each(
            &runner,
            own.as_ref(),
            &names,
            listing_outcome,
            spec.parallel,
            decoys,
            report,
            &mut run,
            cancel,
        )?;
        run.commands.push(command);
        if run.cancelled() {
            break;
        }
    }
    // The copies stay for a twin to run again alone; the check removes
    // them (the bulk of an attempt's artifacts, telling nothing the log
    // does not).
    run.binaries = copies
        .iter()
        .map(|(binary, copied)| Copied {
            label: binary.label.clone(),
            target: binary.target.clone(),
            copied: copied.clone(),
            root: built.canonical.clone(),
            cwd: built.canonical.join(&binary.package),
            args: built.args.clone(),
        })
        .collect();
    if let Some(results) = run.results.as_mut() {
        results.complete = true;
    }
    if listing {
        if spec.patch.is_none() && listed.is_empty() && run.harness.is_none() {
            run.harness = Some("the test binaries listed no test at all".into());
        }
        run.listed = Some(listed);
    }
    Ok(run)
}

/// `commands` with the tree read-only but for the language's build dirs
/// (`target/`, where `CARGO_TARGET_TMPDIR` lies).
fn read_only_tree(commands: &AttemptCommands, lang: &dyn Language) -> AttemptCommands {
    let mut tests = commands.clone();
    tests.sandbox.workspace_read_only = true;
    for dir in lang.build_dirs() {
        let path = commands.dir.join(dir);
        if path.is_dir() {
            tests.sandbox.writable.push(path);
        }
    }
    tests
}

/// Largest tree (its build dirs aside) a test gets a copy of its own.
const OWN_COPY_FILES: usize = 2_000;
const OWN_COPY_BYTES: u64 = 32 << 20;

/// Where each test of a small tree runs: a fresh copy of the tree of its
/// own, writable (tests that write beside themselves, as Exercism's
/// `grep` does, work), emptied after; the tree itself stays read-only to
/// every test (it is where the binary's compile-time paths point). Each
/// worker refills one directory, so its sandbox is prepared once. `None`
/// for a tree too large to copy per test: tests run in it, read-only.
struct OwnCopies {
    /// Runner-owned, where the copies are made.
    root: PathBuf,
    /// The commands the copies run under: the copy writable, the tree
    /// readable, its build dirs writable.
    commands: AttemptCommands,
}

impl OwnCopies {
    /// Copies under `root` for `tests`, the commands of the tree read-only
    /// but for its build dirs ([`read_only_tree`]).
    fn new(root: PathBuf, tests: &AttemptCommands) -> Option<OwnCopies> {
        let skip = crate::lang::build_dirs();
        let (files, bytes) = tree_size(&tests.dir, &skip);
        if files > OWN_COPY_FILES || bytes > OWN_COPY_BYTES {
            return None;
        }
        fs::create_dir_all(&root).ok()?;
        let mut own = tests.clone();
        own.sandbox.workspace_read_only = false;
        own.sandbox.readable.push(tests.dir.clone());
        Some(OwnCopies {
            root,
            commands: own,
        })
    }

    /// Worker `worker`'s directory, holding a fresh copy of `tree` (its
    /// build dirs left out): whatever the last test left there, mode
    /// bits included, is gone.
    fn make(&self, worker: usize, tree: &Path) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.root.join(worker.to_string());
        if fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).ok()?;
            for entry in fs::read_dir(&dir).ok()?.flatten() {
                let path = entry.path();
                match entry.file_type() {
                    Ok(kind) if kind.is_dir() => fs::remove_dir_all(&path).ok()?,
                    _ => fs::remove_file(&path).ok()?,
                }
            }
        } else {
            let _ = fs::remove_file(&dir);
            fs::create_dir(&dir).ok()?;
        }
        crate::beneath::copy_into(tree, &dir, &crate::lang::build_dirs()).ok()?;
        Some(dir)
    }
}

/// Files and bytes of `dir`, `skip` directories left out, counted up to
/// a little past the limits.
fn tree_size(dir: &Path, skip: &[&str]) -> (usize, u64) {
    let (mut files, mut bytes) = (0usize, 0u64);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            if files > OWN_COPY_FILES || bytes > OWN_COPY_BYTES {
                return (files, bytes);
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() {
                if !skip.iter().any(|s| name == *s) {
                    stack.push(entry.path());
                }
            } else {
                files += 1;
                bytes += entry.metadata().map_or(0, |m| m.len());
            }
        }
    }
    (files, bytes)
}

/// A test binary copied out of the build, as a later run needs it.
#[derive(Debug, Clone)]
pub(crate) struct Copied {
    /// Prefix of its tests' inventory names.
    label: String,
    /// The name it runs as.
    target: String,
    copied: PathBuf,
    /// The copy, canonical.
    root: PathBuf,
    /// Its package's directory in the copy.
    cwd: PathBuf,
    /// What followed `--` in the acceptance command.
    args: Vec<String>,
}

/// Runs again, each alone, the tests `names` (inventory names of this
/// run) of the binaries `run` copied; what each reported.
pub(super) fn run_alone(
    lang: &dyn Language,
    commands: &AttemptCommands,
    run: &mut CheckRun,
    names: &[String],
    cancel: &CancelToken,
) -> Result<TestResults, CheckError> {
    let runner = read_only_tree(commands, lang);
    let mut results = TestResults::default();
    for name in names {
        let Some((binary, listed)) = run
            .binaries
            .iter()
            .find_map(|b| lang.listed_name(&b.label, name).map(|l| (b, l)))
        else {
            continue;
        };
        let mut argv = vec![binary.target.clone()];
        argv.extend(binary.args.iter().cloned());
        let argv = lang.run_one_argv(&argv, listed);
        let outcome = match runner.run_binary(
            &binary.copied,
            &argv,
            &binary.cwd,
            RESULTS_OUTPUT_CAP,
            cancel,
        ) {
            Ok(outcome) => outcome,
            Err(err) => {
                // A test of the first run broke the tree (as in
                // `run_all`): this one reports nothing, and the runner is
                // not to blame.
                if tree_fault(&binary.root, &binary.cwd).is_none() {
                    return Err(err.into());
                }
                run.unstarted.insert(name.clone());
                continue;
            }
        };
        let stdout = outcome.stdout.to_text();
        if let OneRun::Reported(result) = lang.read_one(listed, &stdout) {
            results.tests.insert(name.clone(), result);
        }
        let output = lang
            .failure_output(listed, &stdout)
            .unwrap_or_else(|| format!("{stdout}{}", outcome.stderr.to_text()));
        results
            .outputs
            .insert(name.clone(), cap(&output, EXCERPT_BYTES));
        run.commands.push(CheckCommand {
            outcome,
            tests: None,
        });
    }
    Ok(results)
}

/// What a listing-only check (the oracle's tree) found: its commands and
/// its listing.
pub(super) struct Listed {
    pub(super) commands: Vec<CheckCommand>,
    pub(super) listing: Listing,
}

/// The tests a tree lists, by inventory name, or why it lists none.
#[derive(Debug)]
pub(super) enum Listing {
    Tests(Vec<String>),
    Unlisted(String),
}

/// Builds and lists every test binary's tests, running none.
pub(super) fn list_only(
    spec: &CheckSpec<'_>,
    lang: &dyn Language,
    commands: &AttemptCommands,
    report: &mut CheckLog,
    cancel: &CancelToken,
) -> Result<Listed, CheckError> {
    let mut run = CheckRun::default();
    let Some(built) = build(spec, lang, commands, report, &mut run, cancel)? else {
        let why = run.note.unwrap_or_else(|| "the build was cancelled".into());
        return Ok(Listed {
            commands: run.commands,
            listing: Listing::Unlisted(why),
        });
    };
    let copies = copy_binaries(spec.bin_dir, &built.canonical, &built.binaries, &mut run)?;
    let mut names = Vec::new();
    for (binary, copied) in &copies {
        let unit = built.unit(lang, binary, copied);
        let (listed, outcome) = unit.list(commands, report, &mut run, cancel)?;
        run.commands.push(CheckCommand {
            outcome,
            tests: None,
        });
        match listed {
            Some(listed) => {
                names.extend(listed.iter().map(|n| lang.inventory_name(&binary.label, n)));
            }
            None => break,
        }
    }
    let _ = fs::remove_dir_all(spec.bin_dir);
    let listing = match run.harness.take() {
        Some(why) => Listing::Unlisted(why),
        None => Listing::Tests(names),
    };
    Ok(Listed {
        commands: run.commands,
        listing,
    })
}

/// A build that made test binaries.
struct Built {
    /// The copy, canonical (cargo reports absolute paths).
    canonical: PathBuf,
    binaries: Vec<TestBinary>,
    /// What every binary gets (what followed `--`).
    args: Vec<String>,
}

impl Built {
    fn unit<'a>(
        &'a self,
        lang: &'a dyn Language,
        binary: &'a TestBinary,
        copied: &'a Path,
    ) -> Unit<'a> {
        Unit {
            lang,
            binary,
            copied,
            root: &self.canonical,
            cwd: self.canonical.join(&binary.package),
            args: &self.args,
        }
    }
}

/// Builds the tests; `None` (with why in `run`) when that gives no binary
/// to run: the build failed, timed out, was cancelled or made none.
fn build(
    spec: &CheckSpec<'_>,
    lang: &dyn Language,
    commands: &AttemptCommands,
    report: &mut CheckLog,
    run: &mut CheckRun,
    cancel: &CancelToken,
) -> Result<Option<Built>, CheckError> {
    let dir = &commands.dir;
    let (build_argv, args) = lang.build_argv(&spec.acceptance.command);
    let build = commands.run_argv_capped(&build_argv, RESULTS_OUTPUT_CAP, cancel)?;
    report.command(&build_argv, &build);
    let stdout = build.stdout.to_text();
    run.dependency_hashes = dependency_hashes(&stdout);
    let canonical = dir.canonicalize().map_err(|source| CheckError::Prepare {
        path: dir.to_path_buf(),
        source,
    })?;
    let binaries = lang.test_binaries(&stdout, &canonical);
    let (built, timed_out, cancelled) = (build.success(), build.timed_out, build.cancelled);
    run.commands.push(CheckCommand {
        outcome: build,
        tests: None,
    });
    if cancelled {
        return Ok(None);
    }
    if !built {
        if timed_out {
            run.add_note("the build timed out".into());
        } else {
            run.add_note("the tests did not build".into());
            let tree = if spec.patch.is_some() {
                "patched"
            } else {
                "pristine"
            };
            run.uncollectable = Some(format!("the tests do not build on the {tree} source"));
        }
        return Ok(None);
    }
    if binaries.is_empty() {
        run.add_note("the build produced no test binary".into());
        if spec.patch.is_none() {
            run.harness = Some("the build produced no test binary: no test is listed".into());
        }
        return Ok(None);
    }
    Ok(Some(Built {
        canonical,
        binaries,
        args,
    }))
}

/// Every binary is copied out before any of them runs: a test binary runs
/// with the copy writable, so one run first could otherwise replace the
/// others in `target/` before they are copied.
fn copy_binaries<'b>(
    bin_dir: &Path,
    canonical: &Path,
    binaries: &'b [TestBinary],
    run: &mut CheckRun,
) -> Result<Vec<(&'b TestBinary, PathBuf)>, CheckError> {
    let prepare = |source| CheckError::Prepare {
        path: bin_dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(bin_dir).map_err(prepare)?;
    let bin_dir = bin_dir.canonicalize().map_err(prepare)?;
    let root = Dir::open(canonical).map_err(|source| CheckError::Prepare {
        path: canonical.to_path_buf(),
        source,
    })?;
    let mut copies = Vec::new();
    for (i, binary) in binaries.iter().enumerate() {
        let copied = bin_dir.join(format!("{i}-{}", binary.target));
        match copy_binary(&root, &binary.path, &copied) {
            Ok(()) => copies.push((binary, copied)),
            Err(why) => run.add_note(format!("{}: {why}", binary.label)),
        }
    }
    Ok(copies)
}

/// One test binary, as the runner runs it: from its runner-owned copy, in
/// its package's directory, with the command's test arguments.
struct Unit<'a> {
    lang: &'a dyn Language,
    binary: &'a TestBinary,
    copied: &'a Path,
    /// The copy the binary was built in.
    root: &'a Path,
    cwd: PathBuf,
    args: &'a [String],
}

/// How one test's own run ended.
struct Ran {
    outcome: Option<ExecOutcome>,
    /// `None`: not reported (or not run: the check ran out of time).
    result: Option<TestOutcome>,
    timed_out: bool,
    garbled: Option<String>,
    /// What the output says that an honest harness does not.
    anomaly: Option<String>,
    /// What a test that did not pass printed of its own, capped.
    output: Option<String>,
    /// Why its process could not start, when the tree is the cause.
    unstarted: Option<String>,
}

impl Ran {
    /// A test that did not run: the check ran out of time (`timed_out`),
    /// was cancelled, or lost the run (`garbled`).
    fn not_run(timed_out: bool, garbled: Option<String>) -> Ran {
        Ran {
            outcome: None,
            result: None,
            timed_out,
            garbled,
            anomaly: None,
            output: None,
            unstarted: None,
        }
    }
}

impl Unit<'_> {
    fn runner_argv(&self) -> Vec<String> {
        let mut argv = vec![self.binary.target.clone()];
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// The binary's tests, as it lists them, and the listing's command;
    /// no tests when it cannot list (recorded: a broken harness at the
    /// baseline, a note otherwise).
    fn list(
        &self,
        commands: &AttemptCommands,
        report: &mut CheckLog,
        run: &mut CheckRun,
        cancel: &CancelToken,
    ) -> Result<(Option<Vec<String>>, ExecOutcome), CheckError> {
        let argv = self.lang.list_argv(&self.runner_argv());
        let outcome =
            commands.run_binary(self.copied, &argv, &self.cwd, RESULTS_OUTPUT_CAP, cancel)?;
        report.command(&argv, &outcome);
        let read = self
            .lang
            .read_listing(&outcome.stdout.to_text(), outcome.exit_code);
        let listed = match read {
            Ok(listing) => Some(listing.tests),
            Err(why) => {
                let why = format!("{}: {why}", self.binary.label);
                if outcome.timed_out || outcome.cancelled {
                    run.add_note(format!("{why}: the listing timed out"));
                } else if run.harness.is_none() {
                    run.harness = Some(with_tail(&why, &stderr_tail(&outcome)));
                }
                None
            }
        };
        Ok((listed, outcome))
    }

    /// Runs each of `names` alone, `parallel` at a time; the one command
    /// for the binary that sums the runs up (with its listing, when it
    /// listed). The decoys' runs are not tests: the sum leaves them out.
    #[allow(clippy::too_many_arguments)]
    fn run_each(
        &self,
        runner: &AttemptCommands,
        own: Option<&OwnCopies>,
        names: &[String],
        listing: Option<ExecOutcome>,
        parallel: usize,
        decoys: &Decoys,
        report: &mut CheckLog,
        run: &mut CheckRun,
        cancel: &CancelToken,
    ) -> Result<CheckCommand, CheckError> {
        let started = Instant::now();
        let extra = decoys.extra();
        let ran = self.run_all(runner, own, names, parallel, cancel)?;
        let mut summary = Summary::new(
            &self.binary.target,
            self.copied,
            self.runner_argv().len() + 6,
            listing,
        );
        let mut garbled = Vec::new();
        let mut results = run.results.take().unwrap_or_default();
        for (name, ran) in names.iter().zip(ran) {
            let inventory = self.lang.inventory_name(&self.binary.label, name);
            let argv = self.lang.run_one_argv(&self.runner_argv(), name);
            match &ran.outcome {
                Some(outcome) if ran.result == Some(TestOutcome::Passed) => {
                    report.text.push_str(&format!(
                        "ok {inventory} ({} ms)\n",
                        outcome.duration.as_millis()
                    ));
                }
                Some(outcome) => report.command(&argv, outcome),
                None => match &ran.unstarted {
                    Some(why) => {
                        run.unstarted.insert(inventory.clone());
                        report
                            .text
                            .push_str(&format!("failed: {inventory}: {why}\n"));
                    }
                    None => report.text.push_str(&format!(
                        "not run: {inventory}: the check ran out of time\n"
                    )),
                },
            }
            if let Some(why) = &ran.garbled {
                garbled.push(format!("{inventory}: {why}"));
            }
            if let Some(why) = &ran.anomaly {
                run.anomalies.push(format!("{inventory}: {why}"));
            }
            if ran.timed_out {
                results.time_out(&inventory);
            } else if let Some(result) = ran.result {
                results.tests.insert(inventory.clone(), result);
            }
            if let Some(output) = ran.output {
                results.outputs.insert(inventory.clone(), output);
            }
            if !extra.contains(&inventory) {
                // The log names the test by its own name.
                let inventory = decoys.real_name(self.lang, &inventory);
                let passed = ran.result == Some(TestOutcome::Passed);
                summary.add(&inventory, passed, ran.timed_out, ran.outcome.as_ref());
            }
        }
        run.results = Some(results);
        for why in garbled {
            run.add_note(why);
        }
        Ok(summary.finish(started))
    }

    /// What the run of `name`, which did not pass, printed of its own: the
    /// part its harness gives it, else the run's last output (a crash, an
    /// early exit, a timeout), capped.
    fn own_output(&self, name: &str, stdout: &str, outcome: &ExecOutcome) -> Option<String> {
        let text = self.lang.failure_output(name, stdout).or_else(|| {
            let mut text = String::new();
            for (label, stream) in [
                ("stdout", stdout.to_string()),
                ("stderr", outcome.stderr.to_text()),
            ] {
                let stream = stream.trim();
                if !stream.is_empty() {
                    text.push_str(&format!("--- {label} ---\n{stream}\n"));
                }
            }
            (!text.is_empty()).then_some(text)
        })?;
        Some(cap(text.trim_end(), EXCERPT_BYTES))
    }

    /// The runs, in the order of `names`.
    fn run_all(
        &self,
        runner: &AttemptCommands,
        own: Option<&OwnCopies>,
        names: &[String],
        parallel: usize,
        cancel: &CancelToken,
    ) -> Result<Vec<Ran>, CheckError> {
        let base = self.runner_argv();
        let one = |worker: usize, name: &String| -> Result<Ran, ExecError> {
            if cancel.is_cancelled() || Instant::now() >= runner.deadline {
                return Ok(Ran::not_run(!cancel.is_cancelled(), None));
            }
            let argv = self.lang.run_one_argv(&base, name);
            // A copy of its own where the tree is small enough, else the
            // tree, read-only.
            let mine = own.and_then(|o| o.make(worker, self.root).map(|dir| (o, dir)));
            let (commands, workspace, cwd) = match &mine {
                Some((o, dir)) => (&o.commands, dir.clone(), dir.join(&self.binary.package)),
                None => (runner, self.root.to_path_buf(), self.cwd.clone()),
            };
            let ran = commands.run_binary_in(
                self.copied,
                &argv,
                &workspace,
                &cwd,
                RESULTS_OUTPUT_CAP,
                cancel,
            );
            let outcome = match ran {
                Ok(outcome) => outcome,
                Err(err) => {
                    // Something a test did to the tree stops the next
                    // one: that test fails, and the runner is not to
                    // blame (a cause outside the tree still is).
                    let Some(why) = tree_fault(&workspace, &cwd) else {
                        return Err(err);
                    };
                    let why = format!("its process could not start: {why} ({err})");
                    return Ok(Ran {
                        result: Some(TestOutcome::Failed),
                        output: Some(cap(&why, EXCERPT_BYTES)),
                        unstarted: Some(why),
                        ..Ran::not_run(false, None)
                    });
                }
            };
            let stdout = outcome.stdout.to_text();
            let (result, garbled) = match self.lang.read_one(name, &stdout) {
                _ if outcome.timed_out || outcome.cancelled => (None, None),
                OneRun::Reported(result) => (Some(result), None),
                OneRun::NotReported => (None, None),
                OneRun::Garbled(why) => (None, Some(why)),
            };
            let anomaly = match &garbled {
                Some(why) => Some(why.clone()),
                None if result.is_some() => self.lang.one_run_anomaly(name, &stdout),
                None => None,
            };
            let output = (result != Some(TestOutcome::Passed))
                .then(|| self.own_output(name, &stdout, &outcome))
                .flatten();
            Ok(Ran {
                timed_out: outcome.timed_out,
                outcome: Some(outcome),
                result,
                garbled,
                anomaly,
                output,
                unstarted: None,
            })
        };
        let workers = parallel.clamp(1, names.len().max(1));
        if workers == 1 {
            return names
                .iter()
                .map(|n| one(0, n).map_err(CheckError::from))
                .collect();
        }
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<Ran, ExecError>>>> =
            names.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|scope| {
            for worker in 0..workers {
                let (one, next, slots) = (&one, &next, &slots);
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(name) = names.get(i) else { break };
                        let ran = one(worker, name);
                        if let Ok(mut slot) = slots[i].lock() {
                            *slot = Some(ran);
                        }
                    }
                });
            }
        });
        slots
            .into_iter()
            .map(|slot| {
                let ran = slot.into_inner().ok().flatten();
                ran.unwrap_or_else(|| {
                    Ok(Ran::not_run(false, Some("the runner lost this run".into())))
                })
                .map_err(CheckError::from)
            })
            .collect()
    }
}

/// Why a process cannot start in `cwd` because of the tree `root` it lies
/// in, as the runner sees it: a directory on the way gone, not a
/// directory, or without search permission for its owner (a command runs
/// without the capabilities that pass over permission bits). `None` when
/// the way is clear, so the cause lies outside the tree.
fn tree_fault(root: &Path, cwd: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let rel = cwd.strip_prefix(root).ok()?;
    let mut dir = root.to_path_buf();
    let mut steps = vec![dir.clone()];
    for part in rel.components() {
        dir.push(part);
        steps.push(dir.clone());
    }
    for step in steps {
        let shown = match step.strip_prefix(root) {
            Ok(rel) if rel.as_os_str().is_empty() => "the copy's root".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => step.display().to_string(),
        };
        match fs::symlink_metadata(&step) {
            Err(_) => return Some(format!("{shown} is gone")),
            Ok(meta) if !meta.is_dir() => return Some(format!("{shown} is not a directory")),
            Ok(meta) if meta.permissions().mode() & 0o100 == 0 => {
                return Some(format!(
                    "{shown} cannot be entered (mode {:03o})",
                    meta.permissions().mode() & 0o777
                ));
            }
            Ok(_) => {}
        }
    }
    None
}

/// Copies a built binary (opened beneath the copy, no symlinks) to `to`,
/// read-only and executable.
fn copy_binary(root: &Dir, rel: &Path, to: &Path) -> Result<(), CopyError> {
    use std::os::unix::fs::OpenOptionsExt;
    let (mut from, meta) = root.open_file(rel)?;
    if meta.size > MAX_TEST_BINARY {
        return Err(CopyError::TooLarge(meta.size));
    }
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o555)
        .open(to)
        .map_err(|source| CopyError::Create {
            to: to.to_path_buf(),
            source,
        })?;
    std::io::copy(&mut (&mut from).take(MAX_TEST_BINARY), &mut out).map_err(CopyError::Copy)?;
    Ok(())
}

/// Why a test binary could not be copied.
#[derive(Debug, thiserror::Error)]
enum CopyError {
    #[error(transparent)]
    Open(#[from] crate::beneath::Error),
    #[error("{0} bytes, over {MAX_TEST_BINARY}")]
    TooLarge(u64),
    #[error("cannot create {}: {source}", .to.display())]
    Create {
        to: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot copy: {0}")]
    Copy(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_way_into_the_tree_that_is_closed_is_the_tree_s_fault() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let pkg = root.path().join("pkg");
        fs::create_dir(&pkg).unwrap();
        assert_eq!(tree_fault(root.path(), &pkg), None);
        fs::set_permissions(&pkg, fs::Permissions::from_mode(0o000)).unwrap();
        let why = tree_fault(root.path(), &pkg).unwrap();
        assert!(why.contains("pkg cannot be entered (mode 000)"), "{why}");
        fs::set_permissions(&pkg, fs::Permissions::from_mode(0o755)).unwrap();
        fs::remove_dir(&pkg).unwrap();
        assert!(
            tree_fault(root.path(), &pkg)
                .unwrap()
                .contains("pkg is gone")
        );
        assert_eq!(tree_fault(root.path(), Path::new("/elsewhere")), None);
    }

    #[test]
    fn parallelism_shares_the_cores_among_the_batch_workers() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        assert_eq!(test_parallelism(1), cores);
        assert_eq!(test_parallelism(0), cores);
        assert_eq!(test_parallelism(cores * 4), 1);
    }
}
