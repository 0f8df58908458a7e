//! The inventory of a baseline whose hidden tests cannot be collected or
//! built on the pristine source (they import a name the stub lacks, say):
//! collection and build errors are not tests. With an `[oracle]`, the
//! oracle's tree (pristine source, the oracle's fix, the acceptance dir;
//! the job author's code only, so trusted) lists the tests; without one,
//! or when that fails, the test functions the hidden files define, read
//! by the language table without running them.

use std::fs;
use std::path::{Path, PathBuf};

use super::carried::apply_patch;
use super::checks::{
    CheckCommand, CheckError, CheckLog, CheckRun, CheckSpec, RESULTS_OUTPUT_CAP, check_commands,
    prepare_tree,
};
use super::per_test::Listing;
use crate::agent::Workspace;
use crate::cancel::CancelToken;
use crate::decision::{Decision, parse_decision};
use crate::lang::{Language, RunModel};
use crate::manifest::{Oracle, ResultsFormat};
use crate::verdict::InventorySource;

/// Largest hidden test file read for its test functions.
const MAX_TEST_FILE: u64 = 4 << 20;
/// Most files looked at in the acceptance dir, and how deep.
const MAX_FILES: usize = 10_000;
const MAX_DEPTH: usize = 16;

/// Where the inventory comes from, and its names (empty: none found).
pub(super) fn inventory(
    spec: &CheckSpec<'_>,
    lang: &dyn Language,
    report: &mut CheckLog,
    run: &mut CheckRun,
    cancel: &CancelToken,
) -> Result<(InventorySource, Vec<String>), CheckError> {
    if let Some(oracle) = &spec.manifest.oracle {
        match oracle_tests(spec, lang, oracle, report, run, cancel)? {
            Listing::Tests(names) if !names.is_empty() => {
                return Ok((InventorySource::Oracle, names));
            }
            Listing::Tests(_) => report
                .text
                .push_str("note: the oracle's tree listed no test; reading the hidden files\n"),
            Listing::Unlisted(why) => report.text.push_str(&format!(
                "note: the oracle's tree: {why}; reading the hidden files\n"
            )),
        }
    }
    // The files that did not collect, when the runner named them and they
    // are hidden files; else every hidden test file.
    let only = (!run.uncollectable_files.is_empty()).then_some(&run.uncollectable_files[..]);
    let mut names = hidden_tests(&spec.acceptance.dir, lang, only);
    if names.is_empty() && only.is_some() {
        names = hidden_tests(&spec.acceptance.dir, lang, None);
    }
    report.text.push_str(&format!(
        "the hidden files define {}\n",
        crate::words::count(names.len(), "test function")
    ));
    Ok((InventorySource::HiddenFiles, names))
}

/// The tests the oracle's tree lists, by inventory name.
fn oracle_tests(
    spec: &CheckSpec<'_>,
    lang: &dyn Language,
    oracle: &Oracle,
    report: &mut CheckLog,
    run: &mut CheckRun,
    cancel: &CancelToken,
) -> Result<Listing, CheckError> {
    let dir = sibling(spec.dir, "oracle");
    let bin_dir = sibling(spec.bin_dir, "oracle");
    let oracle_spec = CheckSpec {
        dir: &dir,
        bin_dir: &bin_dir,
        ..*spec
    };
    let mut applied = Ok(());
    prepare_tree(&oracle_spec, &dir, |tree| {
        applied = apply_oracle(spec, oracle, tree);
        Ok(())
    })?;
    if let Err(why) = applied {
        let _ = fs::remove_dir_all(&dir);
        return Ok(Listing::Unlisted(why.to_string()));
    }
    let commands = check_commands(&oracle_spec, &dir, Some(lang))?;
    let listed = match lang.model() {
        RunModel::PerTest => {
            let listed = super::per_test::list_only(&oracle_spec, lang, &commands, report, cancel)?;
            run.commands.extend(listed.commands);
            listed.listing
        }
        RunModel::OneRun if !lang.lists() => {
            // A runner that cannot list (Jest): what the oracle's run
            // reports is what it would have listed.
            match spec.acceptance.results_format() {
                ResultsFormat::Junit(rel) => {
                    let argv = &spec.acceptance.command;
                    let outcome = commands.run_argv(argv, cancel)?;
                    report.command(argv, &outcome);
                    run.commands.push(CheckCommand::plain(outcome));
                    match super::one_run::read_junit(&dir, &rel) {
                        Ok(results) if results.complete => {
                            Listing::Tests(results.tests.keys().cloned().collect())
                        }
                        Ok(_) => Listing::Unlisted(format!("its {rel} is cut short")),
                        Err(why) => Listing::Unlisted(why.to_string()),
                    }
                }
                _ => Listing::Unlisted(format!("{} cannot list its tests", lang.name())),
            }
        }
        RunModel::OneRun => {
            let argv = lang.list_argv(&spec.acceptance.command);
            let outcome = commands.run_argv_capped(&argv, RESULTS_OUTPUT_CAP, cancel)?;
            report.command(&argv, &outcome);
            let read = lang.read_listing(&outcome.stdout.to_text(), outcome.exit_code);
            run.commands.push(CheckCommand {
                outcome,
                tests: None,
            });
            match read {
                Err(e) => Listing::Unlisted(e.to_string()),
                Ok(listing) if listing.uncollectable.is_empty() => Listing::Tests(
                    listing
                        .tests
                        .iter()
                        .map(|t| lang.inventory_name("", t))
                        .collect(),
                ),
                Ok(listing) => Listing::Unlisted(format!(
                    "its tests do not collect either: {}",
                    listing.uncollectable.join(", ")
                )),
            }
        }
    };
    let _ = fs::remove_dir_all(&dir);
    let _ = fs::remove_dir_all(&bin_dir);
    Ok(listed)
}

