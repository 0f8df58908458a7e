//! `import swebench` through the real binary, on an instance a test builds
//! from a small git repository with a bug-fix commit (SWE-bench's schema:
//! the gold `patch` creates one file and deletes another, the
//! `test_patch` adds the fail-to-pass test). The source's `.git` holds
//! the base tree and nothing of the fix; the gold patch is accepted, a
//! provider that changes nothing is not; an instance whose fail-to-pass
//! test already passes is `invalid_baseline` naming it; and `check` calls
//! a job `leaky` when the fix is planted in the source or a future commit
//! is left in its `.git`.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_runtime_test_support::{Need, require_tool, skip};

use crate::harness::Sandbox;
use crate::tracks::{final_kind, provider};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const FIXED_CALC: &str = "from shapes.helper import twice\n\n\ndef add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return sum(twice(a) for _ in range(b)) // 2  # the distinctive fix line\n";

/// A clone at `repos/acme/shapes` with a base commit and a fix commit (a
/// tag and a remote pointing past the base); returns (base, fix, the
/// fixed file's blob id).
fn repository(repos: &Path) -> (String, String, String) {
    let repo = repos.join("acme/shapes");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "--initial-branch=main"]);
    write(&repo.join("shapes/__init__.py"), "");
    write(
        &repo.join("shapes/calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    );
    write(&repo.join("shapes/legacy.py"), "OLD = True\n");
    write(
        &repo.join("tests/test_calc.py"),
        "from shapes.calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    );
    write(&repo.join("README.md"), "Shapes.\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    write(&repo.join("shapes/calc.py"), FIXED_CALC);
    write(
        &repo.join("shapes/helper.py"),
        "def twice(x):\n    return 2 * x\n",
    );
    std::fs::remove_file(repo.join("shapes/legacy.py")).unwrap();
    write(
        &repo.join("tests/test_calc.py"),
        "from shapes.calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    );
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "fix mul"]);
    let fix = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["tag", "v2"]);
    git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "https://example.invalid/acme/shapes.git",
        ],
    );
    let blob = git(&repo, &["rev-parse", "HEAD:shapes/calc.py"]);
    (base, fix, blob)
}

/// One instance line in SWE-bench's schema (lists as JSON strings, as the
/// published files have them).
fn instance(repos: &Path, base: &str, fix: &str, f2p: &[&str], p2p: &[&str]) -> String {
    let repo = repos.join("acme/shapes");
    let patch = git(&repo, &["diff", "--full-index", base, fix, "--", "shapes"]);
    let test_patch = git(&repo, &["diff", "--full-index", base, fix, "--", "tests"]);
    serde_json::json!({
        "instance_id": "acme__shapes-1",
        "repo": "acme/shapes",
        "base_commit": base,
        "patch": format!("{patch}\n"),
        "test_patch": format!("{test_patch}\n"),
        "FAIL_TO_PASS": serde_json::to_string(f2p).unwrap(),
        "PASS_TO_PASS": serde_json::to_string(p2p).unwrap(),
        "problem_statement": "mul(a, b) returns the sum instead of the product.",
        "version": "1.0",
        "environment_setup_commit": base,
        "created_at": "2024-01-01T00:00:00Z",
    })
    .to_string()
}

/// Imports `line` with `extra` options; returns the job's folder.
fn import(sb: &Sandbox, name: &str, line: &str, extra: &[&str]) -> PathBuf {
    let file = sb.path().join(format!("{name}.jsonl"));
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let out = sb.path().join(name);
    let repos = sb.path().join("repos");
    let mut args = vec![
        "import",
        "swebench",
        file.to_str().unwrap(),
        "--repo",
        repos.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let run = sb.run(&args);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("imported 1 job"), "{run:#?}");
    out.join("acme__shapes-1")
}

fn check(sb: &Sandbox, job: &Path, data: &str) -> crate::harness::Run {
    sb.run(&[
        "check",
        job.join("job.toml").to_str().unwrap(),
        "--runs",
        "1",
        "--data",
        sb.path().join(data).to_str().unwrap(),
    ])
}

