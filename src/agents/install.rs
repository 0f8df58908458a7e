//! Installing agents: `DATA/cache/agents/<name>@<version>/`, one directory
//! per agent and version, shared by every job of the data dir and mounted
//! read-only into attempts. Installing is a trusted step run by the user
//! (`agents install`) or before a batch's first attempt, with registry
//! access: npm for an npm package, a virtual environment of its own and
//! pip for a PyPI one. It installs into a staging directory beside the
//! final one and renames it into place once the program is there, under a
//! lock, so a crash or a concurrent install never leaves half an agent
//! that looks whole. `agent.json` records what was installed and the
//! digest of the tree.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::{AgentSpec, Package};

/// The record beside an installed agent.
const RECORD: &str = "agent.json";
/// Lines of a failed installer's output kept in its error.
const OUTPUT_LINES: usize = 20;

/// One installed agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Installed {
    pub name: String,
    pub version: String,
    /// The package as its registry names it.
    pub package: String,
    /// A digest of the installed tree.
    pub digest: String,
    /// When it was installed (ms since the epoch).
    pub installed_ms: u64,
    /// Where it is (not written: the directory itself).
    #[serde(skip)]
    pub dir: PathBuf,
}

/// Why an agent could not be installed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AgentInstallError {
    #[error("{0} is given by the manifest's argv: there is nothing to install")]
    NothingToInstall(String),
    #[error("failed to {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{program}` cannot be run to install {spec}: {source} (is it installed?)")]
    Installer {
        program: String,
        spec: String,
        source: std::io::Error,
    },
    #[error("installing {spec} failed: `{command}` exited {status}:\n{output}")]
    Failed {
        spec: String,
        command: String,
        status: String,
        output: String,
    },
    #[error("installing {spec} left no program at {}", .program.display())]
    NoProgram { spec: String, program: PathBuf },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> AgentInstallError {
    let path = path.to_path_buf();
    move |source| AgentInstallError::Io {
        action,
        path,
        source,
    }
}

/// The agents installed under `agents_dir` (`DATA/cache/agents`), by name
/// and version; a directory without a readable record is not one.
pub(crate) fn installed(agents_dir: &Path) -> Vec<Installed> {
    let Ok(entries) = fs::read_dir(agents_dir) else {
        return Vec::new();
    };
    let mut found: Vec<Installed> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| read_record(&e.path()))
        .collect();
    found.sort_by(|a, b| (&a.name, &a.version).cmp(&(&b.name, &b.version)));
    found
}

fn read_record(dir: &Path) -> Option<Installed> {
    let text = fs::read_to_string(dir.join(RECORD)).ok()?;
    let mut record: Installed = serde_json::from_str(&text).ok()?;
    let expected = format!("{}@{}", record.name, record.version);
    if dir.file_name().and_then(|n| n.to_str()) != Some(expected.as_str()) {
        return None;
    }
    record.dir = dir.to_path_buf();
    Some(record)
}

