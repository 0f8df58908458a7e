//! The dependency build layer, offline (a crate depending on `strsim`, which
//! the runtime's own build already put in the local registry): the trusted
//! baseline build gives the job a layer of its dependencies' outputs, the
//! agent's workspace and the acceptance copy each start from their own copy
//! (dependencies not rebuilt), and an agent whose verify overwrites its
//! copy and tries to reach the layer changes nothing a later phase uses:
//! the layer is unchanged byte for byte and acceptance passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::{Sandbox, log_lines};
use crate::setup::{fix_script, only_cache, tree_bytes};

/// The version of `strsim` in the runtime's own lock file.
fn dependency_version() -> String {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).unwrap();
    let at = lock.find("name = \"strsim\"\nversion = \"").unwrap() + 27;
    lock[at..].split('"').next().unwrap().to_string()
}

/// The crate and its lock file, resolved offline from the local registry.
fn write_source(root: &Path) -> Result<PathBuf, String> {
    let source = root.join("source");
    std::fs::create_dir_all(source.join("src")).unwrap();
    std::fs::write(
        source.join("Cargo.toml"),
        format!(
            "[package]\nname = \"layered\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             # The attack poisons its own copy of strsim; doc tests would link it.\n\
             [lib]\ndoctest = false\n\n\
             [dependencies]\nstrsim = \"={}\"\n\n[workspace]\n",
            dependency_version()
        ),
    )
    .unwrap();
    std::fs::write(
        source.join("src/lib.rs"),
        "pub fn close(a: &str, b: &str) -> bool {\n    strsim::levenshtein(a, b) > 1\n}\n",
    )
    .unwrap();
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let out = Command::new(cargo)
        .args(["generate-lockfile", "--offline"])
        .current_dir(&source)
        .output()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "strsim is not in the local registry (run `cargo fetch` first): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(source)
}

const FIXED: &str =
    "pub fn close(a: &str, b: &str) -> bool {\n    strsim::levenshtein(a, b) <= 1\n}\n";

/// The agent's attack, run by its verify: overwrite the dependency outputs
/// in its own target dir (its copy: allowed, and harmless to the phases
/// after it), then try to write into the layer and the registry by every
/// path it can find from its workspace.
const ATTACK: &str = r#"
#[cfg(test)]
mod attack {
    use std::io::Write;
    use std::path::{Path, PathBuf};

    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    files(&path, out);
                } else {
                    out.push(path);
                }
            }
        }
    }

    fn try_write(path: &Path) -> String {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .and_then(|mut f| f.write_all(b"poisoned"));
        match opened {
            Ok(()) => format!("WRITTEN {}\n", path.display()),
            Err(e) => format!("refused {}: {e}\n", path.display()),
        }
    }

    #[test]
    fn poison_the_build_cache() {
        let mut report = String::new();
        let mut own = Vec::new();
        files(Path::new("target/debug/deps"), &mut own);
        for path in own.iter().filter(|p| p.to_string_lossy().contains("libstrsim-")) {
            report.push_str(&format!("own {}", try_write(path)));
        }
        // The layer lives in DATA/cache, three levels up from DATA/work/<job>/<n>.
        let mut reach = Vec::new();
        for up in ["../../../cache", "../../..", "/"] {
            files(&Path::new(up).join("cache"), &mut reach);
        }
        let home = std::env::var("CARGO_HOME").unwrap_or_default();
        files(&Path::new(&home).join("registry/src"), &mut reach);
        for path in reach.iter().filter(|p| p.to_string_lossy().contains("strsim")).take(50) {
            report.push_str(&try_write(path));
        }
        report.push_str(&format!("reached {} file(s)\n", reach.len()));
        std::fs::write("attack-report.txt", report).unwrap();
    }
}
"#;

