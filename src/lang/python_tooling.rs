//! Python's tooling: requirement, lock and project files are a setup's
//! inputs; `python3 -m py_compile FILES` is the build check; declared test
//! names are pytest node ids or Django's `test_x (mod.Class)`; an Exercism
//! exercise runs pytest (pinned, from the job cache) over its test files.

use super::tooling::{Exercise, Tooling, TrackJob};
use super::{Language, Python};

/// Where the JUnit file of an imported job's pytest run goes.
pub(crate) const PYTEST_JUNIT_FILE: &str = ".agent-runtime-junit.xml";
/// The pytest every imported Python job installs into its cache.
pub(crate) const PYTEST_PIN: &str = "pytest==8.3.4";

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

/// Extras that name a project's test dependencies.
const TEST_EXTRAS: &[&str] = &["test", "tests", "testing", "dev"];

/// The requirements a project declares, read without running anything:
/// `pyproject.toml`'s `[project] dependencies` and its test extras
/// (`optional-dependencies` `test`, `tests`, `testing`, `dev`), and
/// `setup.cfg`'s `[options] install_requires` and the same extras. Each
/// file is `(name, text)`; `setup.py` is code and is not read.
pub(crate) fn declared_requirements(files: &[(String, String)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |req: &str| {
        let req = req.trim();
        if !req.is_empty() && !req.starts_with('#') && !out.iter().any(|r| r == req) {
            out.push(req.to_string());
        }
    };
    for (name, text) in files {
        match name.as_str() {
            "pyproject.toml" => {
                let Ok(doc) = text.parse::<toml::Table>() else {
                    continue;
                };
                let Some(project) = doc.get("project").and_then(toml::Value::as_table) else {
                    continue;
                };
                let strings = |v: Option<&toml::Value>| -> Vec<String> {
                    v.and_then(toml::Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                for req in strings(project.get("dependencies")) {
                    add(&req);
                }
                let extras = project
                    .get("optional-dependencies")
                    .and_then(toml::Value::as_table);
                for extra in TEST_EXTRAS {
                    for req in strings(extras.and_then(|e| e.get(*extra))) {
                        add(&req);
                    }
                }
            }
            "setup.cfg" => {
                let mut section = String::new();
                let mut key = String::new();
                for line in text.lines() {
                    let trimmed = line.trim();
                    if trimmed.starts_with('[') && trimmed.ends_with(']') {
                        section = trimmed[1..trimmed.len() - 1].trim().to_string();
                        key.clear();
                        continue;
                    }
                    if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
                        continue;
                    }
                    let continued = line.starts_with([' ', '\t']);
                    let value = if continued {
                        trimmed
                    } else {
                        match trimmed.split_once(['=', ':']) {
                            Some((k, v)) => {
                                key = k.trim().to_string();
                                v.trim()
                            }
                            None => continue,
                        }
                    };
                    let wanted = (section == "options" && key == "install_requires")
                        || (section == "options.extras_require"
                            && TEST_EXTRAS.contains(&key.as_str()));
                    if wanted {
                        for req in value.split(';').next().into_iter() {
                            add(req);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_are_read_from_pyproject_and_setup_cfg() {
        let pyproject = "[project]\nname = \"x\"\ndependencies = [\"attrs>=20\"]\n[project.optional-dependencies]\ntest = [\"hypothesis\"]\ndocs = [\"sphinx\"]\n";
        let cfg = "[metadata]\nname = x\n[options]\ninstall_requires =\n    six\n    attrs>=20\n[options.extras_require]\ntesting =\n    mock\n";
        assert_eq!(
            declared_requirements(&[
                ("pyproject.toml".into(), pyproject.into()),
                ("setup.cfg".into(), cfg.into())
            ]),
            ["attrs>=20", "hypothesis", "six", "mock"]
        );
    }

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