#[test]
fn an_instance_imports_without_its_future_and_its_gold_patch_is_accepted() {
    if require_tool(
        "an_instance_imports_without_its_future_and_its_gold_patch_is_accepted",
        crate::python_job::python_with_pytest(),
    )
    .is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let repos = sb.path().join("repos");
    let (base, fix, blob) = repository(&repos);
    let line = instance(
        &repos,
        &base,
        &fix,
        &["tests/test_calc.py::test_mul"],
        &["tests/test_calc.py::test_add"],
    );
    let job = import(&sb, "out", &line, &["--setup", "none"]);
    let source = job.join("source");

    // Nothing of the future: not the fix commit, not the fixed blob, no
    // tag, remote, reflog or alternates; one commit holding the base tree.
    for id in [&fix, &blob] {
        let found = Command::new("git")
            .arg("-C")
            .arg(&source)
            .args(["cat-file", "-e", id])
            .status()
            .unwrap();
        assert!(!found.success(), "{id} is in the source's .git");
    }
    assert!(!source.join(".git/objects/info/alternates").exists());
    assert!(!source.join(".git/logs").exists());
    assert!(!source.join(".git/packed-refs").exists());
    assert_eq!(git(&source, &["rev-list", "--all", "--count"]), "1");
    assert_eq!(git(&source, &["remote"]), "");
    assert_eq!(git(&source, &["tag"]), "");
    assert_eq!(git(&source, &["status", "--porcelain"]), "");
    assert!(source.join("shapes/legacy.py").is_file());
    // The hidden tests are the test_patch's files; the manifest keeps the
    // instance's lists and metadata, and has no provider.
    let hidden = std::fs::read_to_string(job.join("tests/tests/test_calc.py")).unwrap();
    assert!(hidden.contains("def test_mul"));
    let manifest = std::fs::read_to_string(job.join("job.toml")).unwrap();
    assert!(
        manifest.contains("fail_to_pass = [\"tests/test_calc.py::test_mul\"]"),
        "{manifest}"
    );
    assert!(manifest.contains("environment_setup_commit"), "{manifest}");
    assert!(!manifest.contains("[provider]"), "{manifest}");

    // check: the gold patch (a new file, a deleted file) is accepted.
    let run = check(&sb, &job, "check-data");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("1/1 job valid"), "{run:#?}");
    // The gold patch deleted legacy.py in the oracle's run.
    let patch = std::fs::read_to_string(
        sb.path()
            .join("check-data/runs/acme__shapes-1@oracle#1/1/patch.diff"),
    )
    .unwrap();
    assert!(patch.contains("deleted file mode"), "{patch}");
    assert!(patch.contains("new file mode"), "{patch}");

    // A provider that changes nothing is not accepted.
    let noop = provider(
        sb.path(),
        "noop",
        "shapes/calc.py",
        &std::fs::read_to_string(source.join("shapes/calc.py")).unwrap(),
    );
    let run = sb.run(&[
        "batch",
        "DATA",
        job.join("job.toml").to_str().unwrap(),
        "--provider",
        noop.to_str().unwrap(),
        "--attempts",
        "1",
    ]);
    assert_eq!(run.code, 1, "{run:#?}");
    let (outcome, kind) = final_kind(&sb.data(), "acme__shapes-1@noop");
    assert_eq!(
        (outcome.as_str(), kind.as_deref()),
        ("failed", Some("tests_failed"))
    );
    // The run as SWE-bench predictions, for the official harness.
    let predictions =
        std::fs::read_to_string(sb.data().join("report/predictions/noop.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = predictions
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{predictions}");
    assert_eq!(lines[0]["instance_id"], "acme__shapes-1");
    assert_eq!(lines[0]["model_name_or_path"], "noop");
    assert!(lines[0]["model_patch"].is_string(), "{predictions}");
}

#[test]
fn an_instance_whose_fail_to_pass_test_already_passes_is_invalid_naming_it() {
    if require_tool(
        "an_instance_whose_fail_to_pass_test_already_passes_is_invalid_naming_it",
        crate::python_job::python_with_pytest(),
    )
    .is_none()
    {
        return;
    }
    let sb = Sandbox::new();
    let repos = sb.path().join("repos");
    let (base, fix, _) = repository(&repos);
    let line = instance(
        &repos,
        &base,
        &fix,
        &[
            "tests/test_calc.py::test_add",
            "tests/test_calc.py::test_mul",
        ],
        &[],
    );
    let job = import(&sb, "out", &line, &["--setup", "none"]);
    let run = check(&sb, &job, "check-data");
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stdout.contains("invalid_baseline"), "{run:#?}");
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("fail_to_pass test tests/test_calc.py::test_add already passes"),
        "{run:#?}"
    );
}

