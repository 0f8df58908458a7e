//! Python's tooling: requirement, lock and project files are a setup's
//! inputs; `python3 -m py_compile FILES` is the build check; declared test
//! names are pytest node ids or Django's `test_x (mod.Class)`; an Exercism
//! exercise runs pytest (pinned, from the job cache) over its test files.

use super::tooling::{Exercise, Tooling, TrackJob};
use super::{Language, Python};

/// Where the JUnit file of an imported job's pytest run goes.
pub const PYTEST_JUNIT_FILE: &str = ".agent-runtime-junit.xml";
/// The pytest every imported Python job installs into its cache.
pub const PYTEST_PIN: &str = "pytest==8.3.4";

impl Tooling for Python {
    fn tooling_name(&self) -> &'static str {
        "python"
    }

    fn setup_inputs(&self) -> &'static [&'static str] {
        &[
            "requirements*.txt",
            "requirements/*.txt",
            "*requirements*.txt",
            "constraints*.txt",
            "pyproject.toml",
            "setup.cfg",
            "Pipfile",
            "Pipfile.lock",
            "poetry.lock",
        ]
    }

    fn build_check(&self, files: &[String]) -> Vec<String> {
        let mut argv: Vec<String> = ["python3", "-m", "py_compile"].map(String::from).to_vec();
        argv.extend(files.iter().cloned());
        argv
    }

    /// A node id (`tests/test_x.py::C::t[p]`) as its JUnit name; a
    /// Django-style id (`test_x (mod.Class)`) as `mod.Class::test_x`.
    fn declared_name(&self, declared: &str) -> String {
        if declared.contains("::") {
            return self.inventory_name("", declared);
        }
        if let Some((name, rest)) = declared.split_once(" (")
            && let Some(class) = rest.strip_suffix(')')
            && !name.contains(' ')
        {
            return format!("{class}::{name}");
        }
        declared.to_string()
    }

    fn track_job(&self, exercise: &Exercise) -> Option<TrackJob> {
        let mut command: Vec<String> = [
            "python3",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            &format!("--junitxml={PYTEST_JUNIT_FILE}"),
        ]
        .map(String::from)
        .to_vec();
        command.extend(exercise.test.iter().cloned());
        Some(TrackJob {
            command,
            results: Some(format!("junit:{PYTEST_JUNIT_FILE}")),
            env: vec![
                ("PYTHONPATH".into(), "{cache}/site".into()),
                ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ],
            setup: vec![
                [
                    "python3",
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--no-compile",
                    "--no-cache-dir",
                    "--disable-pip-version-check",
                    "--target",
                    "{cache}/site",
                    PYTEST_PIN,
                ]
                .map(String::from)
                .to_vec(),
            ],
            verify: self.build_check(&exercise.solution),
            allow: vec!["python3 -m pytest **".into()],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_names_map_node_ids_and_django_ids() {
        assert_eq!(
            Python.declared_name("tests/test_x.py::TestC::test_t[a b]"),
            "tests.test_x.TestC::test_t[a b]"
        );
        assert_eq!(
            Python.declared_name("test_add (calc.tests.AddTests)"),
            "calc.tests.AddTests::test_add"
        );
        assert_eq!(Python.declared_name("odd name"), "odd name");
    }
}
