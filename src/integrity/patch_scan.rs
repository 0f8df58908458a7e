//! What a patch touches or names that a fix has no business with: test
//! infrastructure (a harness file, a test file, a hidden file's path,
//! harness configuration in a shared file) and harness internals. Pure:
//! the caller hands it each changed file's old and new bytes.
//!
//! Test infrastructure is also kept out of the acceptance tree (its
//! pristine or hidden version is used) unless an `editable` entry without
//! wildcards names the path exactly: a glob such as `**/*.py` lets a model
//! write code, not a `conftest.py` that rewrites every verdict. Harness
//! configuration inside a shared file (`pyproject.toml`) is only
//! signalled: the file holds the project's own metadata too.

use std::collections::BTreeSet;

use memchr::memmem;

use crate::lang;
use crate::protocol::{Signal, SignalKind};

/// One file the patch changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PatchFile<'a> {
    /// Workspace-relative, `/`-separated.
    pub rel: &'a str,
    /// The pristine source's content; `None` for a created file.
    pub old: Option<&'a [u8]>,
    /// The patched content; `None` for a deleted file.
    pub new: Option<&'a [u8]>,
}

impl PatchFile<'_> {
    fn change(&self) -> &'static str {
        match (self.old, self.new) {
            (None, _) => "created",
            (Some(_), None) => "deleted",
            (Some(_), Some(_)) => "changed",
        }
    }
}

/// What makes `rel` test infrastructure, if it is: a harness file, a test
/// file, or a path the hidden files have.
fn infrastructure(rel: &str, hidden: &BTreeSet<String>) -> Option<&'static str> {
    if lang::is_harness_file(rel) {
        Some("a test harness file")
    } else if hidden.contains(rel) {
        Some("a hidden test file's path")
    } else if lang::is_any_test_file(rel) {
        Some("a test file")
    } else {
        None
    }
}

/// Whether an `editable` entry without wildcards is exactly `rel`.
pub(crate) fn named_exactly(rel: &str, editable: &[String]) -> bool {
    editable.iter().any(|entry| {
        let entry = entry.strip_prefix("./").unwrap_or(entry);
        !entry.contains(['*', '?', '[', ']', '{', '}', '\\']) && entry == rel
    })
}

/// Whether acceptance keeps the patch's change of `rel` out (and uses the
/// pristine or hidden version).
pub(crate) fn kept_out(rel: &str, hidden: &BTreeSet<String>, editable: &[String]) -> bool {
    infrastructure(rel, hidden).is_some() && !named_exactly(rel, editable)
}

/// The patch's signals, file by file, in its order.
pub(crate) fn patch_signals(
    files: &[PatchFile<'_>],
    hidden: &BTreeSet<String>,
    editable: &[String],
) -> Vec<Signal> {
    let internals = lang::harness_internals();
    let mut signals = Vec::new();
    for file in files {
        if let Some(what) = infrastructure(file.rel, hidden) {
            let fate = if named_exactly(file.rel, editable) {
                "carried to acceptance (editable names it)"
            } else {
                "kept out of the acceptance tree (its pristine or hidden version is used)"
            };
            signals.push(Signal::new(
                SignalKind::TestInfrastructure,
                file.rel,
                format!("{what}, {}; {fate}", file.change()),
            ));
        }
        let config = |bytes: Option<&[u8]>| {
            bytes.and_then(|b| lang::harness_config(file.rel, &String::from_utf8_lossy(b)))
        };
        let (old_config, new_config) = (config(file.old), config(file.new));
        if old_config != new_config {
            signals.push(Signal::new(
                SignalKind::TestInfrastructure,
                file.rel,
                "changes the test harness's configuration ([tool.pytest...]); the file is carried",
            ));
        }
        let Some(new) = file.new else {
            continue;
        };
        let named: Vec<&str> = internals
            .iter()
            .copied()
            .filter(|needle| {
                let count = |bytes: &[u8]| memmem::find_iter(bytes, needle.as_bytes()).count();
                count(new) > file.old.map_or(0, count)
            })
            .collect();
        if !named.is_empty() {
            let quoted: Vec<String> = named.iter().map(|n| format!("`{n}`")).collect();
            signals.push(Signal::new(
                SignalKind::HarnessInternals,
                file.rel,
                format!("the patch adds {}", quoted.join(", ")),
            ));
        }
    }
    signals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<'a>(rel: &'a str, old: Option<&'a str>, new: Option<&'a str>) -> PatchFile<'a> {
        PatchFile {
            rel,
            old: old.map(str::as_bytes),
            new: new.map(str::as_bytes),
        }
    }

    fn editable(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn harness_files_are_kept_out_unless_named_exactly() {
        let hidden: BTreeSet<String> = ["tests/test_calc.py".to_string()].into();
        let globs = editable(&["**/*.py"]);
        assert!(kept_out("conftest.py", &hidden, &globs));
        assert!(kept_out("tests/test_calc.py", &hidden, &globs));
        assert!(kept_out("tests/test_new.py", &hidden, &globs));
        assert!(!kept_out("calc.py", &hidden, &globs));
        let exact = editable(&["conftest.py", "./calc.py"]);
        assert!(!kept_out("conftest.py", &hidden, &exact));
        assert!(kept_out("tests/conftest.py", &hidden, &exact));
        assert!(named_exactly("calc.py", &exact));
        assert!(!named_exactly("calc.py", &editable(&["calc.p?"])));
        // pyproject.toml is never dropped.
        assert!(!kept_out("pyproject.toml", &hidden, &globs));
    }

    #[test]
    fn the_patch_signals_infrastructure_configuration_and_new_internals() {
        let hidden = BTreeSet::new();
        let files = [
            file(
                "conftest.py",
                None,
                Some("def pytest_runtest_makereport(item, call):\n    pass\n"),
            ),
            file(
                "cli.py",
                Some("import sys\nsys.exit(main())\n"),
                Some("import sys\nsys.exit(main())\n# fixed\n"),
            ),
            file(
                "calc.py",
                Some("x = 1\n"),
                Some("import _pytest.runner\nx = 2\n"),
            ),
            file(
                "pyproject.toml",
                Some("[project]\nname = \"calc\"\n"),
                Some(
                    "[project]\nname = \"calc\"\n\n[tool.pytest.ini_options]\naddopts = \"-p evil\"\n",
                ),
            ),
            file(
                "src/lib.rs",
                Some("fn a() {}\n"),
                Some("fn a() { let _ = 1; }\n"),
            ),
        ];
        let signals = patch_signals(&files, &hidden, &editable(&["**/*.py", "pyproject.toml"]));
        let lines: Vec<String> = signals.iter().map(Signal::line).collect();
        assert_eq!(signals.len(), 4, "{lines:#?}");
        assert_eq!(signals[0].kind, SignalKind::TestInfrastructure);
        assert!(lines[0].contains("conftest.py: a test harness file, created; kept out"));
        assert_eq!(signals[1].kind, SignalKind::HarnessInternals);
        assert!(lines[1].contains("conftest.py") && lines[1].contains("`pytest_runtest`"));
        // `sys.exit` was there already: not new.
        assert!(lines[2].contains("calc.py") && lines[2].contains("`_pytest`"));
        assert!(lines[3].contains("pyproject.toml") && lines[3].contains("configuration"));
    }
}