#[test]
fn check_calls_a_planted_fix_or_a_future_commit_leaky() {
    let sb = Sandbox::new();
    let repos = sb.path().join("repos");
    let (base, fix, _) = repository(&repos);
    let line = instance(
        &repos,
        &base,
        &fix,
        &["tests/test_calc.py::test_mul"],
        &["tests/test_calc.py::test_add"],
    );
    // The oracle's distinctive line, planted in another file of the source.
    let planted = import(&sb, "planted", &line, &["--setup", "none"]);
    write(
        &planted.join("source/NOTES.md"),
        "    return sum(twice(a) for _ in range(b)) // 2  # the distinctive fix line\n",
    );
    let run = check(&sb, &planted, "check-planted");
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stdout.contains("leaky"), "{run:#?}");
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("is in source/NOTES.md"), "{run:#?}");

    // A future commit left in the source's .git.
    let future = import(&sb, "future", &line, &["--setup", "none"]);
    let source = future.join("source");
    let base_head = git(&source, &["rev-parse", "HEAD"]);
    write(&source.join("shapes/calc.py"), FIXED_CALC);
    git(&source, &["commit", "-q", "-am", "the fix, left behind"]);
    git(&source, &["reset", "-q", "--hard", &base_head]);
    std::fs::remove_dir_all(source.join(".git/logs")).ok();
    let _ = std::fs::remove_file(source.join(".git/ORIG_HEAD"));
    let run = check(&sb, &future, "check-future");
    assert_eq!(run.code, 1, "{run:#?}");
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("leaky"), "{run:#?}");
    assert!(
        all.contains("commit object(s) the base does not reach"),
        "{run:#?}"
    );
}

/// The default setup: a venv in the cache with pytest and the declared
/// requirements, reached through `[sandbox] toolchains`.
#[test]
fn the_default_setup_is_a_venv_in_the_cache_reached_through_toolchains() {
    let sb = Sandbox::new();
    let repos = sb.path().join("repos");
    let (base, fix, _) = repository(&repos);
    let line = instance(&repos, &base, &fix, &["tests/test_calc.py::test_mul"], &[]);
    let job = import(
        &sb,
        "out",
        &line,
        &[
            "--test-cmd",
            "python3 -m pytest -q --junitxml=.agent-runtime-junit.xml",
        ],
    );
    let manifest = std::fs::read_to_string(job.join("job.toml")).unwrap();
    assert!(
        manifest.contains("toolchains = [\"{cache}/venv/bin\"]"),
        "{manifest}"
    );
    assert!(
        manifest.contains("\"venv\", \"{cache}/venv\""),
        "{manifest}"
    );
    assert!(
        manifest.contains("command = [\"python3\", \"-m\", \"pytest\", \"-q\", \"--junitxml=.agent-runtime-junit.xml\", \"tests/test_calc.py\"]"),
        "{manifest}"
    );
    let validate = sb.run(&["validate", job.join("job.toml").to_str().unwrap()]);
    if validate.code != 0 && validate.stderr.contains("toolchains") {
        eprintln!(
            "note: this build does not know [sandbox] toolchains yet: {}",
            validate.stderr.trim()
        );
        return;
    }
    assert_eq!(validate.code, 0, "{validate:#?}");
}