/// Installs `spec` under `agents_dir` unless it is there already (then
/// `false` with the record); `say` hears what is being done.
pub(crate) fn install(
    agents_dir: &Path,
    spec: &AgentSpec,
    say: &mut dyn FnMut(&str),
) -> Result<(Installed, bool), AgentInstallError> {
    let agent = spec.agent();
    let package = agent.package();
    let Some(package_name) = package.name() else {
        return Err(AgentInstallError::NothingToInstall(agent.name().into()));
    };
    let label = format!("{}@{}", agent.name(), spec.version());
    fs::create_dir_all(agents_dir).map_err(io("create", agents_dir))?;
    let lock_path = agents_dir.join(format!("{label}.lock"));
    let lock = fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io("open", &lock_path))?;
    lock.lock().map_err(io("lock", &lock_path))?;
    let dir = agents_dir.join(&label);
    if let Some(found) = read_record(&dir) {
        return Ok((found, false));
    }
    let staging = agents_dir.join(format!(".{label}.staging"));
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(io("remove", &staging))?;
    }
    fs::create_dir_all(&staging).map_err(io("create", &staging))?;
    say(&format!(
        "installing {label} ({package_name}) into {}",
        dir.display()
    ));
    let steps: Vec<Vec<String>> = match package {
        Package::Npm { name, .. } => vec![vec![
            "npm".into(),
            "install".into(),
            "--prefix".into(),
            staging.display().to_string(),
            "--no-audit".into(),
            "--no-fund".into(),
            "--no-save".into(),
            "--loglevel=error".into(),
            format!("{name}@{}", spec.version()),
        ]],
        Package::Pypi { name, .. } => {
            let venv = staging.join("venv");
            vec![
                vec![
                    "python3".into(),
                    "-m".into(),
                    "venv".into(),
                    venv.display().to_string(),
                ],
                vec![
                    venv.join("bin/pip").display().to_string(),
                    "install".into(),
                    "--disable-pip-version-check".into(),
                    "--quiet".into(),
                    format!("{name}=={}", spec.version()),
                ],
            ]
        }
        Package::None => Vec::new(),
    };
    for argv in &steps {
        run(&label, argv)?;
    }
    let program = package.program(&staging).unwrap_or_default();
    if !program.exists() {
        return Err(AgentInstallError::NoProgram {
            spec: label,
            program,
        });
    }
    let record = Installed {
        name: agent.name().to_string(),
        version: spec.version().to_string(),
        package: package_name.to_string(),
        digest: crate::cache::tree_digest(&staging),
        installed_ms: crate::log::now_ms(),
        dir: dir.clone(),
    };
    let text = serde_json::to_string_pretty(&record).unwrap_or_default();
    let record_path = staging.join(RECORD);
    fs::write(&record_path, text).map_err(io("write", &record_path))?;
    if dir.exists() {
        // A directory without a record: a crashed install of an older
        // runtime, replaced.
        fs::remove_dir_all(&dir).map_err(io("remove", &dir))?;
    }
    fs::rename(&staging, &dir).map_err(io("rename into place", &dir))?;
    Ok((record, true))
}

/// Runs one installer command, its output kept for the error.
fn run(label: &str, argv: &[String]) -> Result<(), AgentInstallError> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(());
    };
    let output = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| AgentInstallError::Installer {
            program: program.clone(),
            spec: label.to_string(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(OUTPUT_LINES)..].join("\n");
    Err(AgentInstallError::Failed {
        spec: label.to_string(),
        command: argv.join(" "),
        status: output
            .status
            .code()
            .map_or_else(|| "on a signal".to_string(), |c| c.to_string()),
        output: tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_directory_whose_record_names_it_is_installed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("codex@0.1.0");
        fs::create_dir_all(&dir).unwrap();
        let record = Installed {
            name: "codex".into(),
            version: "0.1.0".into(),
            package: "@openai/codex".into(),
            digest: "d".into(),
            installed_ms: 1,
            dir: PathBuf::new(),
        };
        fs::write(dir.join(RECORD), serde_json::to_string(&record).unwrap()).unwrap();
        // A staging directory and one whose record names another version.
        fs::create_dir_all(tmp.path().join(".codex@0.2.0.staging")).unwrap();
        let other = tmp.path().join("codex@0.3.0");
        fs::create_dir_all(&other).unwrap();
        fs::write(other.join(RECORD), serde_json::to_string(&record).unwrap()).unwrap();
        let found = installed(tmp.path());
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].version.as_str(), &found[0].dir), ("0.1.0", &dir));
    }

    #[test]
    fn a_command_agent_installs_nothing_and_a_missing_installer_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let spec: AgentSpec = "command".parse().unwrap();
        let err = install(tmp.path(), &spec, &mut |_| {}).unwrap_err();
        assert!(
            matches!(err, AgentInstallError::NothingToInstall(_)),
            "{err}"
        );
        let err = run("x@1", &["/nonexistent/npm".into()]).unwrap_err();
        assert!(err.to_string().contains("cannot be run"), "{err}");
        let err = run(
            "x@1",
            &[
                "sh".into(),
                "-c".into(),
                "echo no such version >&2; exit 3".into(),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("exited 3") && err.contains("no such version"),
            "{err}"
        );
    }
}
