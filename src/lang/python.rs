//! Python: pytest lists its tests (`--collect-only`) as node ids
//! (`tests/test_x.py::TestC::test_t[p]`) and reports them in a JUnit file
//! as `classname::name` (`tests.test_x.TestC::test_t[p]`), which is what
//! the inventory holds. The mapping between the two is here and nowhere
//! else.

use super::canary::{draw_failing, draw_name, style_of};
use super::python_scan::{Function, functions, top_level_slots};
use super::twins::{Twinned, Wanted};
use super::{
    Canary, EXCERPT_LINES, FirstError, Language, Listing, ListingError, PinContext, Pinned,
    RunModel,
};
use crate::manifest::{Acceptance, ResultsFormat};

/// pytest, writing JUnit XML.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Python;

impl Language for Python {
    fn name(&self) -> &'static str {
        "python"
    }

    /// `ERROR collecting FILE` (or an import error of a test module), named
    /// by its first `E   ` line.
    fn first_error(&self, lines: &[&str]) -> Option<FirstError> {
        let start = lines.iter().position(|l| {
            l.contains("ERROR collecting ")
                || l.starts_with("ImportError while importing test module")
        })?;
        let header = lines[start].trim_matches(|c: char| c == '_' || c == '=' || c.is_whitespace());
        let named = lines[start..]
            .iter()
            .take(EXCERPT_LINES)
            .find_map(|l| l.strip_prefix("E ").map(str::trim))
            .map_or_else(|| header.to_string(), |e| format!("{header}: {e}"));
        Some(FirstError {
            start,
            named,
            what: "the tests did not collect",
        })
    }

    /// A JUnit-reading command that runs pytest (`pytest ...`,
    /// `python3 -m pytest ...`).
    fn runs(&self, acceptance: &Acceptance) -> bool {
        if !matches!(acceptance.results_format(), ResultsFormat::Junit(_)) {
            return false;
        }
        let command = &acceptance.command;
        let program = command
            .first()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .unwrap_or_default();
        matches!(program, "pytest" | "py.test")
            || command
                .windows(2)
                .any(|pair| pair[0] == "-m" && pair[1] == "pytest")
    }

    fn model(&self) -> RunModel {
        RunModel::OneRun
    }

    /// The command without its JUnit file, listing node ids one per line
    /// (`--verbosity=-1` last, whatever `-q` or `-v` came before).
    fn list_argv(&self, runner: &[String]) -> Vec<String> {
        let mut argv = Vec::with_capacity(runner.len() + 2);
        let mut skip_next = false;
        for arg in runner {
            if skip_next {
                skip_next = false;
                continue;
            }
            if arg == "--junitxml" || arg == "--junit-xml" {
                skip_next = true;
                continue;
            }
            if arg.starts_with("--junitxml=") || arg.starts_with("--junit-xml=") {
                continue;
            }
            argv.push(arg.clone());
        }
        argv.extend(["--collect-only", "--verbosity=-1"].map(String::from));
        argv
    }

    /// Node ids up to the first blank line; the files that failed to
    /// collect from the `ERROR collecting PATH` headers and the short
    /// summary's `ERROR PATH` lines. Exit 0, 5 (nothing collected) and 2
    /// with collection errors are listings; anything else (1: pytest is
    /// not installed; 4: a usage error) is not.
    fn read_listing(&self, stdout: &str, exit: Option<i32>) -> Result<Listing, ListingError> {
        let mut listing = Listing::default();
        let mut lines = stdout.lines();
        for line in lines.by_ref() {
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if line.contains("::") && !line.starts_with(' ') {
                listing.tests.push(line.to_string());
            }
        }
        let mut in_summary = false;
        for line in lines {
            let line = line.trim_end();
            if line.contains("short test summary info") {
                in_summary = true;
                continue;
            }
            let header = line
                .trim_matches('_')
                .trim()
                .strip_prefix("ERROR collecting ");
            let summary = in_summary
                .then(|| line.strip_prefix("ERROR "))
                .flatten()
                .map(|rest| rest.split(" - ").next().unwrap_or(rest));
            if let Some(path) = header.or(summary).map(str::trim)
                && !path.is_empty()
                && !listing.uncollectable.iter().any(|p| p == path)
            {
                listing.uncollectable.push(path.to_string());
            }
        }
        match exit {
            Some(0 | 5) => Ok(listing),
            Some(2) if !listing.uncollectable.is_empty() => Ok(listing),
            code => Err(ListingError::Failed {
                runner: "pytest",
                tests: "the tests",
                exit: code,
            }),
        }
    }

    /// pytest's own mangling (`mangle_test_address` in its junitxml
    /// plugin): the file path dotted and without `.py`, classes appended,
    /// the function (with its parameters) after `::`.
    fn inventory_name(&self, _unit: &str, listed: &str) -> String {
        let (path, params) = match listed.find('[') {
            Some(at) => listed.split_at(at),
            None => (listed, ""),
        };
        let mut parts: Vec<String> = path.split("::").map(String::from).collect();
        if let Some(file) = parts.first_mut() {
            let dotted = file.replace('/', ".");
            *file = dotted.strip_suffix(".py").unwrap_or(&dotted).to_string();
        }
        let function = parts.pop().unwrap_or_default();
        if parts.is_empty() {
            return format!("{function}{params}");
        }
        format!("{}::{function}{params}", parts.join("."))
    }

    /// pytest runs its tests together: there is no single test to name.
    fn listed_name<'a>(&self, _unit: &str, _name: &'a str) -> Option<&'a str> {
        None
    }

    /// A parametrized case belongs to its function.
    fn function_of<'a>(&self, name: &'a str) -> &'a str {
        match (name.find('['), name.ends_with(']')) {
            (Some(at), true) if name[..at].contains("::") => &name[..at],
            _ => name,
        }
    }

    /// pytest's default `python_files`: `test_*.py` and `*_test.py`.
    fn is_test_file(&self, rel: &str) -> bool {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        file.ends_with(".py")
            && (file.starts_with("test_") || file.trim_end_matches(".py").ends_with("_test"))
    }

    /// `def test_*` at module level and in `class Test*` and
    /// `unittest.TestCase` subclass bodies (nested classes too), read
    /// lexically (`python_scan.rs`).
    fn defined_tests(&self, rel: &str, text: &str) -> Vec<String> {
        let module = module_of(rel);
        functions(text)
            .into_iter()
            .filter(Function::is_test)
            .map(|f| {
                let mut path = module.clone();
                for (class, _) in &f.classes {
                    path.push('.');
                    path.push_str(class);
                }
                format!("{path}::{}", f.name)
            })
            .collect()
    }

    /// `tests.test_x::t` and `tests.test_x.TestC::t` are tests of
    /// `tests/test_x.py`.
    fn test_of_file(&self, rel: &str, name: &str) -> bool {
        let module = module_of(rel);
        name.strip_prefix(&module)
            .is_some_and(|rest| rest.starts_with("::") || rest.starts_with('.'))
    }

    /// A module-level `test_` function before one of the file's top-level
    /// tests (or at its end), asserting `actual == expected` where it is
    /// not.
    fn plant_canary(&self, rel: &str, text: &str, rng: &mut fastrand::Rng) -> Option<Canary> {
        if !self.is_test_file(rel) {
            return None;
        }
        let tests = self.defined_tests(rel, text);
        if tests.is_empty() {
            return None;
        }
        let own: Vec<&str> = tests
            .iter()
            .map(|name| name.rsplit("::").next().unwrap_or(name))
            .collect();
        let function = draw_name(style_of(&own, "test_"), &own, text, rng);
        let slots = top_level_slots(text);
        let at = slots[rng.usize(..slots.len())];
        let failing = draw_failing(rng);
        let block = format!(
            "def {function}():\n    expected = {}\n    actual = {} + {}\n    assert actual == expected, \"{}\"\n",
            failing.expected, failing.left, failing.right, failing.message
        );
        let planted = if at >= text.len() {
            let gap = if text.ends_with('\n') {
                "\n\n"
            } else {
                "\n\n\n"
            };
            format!("{text}{gap}{block}")
        } else {
            format!("{}{block}\n\n{}", text.get(..at)?, text.get(at..)?)
        };
        Some(Canary {
            text: planted,
            name: format!("{}::{function}", module_of(rel)),
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
        if !self.is_test_file(rel) {
            return None;
        }
        super::python_twins::plant(&module_of(rel), text, wanted, also, rng)
    }

    /// The command with `-k` naming the tests' functions (drawn fresh, so
    /// no other test's name contains one).
    fn select_argv(&self, command: &[String], names: &[String]) -> Option<Vec<String>> {
        let functions: Vec<&str> = names
            .iter()
            .map(|name| {
                let function = self.function_of(name);
                function.rsplit("::").next().unwrap_or(function)
            })
            .collect();
        if functions.is_empty() {
            return None;
        }
        let mut argv = command.to_vec();
        argv.push("-k".into());
        argv.push(functions.join(" or "));
        Some(argv)
    }

    /// `-x`, `--exitfirst`, `--maxfail`, `--stepwise` stop the run at a
    /// failure: the canary's would hide the tests after it.
    fn canaries_unfit(&self, command: &[String]) -> Option<String> {
        let stops = |arg: &str| {
            matches!(arg, "-x" | "--exitfirst" | "--sw" | "--stepwise")
                || arg.starts_with("--maxfail")
                || (arg.starts_with('-')
                    && !arg.starts_with("--")
                    && arg.contains('x')
                    && arg.len() <= 4
                    && arg[1..].chars().all(|c| c.is_ascii_alphabetic()))
        };
        command.iter().find(|a| stops(a)).map(|arg| {
            format!("the acceptance command stops at its first failure ({arg}), which a canary always is")
        })
    }

    /// Bytecode and pytest's cache (written unless `-p no:cacheprovider`).
    fn build_dirs(&self) -> &'static [&'static str] {
        &["__pycache__", ".pytest_cache"]
    }

    /// pytest's plugins and configuration files.
    fn is_harness_file(&self, rel: &str) -> bool {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        matches!(
            file,
            "conftest.py" | "pytest.ini" | ".pytest.ini" | "setup.cfg" | "tox.ini"
        )
    }

    /// pytest reads the pristine source's configuration (its first of
    /// `pytest.ini`, `.pytest.ini`, `pyproject.toml` with
    /// `[tool.pytest.ini_options]`, `tox.ini` with `[pytest]`, `setup.cfg`
    /// with `[tool:pytest]`, as pytest looks for them; an empty one when
    /// it has none) from a copy outside the tree (`-c`), with the tree as
    /// its root and where conftest files stop (`--rootdir`,
    /// `--confcutdir`), no cache, plugin autoload off (`[acceptance]
    /// plugins` loaded by name) and no user site: nothing in the tree
    /// configures it. A command that names its own configuration (`-c`)
    /// keeps it.
    fn pin_harness(&self, command: &[String], ctx: &PinContext<'_>) -> Option<Pinned> {
        let names_config = command
            .iter()
            .any(|a| a == "-c" || a.starts_with("--config-file") || a.starts_with("--rootdir"));
        let mut argv = command.to_vec();
        let mut files = Vec::new();
        if !names_config {
            let (name, text) = pristine_config(ctx.pristine)
                .unwrap_or_else(|| ("pytest.ini", "[pytest]\n".to_string()));
            let path = ctx.config_dir.join(name).display().to_string();
            let tree = ctx.tree.display().to_string();
            argv.extend(["-c".to_string(), path, "--rootdir".into(), tree]);
            files.push((name.to_string(), text));
        }
        argv.push(format!("--confcutdir={}", ctx.tree.display()));
        argv.extend(["-p", "no:cacheprovider"].map(String::from));
        for plugin in ctx.plugins {
            argv.extend(["-p".to_string(), plugin.clone()]);
        }
        Some(Pinned {
            command: argv,
            files,
        })
    }

    /// No plugin loaded by its installation alone, no user site.
    fn harness_env(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1"),
            ("PYTHONNOUSERSITE", "1"),
        ]
    }

    /// `.pth` files, `sitecustomize.py` and `usercustomize.py`: Python
    /// runs them at startup wherever they lie on its path.
    fn is_startup_file(&self, rel: &str) -> bool {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        file.ends_with(".pth") || matches!(file, "sitecustomize.py" | "usercustomize.py")
    }

    /// `pyproject.toml`'s `[tool.pytest...]` tables, as written.
    fn harness_config(&self, rel: &str, text: &str) -> Option<String> {
        if rel.rsplit('/').next() != Some("pyproject.toml") {
            return None;
        }
        let mut found = String::new();
        let mut inside = false;
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                let header = trimmed.trim_start_matches('[').trim_start();
                inside = header.starts_with("tool.pytest");
            }
            if inside {
                found.push_str(trimmed);
                found.push('\n');
            }
        }
        (!found.is_empty()).then_some(found)
    }

    /// pytest's own modules and hooks, unittest's runner, and the ways to
    /// end the process.
    fn harness_internals(&self) -> &'static [&'static str] {
        &[
            "_pytest",
            "pytest_runtest",
            "pytest_collection",
            "pytest_report",
            "unittest.main",
            "os._exit",
            "sys.exit",
        ]
    }
}

