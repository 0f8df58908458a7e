//! SWE-bench instances as jobs. Each JSON line has `instance_id`, `repo`
//! (`owner/name`), `base_commit`, `patch` (the gold fix: the oracle),
//! `test_patch` (its files are the hidden tests), `FAIL_TO_PASS` and
//! `PASS_TO_PASS` (lists, or JSON-encoded strings of lists: the explicit
//! inventory), and optionally `problem_statement` (the prompt), `version`
//! and `environment_setup_commit` (kept as metadata). The source is the
//! repository's tree at `base_commit` in a fresh repository holding that
//! tree as its only commit: nothing of the clone's history, future,
//! remotes or refs comes along.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::job_dir::{
    AcceptanceDraft, JobFiles, ManifestDraft, OracleDraft, SandboxDraft, SetupDraft, exact_rule,
};
use super::{ImportError, ImportReport, Taken, git, input};
use crate::lang::PYTEST_JUNIT_FILE;

/// What the setup of an imported instance does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum SetupChoice {
    /// A virtualenv in the cache (`{cache}/venv`), pytest and the
    /// repository's declared requirements installed into it.
    #[default]
    Venv,
    /// A virtualenv, then these commands instead of the install.
    Commands(Vec<Vec<String>>),
    /// No setup: the machine's `python3` runs everything.
    None,
}

/// What `import swebench` was asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct SwebenchOptions {
    pub instances: PathBuf,
    /// Holds clones at `DIR/<owner>/<name>` or `DIR/<owner>__<name>`.
    pub repos: PathBuf,
    pub out: PathBuf,
    /// Replaces the test command (the test_patch's files are appended).
    pub test_cmd: Option<Vec<String>>,
    pub setup: SetupChoice,
    /// The interpreter that makes the venv: a directory holding `python3`
    /// (a pyenv version's `bin`), or the commands' own `python3`.
    pub python_bin: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct Instance {
    instance_id: String,
    repo: String,
    base_commit: String,
    patch: String,
    test_patch: String,
    #[serde(rename = "FAIL_TO_PASS")]
    fail_to_pass: serde_json::Value,
    #[serde(rename = "PASS_TO_PASS", default)]
    pass_to_pass: serde_json::Value,
    #[serde(default)]
    problem_statement: Option<String>,
    #[serde(default)]
    version: Option<serde_json::Value>,
    #[serde(default)]
    environment_setup_commit: Option<String>,
}

/// A list, or a JSON-encoded string of one (SWE-bench ships both).
fn names(value: &serde_json::Value) -> Result<Vec<String>, NamesError> {
    match value {
        serde_json::Value::Null => Ok(Vec::new()),
        serde_json::Value::String(text) => serde_json::from_str(text).map_err(NamesError::Encoded),
        other => Vec::<String>::deserialize(other).map_err(NamesError::NotNames),
    }
}

/// Why a test list could not be read.
#[derive(Debug, thiserror::Error)]
enum NamesError {
    #[error("a string that is not a JSON list: {0}")]
    Encoded(#[source] serde_json::Error),
    #[error(transparent)]
    NotNames(serde_json::Error),
}

/// Imports every instance of the JSON-lines file; names what it left out.
pub(crate) fn import_swebench(options: &SwebenchOptions) -> Result<ImportReport, ImportError> {
    let text = fs::read_to_string(&options.instances)
        .map_err(|e| input(&options.instances, format!("cannot read: {e}")))?;
    fs::create_dir_all(&options.out).map_err(super::write_err(&options.out))?;
    let mut report = ImportReport::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", options.instances.display(), index + 1);
        let instance: Instance = match serde_json::from_str(line) {
            Ok(instance) => instance,
            Err(e) => {
                report
                    .skipped
                    .push((at, format!("not a SWE-bench instance: {e}")));
                continue;
            }
        };
        let id = instance.instance_id.clone();
        match import_one(&instance, options)? {
            Taken::Imported((manifest, notes)) => {
                report.written.push((id.clone(), manifest));
                report
                    .notes
                    .extend(notes.into_iter().map(|n| (id.clone(), n)));
            }
            Taken::Left(why) => report.skipped.push((id, why)),
        }
    }
    Ok(report)
}

/// The clone of `repo` under `repos`.
fn clone_of(repos: &Path, repo: &str) -> Option<PathBuf> {
    let (owner, name) = repo.split_once('/')?;
    [
        repos.join(owner).join(name),
        repos.join(format!("{owner}__{name}")),
    ]
    .into_iter()
    .find(|p| p.join(".git").exists() || p.join("HEAD").is_file())
}