fn write_job(root: &Path, source: &Path) -> PathBuf {
    let acceptance = root.join("acceptance/tests");
    std::fs::create_dir_all(&acceptance).unwrap();
    std::fs::write(
        acceptance.join("hidden.rs"),
        "#[test]\nfn one_edit_is_close() {\n    assert!(layered::close(\"kitten\", \"sitten\"));\n}\n\n\
         #[test]\nfn three_edits_are_not() {\n    \
         assert!(!layered::close(\"kitten\", \"sitting\"));\n}\n",
    )
    .unwrap();
    fix_script(&root.join("fix.jsonl"), FIXED);
    fix_script(&root.join("attack.jsonl"), &format!("{FIXED}{ATTACK}"));
    std::fs::write(
        root.join("attack.toml"),
        "name = \"attack\"\n\n[provider]\nkind = \"script\"\nscript = \"attack.jsonl\"\n",
    )
    .unwrap();
    let manifest = root.join("layered.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"id = "layered"
prompt = "Make close(a, b) say whether a and b are at most one edit apart."
source = "{}"
editable = ["src/**/*.rs"]
allow = ["cargo test **"]
verify = ["cargo", "test", "--offline", "--quiet"]

[acceptance]
dir = "acceptance"
command = ["cargo", "test", "--offline", "--quiet"]

[limits]
attempts = 1

[provider]
kind = "script"
script = "fix.jsonl"
"#,
            source.display()
        ),
    )
    .unwrap();
    manifest
}

/// Modification times of the dependency's outputs in a build's target dir.
fn dependency_outputs(target: &Path) -> BTreeMap<String, std::time::SystemTime> {
    std::fs::read_dir(target.join("debug/deps"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("libstrsim-"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().modified().unwrap(),
            )
        })
        .collect()
}

#[test]
fn dependencies_build_once_and_an_agent_cannot_poison_the_layer() {
    let sb = Sandbox::new();
    let Some(source) = agent_runtime_test_support::require_tool(
        "dependencies_build_once_and_an_agent_cannot_poison_the_layer",
        write_source(sb.path()),
    ) else {
        return;
    };
    let manifest = write_job(sb.path(), &source);
    let manifest = manifest.to_str().unwrap();
    sb.run(&["batch", "DATA", manifest, "--keep", "all"]).ok();

    // The baseline harvested the layer: strsim's outputs, nothing of the
    // crate itself or of the hidden tests.
    let layer = only_cache(&sb.data()).join("deps");
    let before = tree_bytes(&layer);
    let names: Vec<String> = before.keys().map(|p| p.display().to_string()).collect();
    assert!(
        names.iter().any(|n| n.contains("deps/libstrsim-")),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.contains("layered") || n.contains("hidden")),
        "local units never enter the layer: {names:?}"
    );
    // Verify and acceptance used their own copies: strsim was not rebuilt
    // (same outputs, same times as the layer's).
    let in_layer = dependency_outputs(&layer);
    assert!(!in_layer.is_empty());
    for build in ["work/layered/1/target", "work/layered/1-acceptance/target"] {
        assert_eq!(
            dependency_outputs(&sb.data().join(build)),
            in_layer,
            "{build}"
        );
    }

    // A second instance of the job (another provider: same job cache) whose
    // agent attacks the caches in verify.
    sb.run(&[
        "batch",
        "DATA",
        manifest,
        "--provider",
        "attack.toml",
        "--keep",
        "all",
    ])
    .ok();
    let lines = log_lines(&sb);
    let acceptance: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "acceptance" && l["job"] == "layered@attack")
        .collect();
    assert_eq!(acceptance.len(), 1);
    assert_eq!(acceptance[0]["result"], "passed", "{}", acceptance[0]);
    let report =
        std::fs::read_to_string(sb.data().join("work/layered@attack/1/attack-report.txt")).unwrap();
    assert!(
        report.contains("own WRITTEN"),
        "its own copy is its own: {report}"
    );
    let foreign: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("WRITTEN"))
        .collect();
    assert!(foreign.is_empty(), "{report}");
    // The property: the layer is unchanged, byte for byte.
    assert_eq!(tree_bytes(&layer), before);
    // And the acceptance build took a fresh copy, not the poisoned one.
    // And the acceptance build started from a fresh copy of the layer, not
    // the poisoned workspace: cargo found strsim fresh. (The lib's unit tests,
    // the agent's code, run in acceptance too and poison that copy in turn,
    // after the build, where it no longer matters.)
    let log =
        std::fs::read_to_string(sb.data().join("runs/layered@attack/1/acceptance.log")).unwrap();
    let built = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| {
            m["reason"] == "compiler-artifact"
                && m["package_id"]
                    .as_str()
                    .is_some_and(|p| p.contains("#strsim@"))
        })
        .unwrap();
    assert_eq!(built["fresh"], true, "{built}");
}