/// Where the machine's `python3` (the one the sandbox finds) has pytest.
fn pytest_site() -> Option<String> {
    let out = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A setup command that writes a wheel of one module, `shapehelp`, into
/// the setup's copy (only a job's declared setup inputs are there).
const WRITE_WHEEL: &str = "python3 -c \"import zipfile; nl = chr(10); z = zipfile.ZipFile('shapehelp-1.0-py3-none-any.whl', 'w'); [z.writestr(n, t) for n, t in [('shapehelp/__init__.py', 'def twice(x):' + nl + '    return 2 * x' + nl), ('shapehelp-1.0.dist-info/METADATA', 'Metadata-Version: 2.1' + nl + 'Name: shapehelp' + nl + 'Version: 1.0' + nl), ('shapehelp-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0' + nl + 'Generator: test' + nl + 'Root-Is-Purelib: true' + nl + 'Tag: py3-none-any' + nl), ('shapehelp-1.0.dist-info/RECORD', '')]]; z.close()\"";

/// The regression of `[sandbox] toolchains = ["{cache}/venv/bin"]`: its
/// read-only grant covered the cache the setup must fill, so `pip
/// install` into the venv failed with EROFS. During setup the job cache is
/// writable whatever `toolchains` names inside it; from the baseline on,
/// read-only.
#[test]
fn a_setup_that_makes_a_venv_and_installs_into_it_gives_a_valid_task() {
    let test = "a_setup_that_makes_a_venv_and_installs_into_it_gives_a_valid_task";
    if require_tool(test, crate::python_job::python_with_pytest()).is_none() {
        return;
    }
    let Some(site) = pytest_site() else {
        skip(Need::Tool, test, "/usr/bin/python3 cannot import pytest");
        return;
    };
    let sb = Sandbox::new();
    let repos = sb.path().join("repos");
    let repo = repos.join("acme/shapes");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "--initial-branch=main"]);
    write(&repo.join("shapes/__init__.py"), "");
    write(
        &repo.join("shapes/calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    );
    let base_tests = "import shapehelp\nfrom shapes.calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert shapehelp.twice(2) == 4\n";
    write(&repo.join("tests/test_calc.py"), base_tests);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    write(
        &repo.join("shapes/calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    );
    write(
        &repo.join("tests/test_calc.py"),
        &format!("{base_tests}\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"),
    );
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "fix mul"]);
    let fix = git(&repo, &["rev-parse", "HEAD"]);
    let line = instance(
        &repos,
        &base,
        &fix,
        &["tests/test_calc.py::test_mul"],
        &["tests/test_calc.py::test_add"],
    );
    // The venv sees the machine's pytest through a `.pth` file, and pip
    // installs a wheel into it: both write into the venv.
    let pth = format!(
        "python3 -c \"import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], 'machine.pth').write_text('{site}')\""
    );
    let job = import(
        &sb,
        "out",
        &line,
        &[
            "--setup",
            &pth,
            "--setup",
            WRITE_WHEEL,
            "--setup",
            "python3 -m pip install --no-index --quiet --disable-pip-version-check shapehelp-1.0-py3-none-any.whl",
        ],
    );
    let manifest = std::fs::read_to_string(job.join("job.toml")).unwrap();
    assert!(
        manifest.contains("toolchains = [\"{cache}/venv/bin\"]"),
        "{manifest}"
    );
    let run = check(&sb, &job, "check-data");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("1/1 job valid"), "{run:#?}");
    assert!(
        run.stdout.contains("integrity: 0 tamper signals"),
        "{run:#?}"
    );
    // Nothing of the fix is reachable from the imported history.
    let source = job.join("source");
    assert_eq!(git(&source, &["rev-list", "--all", "--count"]), "1");
    let found = Command::new("git")
        .arg("-C")
        .arg(&source)
        .args(["cat-file", "-e", &fix])
        .status()
        .unwrap();
    assert!(!found.success(), "the fix commit is in the source's .git");
}
