//! Toolchains reached through links, through the real binary: a
//! `CARGO_HOME/bin` that is a link to the real toolchain runs a `[setup]`
//! job with crates.io dependencies to acceptance, and a virtualenv made
//! from a pyenv interpreter, named in `[sandbox] toolchains`, is the
//! `python3` verify runs, with the packages only it has.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_runtime::exec::Toolchain;
use agent_runtime_test_support::{Need, require_tool, skip};
use serde_json::Value;

use crate::deps_job::registry_reachable;
use crate::harness::{BIN, Run, Sandbox, log_lines, tool_with_a_hidden_interpreter};

/// The `resolved` path of every command event of the log that ran
/// `program`.
fn resolved_programs(sb: &Sandbox, program: &str) -> Vec<String> {
    log_lines(sb)
        .iter()
        .filter(|l| l["type"] == "command" && l["program"] == program)
        .filter_map(|l| l["resolved"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_setup_job_runs_with_cargo_home_bin_a_link_to_the_toolchain() {
    let test = "a_setup_job_runs_with_cargo_home_bin_a_link_to_the_toolchain";
    if require_tool(test, registry_reachable()).is_none() {
        return;
    }
    let toolchain = Toolchain::detect();
    let (Some(real_bin), Some(rustup_home)) = (toolchain.cargo_bin(), toolchain.rustup_home) else {
        skip(
            Need::Tool,
            test,
            "no rustup toolchain (CARGO_HOME/bin and RUSTUP_HOME)",
        );
        return;
    };
    if let Err(reason) = &agent_runtime::sandbox::probe().namespaces {
        // Without the mount layer the link is on the host already.
        skip(Need::Layer, test, &format!("no mount namespace: {reason}"));
        return;
    }
    let sb = Sandbox::new();
    // As nix profiles and home-manager lay it out: the bin directory of
    // CARGO_HOME is a link to a directory elsewhere.
    let cargo_home = sb.path().join("profile/cargo");
    std::fs::create_dir_all(&cargo_home).unwrap();
    std::os::unix::fs::symlink(&real_bin, cargo_home.join("bin")).unwrap();
    let job = concat!(env!("CARGO_MANIFEST_DIR"), "/jobs/wrong_comparator.toml");
    let run = Run::from(
        sb.command(&["batch", "DATA", job])
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("succeeded"), "{run:#?}");
    let setup = log_lines(&sb)
        .into_iter()
        .find(|l| l["type"] == "setup")
        .unwrap();
    assert_eq!(setup["result"], "passed", "{setup}");
    // Every cargo ran through the link, as the search path names it.
    let linked = cargo_home.join("bin/cargo").canonicalize().unwrap();
    assert_eq!(linked, real_bin.join("cargo").canonicalize().unwrap());
    let programs = resolved_programs(&sb, "cargo");
    let through_link = cargo_home
        .canonicalize()
        .unwrap()
        .join("bin/cargo")
        .display()
        .to_string();
    assert!(
        !programs.is_empty() && programs.iter().all(|p| *p == through_link),
        "{programs:?}"
    );
}

/// The pyenv interpreter the venv is made from.
const PYENV_PYTHON: &str = "/root/.pyenv/versions/3.12.1/bin/python";

/// A venv at `dir/venv` from the pyenv interpreter, holding a package
/// `only_in_venv` that the system python lacks.
fn venv_with_a_local_package(dir: &Path) -> Result<PathBuf, String> {
    let venv = dir.join("venv");
    let made = Command::new(PYENV_PYTHON)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("cannot run {PYENV_PYTHON}: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "{PYENV_PYTHON} -m venv failed: {}",
            String::from_utf8_lossy(&made.stderr)
        ));
    }
    let site = std::fs::read_dir(venv.join("lib"))
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .ok_or("the venv has no site-packages")?;
    std::fs::create_dir(site.join("only_in_venv")).unwrap();
    std::fs::write(site.join("only_in_venv/__init__.py"), "ANSWER = 42\n").unwrap();
    Ok(venv)
}

#[test]
fn a_venv_named_in_toolchains_is_the_python_verify_runs() {
    let test = "a_venv_named_in_toolchains_is_the_python_verify_runs";
    if !Path::new(PYENV_PYTHON).exists() {
        skip(Need::Tool, test, &format!("no {PYENV_PYTHON}"));
        return;
    }
    let sb = Sandbox::new();
    let Some(venv) = require_tool(test, venv_with_a_local_package(sb.path())) else {
        return;
    };
    // The system python cannot import it: the venv's is what counts.
    let system = Command::new("/usr/bin/python3")
        .args(["-c", "import only_in_venv"])
        .output();
    assert!(system.is_err() || !system.unwrap().status.success());

    let source = sb.path().join("src-tree");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(
        sb.path().join("script.jsonl"),
        "{\"kind\":\"write_file\",\"path\":\"done.txt\",\"content\":\"ok\\n\"}\n\
         {\"kind\":\"finish\",\"summary\":\"done\"}\n",
    )
    .unwrap();
    let manifest = sb.path().join("venv_job.toml");
    std::fs::write(
        &manifest,
        r#"prompt = "Create done.txt."
source = "src-tree"
editable = ["*.txt"]
allow = ["python3 **"]
verify = ["python3", "-c", "import sys, only_in_venv; assert only_in_venv.ANSWER == 42; print('PREFIX', sys.prefix)"]

[limits]
attempts = 1

[sandbox]
mode = "auto"
toolchains = ["venv/bin"]

[provider]
kind = "script"
script = "script.jsonl"
"#,
    )
    .unwrap();

    let shown = sb
        .run(&["validate", "--verbose", manifest.to_str().unwrap()])
        .ok();
    let venv_python = venv.canonicalize().unwrap().join("bin/python3");
    assert!(
        shown.stdout.contains(&format!(
            "program python3: {} (runs /root/.pyenv/versions/3.12.1/bin/python3.12)",
            venv_python.display()
        )),
        "{shown:#?}"
    );

    let run = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");
    let verify: Vec<Value> = log_lines(&sb)
        .into_iter()
        .filter(|l| l["type"] == "verify")
        .collect();
    assert_eq!(verify.len(), 1);
    assert_eq!(verify[0]["passed"], true, "{:?}", verify[0]);
    let programs = resolved_programs(&sb, "python3");
    assert_eq!(programs, [venv_python.display().to_string()]);
    let log = std::fs::read_to_string(sb.data().join("runs/venv_job/1/verify-1.log")).unwrap();
    assert!(
        log.contains(&format!(
            "PREFIX {}",
            venv.canonicalize().unwrap().display()
        )),
        "{log}"
    );
}

#[test]
fn a_program_that_cannot_start_names_its_path_and_what_is_missing() {
    let test = "a_program_that_cannot_start_names_its_path_and_what_is_missing";
    if let Err(reason) = &agent_runtime::sandbox::probe().namespaces {
        skip(Need::Layer, test, &format!("no mount namespace: {reason}"));
        return;
    }
    let sb = Sandbox::new();
    // A toolchain whose interpreter lives where no grant reaches.
    let (tool, interp) = tool_with_a_hidden_interpreter(sb.path());
    let ws = sb.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // `exec` has no toolchain option: the job-level equivalent is covered
    // above; here the runner's own search path gets the directory.
    let out = Command::new(BIN)
        .args(["exec", "--sandbox", "auto", "--workspace"])
        .arg(&ws)
        .args(["--", "mytool"])
        .env("CARGO_HOME", sb.path().join("tools"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let resolved = tool.canonicalize().unwrap();
    assert!(
        stderr.contains(&format!(
            "failed to start `mytool` ({})",
            resolved.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("its interpreter `{}`", interp.display())),
        "{stderr}"
    );
}