/// The pristine configuration pytest would read: the first of its
/// configuration files that configures it, by name, with its text.
fn pristine_config(read: &dyn Fn(&str) -> Option<String>) -> Option<(&'static str, String)> {
    let sections: [(&str, Option<&str>); 5] = [
        ("pytest.ini", None),
        (".pytest.ini", None),
        ("pyproject.toml", Some("[tool.pytest.ini_options]")),
        ("tox.ini", Some("[pytest]")),
        ("setup.cfg", Some("[tool:pytest]")),
    ];
    sections.into_iter().find_map(|(name, section)| {
        let text = read(name)?;
        let configures = section.is_none_or(|header| {
            text.lines()
                .any(|line| line.trim().replace(' ', "") == header.replace(' ', ""))
        });
        configures.then_some((name, text))
    })
}

/// The dotted module a test file is (`tests/test_x.py` is `tests.test_x`).
pub(super) fn module_of(rel: &str) -> String {
    let dotted = rel.replace('/', ".");
    dotted.strip_suffix(".py").unwrap_or(&dotted).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "tests/test_calc.py::test_a
tests/test_calc.py::test_p[1]
tests/test_calc.py::test_p[a b]
tests/test_calc.py::TestC::test_m

==================================== ERRORS ====================================
______________________ ERROR collecting tests/test_bad.py ______________________
ImportError while importing test module '/tmp/py/tests/test_bad.py'.
E   ImportError: cannot import name 'median' from 'calc' (/tmp/py/calc.py)
=========================== short test summary info ============================
ERROR tests/test_bad.py
ERROR tests/test_other.py - ImportError: nope
!!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!
4 tests collected, 2 errors in 0.11s
";

    #[test]
    fn the_listing_reads_node_ids_and_the_files_that_did_not_collect() {
        let listing = Python.read_listing(LISTING, Some(2)).unwrap();
        assert_eq!(listing.tests.len(), 4);
        assert_eq!(listing.tests[2], "tests/test_calc.py::test_p[a b]");
        assert_eq!(
            listing.uncollectable,
            ["tests/test_bad.py", "tests/test_other.py"]
        );
        let nothing = "\nno tests collected in 0.00s\n";
        assert!(
            Python
                .read_listing(nothing, Some(5))
                .unwrap()
                .tests
                .is_empty()
        );
        // `No module named pytest`: exit 1, nothing on stdout.
        assert!(Python.read_listing("", Some(1)).is_err());
        assert!(Python.read_listing("\n1 error\n", Some(2)).is_err());
    }

    #[test]
    fn node_ids_map_to_junit_names() {
        let name = |id: &str| Python.inventory_name("", id);
        assert_eq!(name("tests/test_x.py::test_a"), "tests.test_x::test_a");
        assert_eq!(name("tests/test_x.py::C::t[p]"), "tests.test_x.C::t[p]");
        assert_eq!(name("test_y.py::t[a::b/c.py]"), "test_y::t[a::b/c.py]");
        assert_eq!(name("a/b/test_z.py::K::L::t"), "a.b.test_z.K.L::t");
        assert_eq!(Python.function_of("tests.x.C::t[p]"), "tests.x.C::t");
        assert_eq!(Python.function_of("tests.x::t"), "tests.x::t");
    }

    #[test]
    fn listing_drops_the_junit_file_and_sets_the_verbosity_last() {
        let argv: Vec<String> = [
            "python3",
            "-m",
            "pytest",
            "-q",
            "--junitxml=r.xml",
            "--junit-xml",
            "s.xml",
            "tests",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            Python.list_argv(&argv),
            [
                "python3",
                "-m",
                "pytest",
                "-q",
                "tests",
                "--collect-only",
                "--verbosity=-1"
            ]
        );
    }

    #[test]
    fn a_canary_is_a_fresh_failing_module_function_among_the_files_tests() {
        let text = "import pytest\nfrom calc import mean\n\n\ndef test_add():\n    assert 1 + 1 == 2\n\n\n@pytest.mark.parametrize(\"x\", [1])\ndef test_mean_of_halves(x):\n    assert mean([1, 2]) == 1.5\n\n\nclass TestGroup:\n    def test_m(self):\n        pass\n";
        let mut names = std::collections::BTreeSet::new();
        for seed in 0..30 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let canary = Python
                .plant_canary("tests/test_calc.py", text, &mut rng)
                .unwrap();
            let function = canary.name.strip_prefix("tests.test_calc::").unwrap();
            assert!(function.starts_with("test_"), "{function}");
            assert!(!text.contains(function));
            let tests = Python.defined_tests("tests/test_calc.py", &canary.text);
            assert_eq!(tests.len(), 4, "{}", canary.text);
            assert!(tests.contains(&canary.name));
            // The decorator stays with its function.
            assert!(
                canary
                    .text
                    .contains("@pytest.mark.parametrize(\"x\", [1])\ndef test_mean_of_halves")
            );
            assert!(Python.test_of_file("tests/test_calc.py", &canary.name));
            names.insert(canary.name);
        }
        assert!(names.len() > 20);
        assert!(Python.test_of_file("tests/test_calc.py", "tests.test_calc.TestGroup::test_m"));
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(
            Python
                .canaries_unfit(&argv("python3 -m pytest -q --junitxml=r.xml"))
                .is_none()
        );
        for stop in ["-x", "-qx", "--exitfirst", "--maxfail=1", "--stepwise"] {
            let command = argv(&format!("python3 -m pytest {stop} --junitxml=r.xml"));
            assert!(Python.canaries_unfit(&command).is_some(), "{stop}");
        }
        assert!(!Python.test_of_file("tests/test_calc.py", "tests.test_calc2::test_m"));
        let mut rng = fastrand::Rng::with_seed(1);
        assert!(
            Python
                .plant_canary("tests/test_e.py", "import x\n", &mut rng)
                .is_none()
        );
        assert!(
            Python
                .plant_canary("tests/conftest.py", text, &mut rng)
                .is_none()
        );
        let no_newline = Python
            .plant_canary("test_a.py", "def test_a():\n    pass", &mut rng)
            .unwrap();
        assert_eq!(Python.defined_tests("test_a.py", &no_newline.text).len(), 2);
    }

    #[test]
    fn a_canary_never_parts_a_multi_line_decorator_from_its_function() {
        let text = "import pytest\n\n\ndef test_a():\n    pass\n\n\n@pytest.mark.xfail(\n    reason=\"later\",\n    strict=True,\n)\ndef test_b():\n    assert False\n\n\n@pytest.mark.parametrize(\n    \"x\",\n    [1, 2],\n)\n@pytest.mark.slow\ndef test_c(x):\n    pass\n";
        for seed in 0..50 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let canary = Python.plant_canary("test_d.py", text, &mut rng).unwrap();
            assert!(
                canary.text.contains(
                    "@pytest.mark.xfail(\n    reason=\"later\",\n    strict=True,\n)\ndef test_b():"
                ),
                "{}",
                canary.text
            );
            assert!(
                canary.text.contains(")\n@pytest.mark.slow\ndef test_c(x):"),
                "{}",
                canary.text
            );
            assert_eq!(Python.defined_tests("test_d.py", &canary.text).len(), 4);
        }
    }

    #[test]
    fn the_scan_reads_module_functions_and_test_class_methods() {
        let text = r#"import pytest
from calc import median

def helper():
    pass

def test_one():
    """A docstring.
def test_in_docstring(): pass
    """
    assert median([1]) == 1

@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert x

class TestGroup:
    def test_method(self):
        pass

    class TestNested:
        def test_inner(self):
            pass

    def helper(self):
        pass

class Helper:
    def test_not_collected(self):
        pass

class MedianTest(unittest.TestCase):
    def test_unittest_style(self):
        pass

async def test_async():
    pass
"#;
        assert_eq!(
            Python.defined_tests("tests/test_median.py", text),
            [
                "tests.test_median::test_one",
                "tests.test_median::test_param",
                "tests.test_median.TestGroup::test_method",
                "tests.test_median.TestGroup.TestNested::test_inner",
                "tests.test_median.MedianTest::test_unittest_style",
                "tests.test_median::test_async",
            ]
        );
        assert!(Python.is_test_file("tests/test_median.py"));
        assert!(Python.is_test_file("median_test.py"));
        assert!(!Python.is_test_file("tests/conftest.py"));
        assert!(!Python.is_test_file("tests/data.txt"));
    }
}