/// The job id of an instance: its id with anything outside
/// `[A-Za-z0-9._-]` made `_`.
fn job_id(instance_id: &str) -> String {
    instance_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

type Imported = (PathBuf, Vec<String>);

fn import_one(
    instance: &Instance,
    options: &SwebenchOptions,
) -> Result<Taken<Imported>, ImportError> {
    let (f2p, p2p) = match (names(&instance.fail_to_pass), names(&instance.pass_to_pass)) {
        (Ok(f), Ok(p)) => (f, p),
        (Err(e), _) => return Ok(Taken::Left(format!("FAIL_TO_PASS: {e}"))),
        (_, Err(e)) => return Ok(Taken::Left(format!("PASS_TO_PASS: {e}"))),
    };
    if f2p.is_empty() {
        return Ok(Taken::Left(
            "FAIL_TO_PASS is empty: nothing to judge a fix by".into(),
        ));
    }
    let Some(clone) = clone_of(&options.repos, &instance.repo) else {
        return Ok(Taken::Left(format!(
            "no clone of {} at {}/{} or {}/{}",
            instance.repo,
            options.repos.display(),
            instance.repo,
            options.repos.display(),
            instance.repo.replace('/', "__")
        )));
    };
    let base = match git::resolve(&clone, &instance.base_commit) {
        Ok(base) => base,
        Err(why) => return Ok(Taken::Left(why.to_string())),
    };
    let id = job_id(&instance.instance_id);
    let job = JobFiles::create(&options.out, &id)?;
    let source = job.source();
    fs::create_dir_all(&source).map_err(super::write_err(&source))?;
    if let Err(why) = git::export_tree(&clone, &base, &source) {
        let _ = fs::remove_dir_all(&job.root);
        return Ok(Taken::Left(why.to_string()));
    }
    let mut notes = Vec::new();

    // Hidden tests: the test_patch's files after the patch, applied to a
    // scratch copy of the base tree.
    let scratch = tempfile::tempdir().map_err(super::write_err(&job.root))?;
    super::job_dir::copy_filtered(&source, scratch.path(), &|rel, _| rel == ".git")?;
    let applied = match crate::gitdiff::apply_to_tree(
        scratch.path(),
        instance.test_patch.as_bytes(),
        &|_| true,
        64 << 20,
    ) {
        Ok(applied) => applied,
        Err(e) => {
            let _ = fs::remove_dir_all(&job.root);
            return Ok(Taken::Left(format!(
                "the test_patch does not apply at the base: {e}"
            )));
        }
    };
    let mut test_files = Vec::new();
    for rel in &applied.written {
        let bytes = fs::read(scratch.path().join(rel))
            .map_err(|e| input(scratch.path().join(rel), format!("cannot read: {e}")))?;
        job.write(&format!("tests/{rel}"), &bytes)?;
        test_files.push(rel.clone());
    }
    if !applied.deleted.is_empty() {
        notes.push(format!(
            "the test_patch deletes {}, which hidden tests laid over the source cannot do: left in the source",
            applied.deleted.join(", ")
        ));
    }
    if test_files.is_empty() {
        let _ = fs::remove_dir_all(&job.root);
        return Ok(Taken::Left("the test_patch writes no file".into()));
    }
    // The gold patch must apply to the base, as the oracle will.
    let check = tempfile::tempdir().map_err(super::write_err(&job.root))?;
    super::job_dir::copy_filtered(&source, check.path(), &|rel, _| rel == ".git")?;
    if let Err(e) =
        crate::gitdiff::apply_to_tree(check.path(), instance.patch.as_bytes(), &|_| true, 64 << 20)
    {
        let _ = fs::remove_dir_all(&job.root);
        return Ok(Taken::Left(format!(
            "the gold patch does not apply at the base: {e}"
        )));
    }
    job.write("oracle.patch", instance.patch.as_bytes())?;

    // What setup installs: the requirement files the base tree has, and
    // the requirements its project files declare.
    let (requirement_files, declared) = requirements(&source);

    // The fresh repository: the base tree as its only commit.
    let message = format!("{} at {}", instance.repo, instance.base_commit);
    if let Err(why) = git::fresh_repository(&source, &message) {
        let _ = fs::remove_dir_all(&job.root);
        return Ok(Taken::Left(why.to_string()));
    }

    let prompt = instance
        .problem_statement
        .clone()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| {
            format!(
                "Fix the issue of {} ({}).",
                instance.instance_id, instance.repo
            )
        });
    job.write("prompt.md", prompt.as_bytes())?;

    let mut command = options.test_cmd.clone().unwrap_or_else(|| {
        [
            "python3",
            "-m",
            "pytest",
            "-rA",
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
            &format!("--junitxml={PYTEST_JUNIT_FILE}"),
        ]
        .map(String::from)
        .to_vec()
    });
    command.extend(test_files.iter().cloned());
    // Verify: the test files the base has still collect (imports work).
    let visible: Vec<String> = test_files
        .iter()
        .filter(|rel| source.join(rel).is_file())
        .cloned()
        .collect();
    let verify: Vec<String> = if visible.is_empty() {
        ["python3", "-m", "compileall", "-q", "-x", "/\\.git/", "."]
            .map(String::from)
            .to_vec()
    } else {
        let mut argv: Vec<String> = [
            "python3",
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ]
        .map(String::from)
        .to_vec();
        argv.extend(visible);
        argv
    };
    let (setup, toolchains) = setup_of(options, &requirement_files, &declared);
    let mut env = BTreeMap::from([("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string())]);
    if source.join("src").is_dir() && !source.join("src/__init__.py").exists() {
        env.insert("PYTHONPATH".into(), "src".into());
    }
    let mut metadata = BTreeMap::from([
        ("instance_id".to_string(), instance.instance_id.clone()),
        ("repo".to_string(), instance.repo.clone()),
        ("base_commit".to_string(), instance.base_commit.clone()),
    ]);
    if let Some(version) = &instance.version {
        let text = match version {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        metadata.insert("version".into(), text);
    }
    if let Some(commit) = &instance.environment_setup_commit {
        metadata.insert("environment_setup_commit".into(), commit.clone());
    }
    let draft = ManifestDraft {
        id: id.clone(),
        family: job_id(&instance.repo.replace('/', "__")),
        prompt_file: "prompt.md".into(),
        source: "source".into(),
        trace: crate::manifest::Trace::Full,
        editable: vec!["**".into()],
        allow: vec![exact_rule(&verify), "python3 -m pytest **".into()],
        verify,
        env,
        metadata,
        acceptance: AcceptanceDraft {
            dir: "tests".into(),
            command,
            results: Some(format!("junit:{PYTEST_JUNIT_FILE}")),
            // As the instance names them: the runner maps them through
            // the language table.
            fail_to_pass: f2p,
            pass_to_pass: p2p,
        },
        setup,
        sandbox: toolchains.map(|toolchains| SandboxDraft { toolchains }),
        oracle: OracleDraft {
            script: None,
            patch: Some("oracle.patch".into()),
        },
    };
    let header = format!(
        "Imported from the SWE-bench instance {} ({} at {}) by `agent-runtime import swebench`.\nThe source's .git holds the base tree as its only commit. No provider: run it with `agent-runtime batch DATA DIR --provider FILE`.",
        instance.instance_id, instance.repo, instance.base_commit
    );
    job.manifest(&header, &draft)
        .map(|m| Taken::Imported((m, notes)))
}

/// The requirement files at the base tree's root (`requirements*.txt`
/// and the like, passed to pip as `-r FILE`) and the requirements its
/// `pyproject.toml` and `setup.cfg` declare.
fn requirements(source: &Path) -> (Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    let mut project = Vec::new();
    let Ok(entries) = fs::read_dir(source) else {
        return (files, Vec::new());
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .collect();
    names.sort();
    for name in names {
        let is_requirements = name.ends_with(".txt")
            && (name.starts_with("requirements") || name.contains("test-requirements"))
            && !name.contains("doc");
        if is_requirements {
            files.push(name.clone());
        }
        if (name == "pyproject.toml" || name == "setup.cfg")
            && let Ok(text) = fs::read_to_string(source.join(&name))
        {
            project.push((name, text));
        }
    }
    (files, crate::lang::declared_requirements(&project))
}

/// The `[setup]` and `[sandbox] toolchains` an instance gets.
fn setup_of(
    options: &SwebenchOptions,
    requirement_files: &[String],
    declared: &[String],
) -> (Option<SetupDraft>, Option<Vec<String>>) {
    let venv_python = "{cache}/venv/bin/python3".to_string();
    let create = vec![
        "python3".to_string(),
        "-m".into(),
        "venv".into(),
        "{cache}/venv".into(),
    ];
    let mut toolchains = vec!["{cache}/venv/bin".to_string()];
    if let Some(bin) = &options.python_bin {
        toolchains.push(bin.display().to_string());
    }
    let commands = match &options.setup {
        SetupChoice::None => return (None, None),
        SetupChoice::Commands(commands) => {
            let mut all = vec![create];
            all.extend(commands.iter().cloned());
            all
        }
        SetupChoice::Venv => {
            let mut install: Vec<String> = [
                "python3",
                "-m",
                "pip",
                "--python",
                &venv_python,
                "install",
                "--quiet",
                "--no-cache-dir",
                "--disable-pip-version-check",
                "pytest",
            ]
            .map(String::from)
            .to_vec();
            for file in requirement_files {
                install.push("-r".into());
                install.push(file.clone());
            }
            install.extend(declared.iter().cloned());
            vec![create, install]
        }
    };
    (Some(SetupDraft { commands }), Some(toolchains))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_lists_or_json_strings_of_lists() {
        let list = serde_json::json!(["a::b", "c"]);
        assert_eq!(names(&list).unwrap(), ["a::b", "c"]);
        let text = serde_json::json!("[\"a::b\"]");
        assert_eq!(names(&text).unwrap(), ["a::b"]);
        assert!(names(&serde_json::json!("a::b")).is_err());
        assert_eq!(job_id("django__django-11099"), "django__django-11099");
        assert_eq!(job_id("a/b c"), "a_b_c");
    }
}