/// `path` with `-suffix` appended to its last component.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!("-{suffix}"));
    path.with_file_name(name)
}

/// Writes the oracle's fix into `tree`: a patch applied, or a script's
/// `write_file` and `replace_text` decisions made (editable paths only, as
/// the model's would be), up to its `finish`.
fn apply_oracle(spec: &CheckSpec<'_>, oracle: &Oracle, tree: &Path) -> Result<(), OracleError> {
    let editable = &spec.manifest.editable;
    let at = |path: &Path| {
        let path = path.display().to_string();
        move |why: &dyn std::fmt::Display| OracleError {
            path,
            why: why.to_string(),
        }
    };
    match oracle {
        Oracle::Patch(path) => {
            let text =
                fs::read_to_string(path).map_err(|e| at(path)(&format!("cannot read it: {e}")))?;
            let globs = crate::agent::editable_set(editable).map_err(|e| at(path)(&e))?;
            apply_patch(tree, &text, &globs)
                .map(|_| ())
                .map_err(|e| at(path)(&e))
        }
        Oracle::Script(path) => {
            let script = crate::provider::load_script(path).map_err(|e| at(path)(&e))?;
            let workspace = Workspace::open(tree, editable).map_err(|e| at(path)(&e))?;
            for reply in &script.replies {
                match parse_decision(reply) {
                    Ok(Decision::WriteFile { path, content }) => {
                        let _ = workspace.write(&path, &content);
                    }
                    Ok(Decision::ReplaceText {
                        path,
                        expected,
                        replacement,
                    }) => {
                        let _ = workspace.replace(&path, &expected, &replacement);
                    }
                    Ok(Decision::Finish { .. }) => break,
                    _ => {}
                }
            }
            Ok(())
        }
    }
}

/// The oracle's fix could not be made: `path` is the oracle's file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {why}")]
struct OracleError {
    path: String,
    why: String,
}

/// The test functions the hidden test files define (those named in
/// `only`, when given), by inventory name, sorted.
fn hidden_tests(
    acceptance_dir: &Path,
    lang: &dyn Language,
    only: Option<&[String]>,
) -> Vec<String> {
    let mut files = Vec::new();
    walk(acceptance_dir, "", 0, &mut files);
    let mut names: Vec<String> = files
        .into_iter()
        .filter(|rel| lang.is_test_file(rel))
        .filter(|rel| only.is_none_or(|only| only.iter().any(|o| o == rel)))
        .filter_map(|rel| {
            let path = acceptance_dir.join(&rel);
            let meta = fs::symlink_metadata(&path).ok()?;
            if !meta.is_file() || meta.len() > MAX_TEST_FILE {
                return None;
            }
            let text = fs::read_to_string(&path).ok()?;
            Some(lang.defined_tests(&rel, &text))
        })
        .flatten()
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Every regular file of the acceptance dir, relative, `/`-separated, in
/// name order.
pub(super) fn hidden_files(acceptance_dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    walk(acceptance_dir, "", 0, &mut files);
    files
}

/// The acceptance dir's test files, by the language's pattern.
pub(super) fn hidden_test_files(acceptance_dir: &Path, lang: &dyn Language) -> Vec<String> {
    hidden_files(acceptance_dir)
        .into_iter()
        .filter(|rel| lang.is_test_file(rel))
        .collect()
}

/// Regular files under `dir`, relative, `/`-separated; symlinks are not
/// followed.
fn walk(dir: &Path, rel: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_FILES {
            return;
        }
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => walk(&entry.path(), &child, depth + 1, out),
            Ok(kind) if kind.is_file() => out.push(child),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::{Python, Rust};

    #[test]
    fn the_hidden_files_are_scanned_by_the_language_table() {
        let dir = tempfile::tempdir().unwrap();
        let tests = dir.path().join("tests");
        fs::create_dir_all(&tests).unwrap();
        fs::write(tests.join("test_median.py"), "def test_a():\n    pass\n").unwrap();
        fs::write(tests.join("test_other.py"), "def test_b():\n    pass\n").unwrap();
        fs::write(tests.join("acceptance.rs"), "#[test]\nfn sums() {}\n").unwrap();
        fs::write(tests.join("conftest.py"), "def test_not(): pass\n").unwrap();
        assert_eq!(
            hidden_tests(dir.path(), &Python, None),
            ["tests.test_median::test_a", "tests.test_other::test_b"]
        );
        let only = ["tests/test_other.py".to_string()];
        assert_eq!(
            hidden_tests(dir.path(), &Python, Some(&only)),
            ["tests.test_other::test_b"]
        );
        assert_eq!(
            hidden_tests(dir.path(), &Rust, None),
            ["test/acceptance::sums"]
        );
        assert_eq!(
            sibling(Path::new("/d/work/j/1-baseline"), "oracle"),
            Path::new("/d/work/j/1-baseline-oracle")
        );
    }
}
