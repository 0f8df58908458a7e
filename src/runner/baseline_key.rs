//! The baseline key: a SHA-256 of everything that decides a baseline's
//! verdict, test inventory and canary decision, so an instance reuses an
//! earlier baseline of the data dir only when running it again would read
//! the same inputs. See `docs/reference.md` ("Baseline reuse").
//!
//! The toolchain is fingerprinted by what the acceptance command's program
//! resolves to on the job's search path (the path, the real file behind
//! its links and that file's size, mode, modification time and inode) and
//! by what `<program> --version` prints, run once per runner process in
//! the job's sandbox and environment: a rustup proxy or a pyenv shim stays
//! the same file when the toolchain behind it changes, its version output
//! does not.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::cache_use::CacheUse;
use super::commands::{AttemptCommands, policy_for};
use crate::cancel::CancelToken;
use crate::exec::AllowList;
use crate::manifest::{Acceptance, Manifest};

/// Prefix of the hashed bytes, so a key never means two layouts.
const KEY_DOMAIN: &[u8] = b"agent-runtime baseline v1\n";

/// How long `<program> --version` may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes kept of each stream of the version probe.
const PROBE_OUTPUT_CAP: usize = 4096;

/// What the key hashes.
#[derive(Debug, Serialize)]
struct KeyParts<'a> {
    /// The job cache the baseline's build filled (its dependency layer):
    /// a reusing instance must find the layer where the baseline left it.
    cache: &'a str,
    source: &'a Path,
    source_digest: String,
    acceptance: AcceptanceParts<'a>,
    setup: Option<&'a crate::manifest::Setup>,
    env: &'a BTreeMap<String, String>,
    /// Which files the fallback inventory reads as test functions.
    editable: &'a [String],
    /// The oracle file, whose tree gives an uncollectable baseline its
    /// inventory.
    oracle: Option<(PathBuf, String)>,
    limits: LimitParts,
    sandbox: &'a crate::manifest::Sandbox,
    /// The layers this machine gives commands (none with the sandbox off).
    layers: Vec<crate::sandbox::Layer>,
    toolchain: Toolchain,
    runtime: Runtime,
}

#[derive(Debug, Serialize)]
struct AcceptanceParts<'a> {
    dir: &'a Path,
    digest: String,
    command: &'a [String],
    results: String,
    test_timeout: Duration,
    canary: bool,
    twins: bool,
    plugins: &'a [String],
    /// Left out when empty, so keys of jobs that name none are unchanged.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    flaky: &'a [String],
}

/// The limits a baseline's commands run under.
#[derive(Debug, Serialize)]
struct LimitParts {
    wall_time: Duration,
    command_timeout: Duration,
    output_cap: u64,
    memory: u64,
    processes: u64,
}

/// The acceptance command's program as the job's commands find it.
#[derive(Debug, Clone, Serialize)]
struct Toolchain {
    /// The search path (`PATH`) the commands get.
    path: String,
    program: String,
    /// Where it resolves, the file that really runs, and that file's
    /// identity; the error when it does not resolve.
    resolved: Result<(PathBuf, PathBuf, String), String>,
    /// `<program> --version`: its exit and output.
    version: String,
}

/// The runtime judging the baseline: its version and the binary running.
#[derive(Debug, Clone, Serialize)]
struct Runtime {
    version: &'static str,
    binary: String,
}

/// The baseline key of `manifest`'s `acceptance`, 32 hex digits. `cache`
/// is the job cache key; `commands` are the job's commands as a check
/// sees them (search path, environment, sandbox), for the toolchain.
pub(super) fn baseline_key(
    manifest: &Manifest,
    acceptance: &Acceptance,
    cache: &str,
    cache_use: &CacheUse,
    data_root: &Path,
    cancel: &CancelToken,
) -> String {
    let limits = &manifest.limits;
    let parts = KeyParts {
        cache,
        source: &manifest.source,
        source_digest: crate::cache::tree_digest(&manifest.source),
        acceptance: AcceptanceParts {
            dir: &acceptance.dir,
            digest: crate::cache::tree_digest(&acceptance.dir),
            command: &acceptance.command,
            results: acceptance.results_format().to_string(),
            test_timeout: acceptance.test_timeout_or(limits.command_timeout),
            canary: acceptance.canary,
            twins: acceptance.twins,
            plugins: &acceptance.plugins,
            flaky: &acceptance.flaky,
        },
        setup: manifest.setup.as_ref(),
        env: &manifest.env,
        editable: &manifest.editable,
        oracle: manifest
            .oracle
            .as_ref()
            .map(|o| (o.path().to_path_buf(), identity(o.path()))),
        limits: LimitParts {
            wall_time: limits.wall_time,
            command_timeout: limits.command_timeout,
            output_cap: limits.output_cap.bytes(),
            memory: limits.memory.bytes(),
            processes: limits.processes,
        },
        sandbox: &manifest.sandbox,
        layers: match manifest.sandbox.mode {
            crate::manifest::SandboxMode::Off => Vec::new(),
            _ => crate::sandbox::probe().auto_layers(),
        },
        toolchain: toolchain(manifest, acceptance, cache_use, data_root, cancel),
        runtime: runtime(),
    };
    let mut hasher = Sha256::new();
    hasher.update(KEY_DOMAIN);
    // Serializing a struct keeps the field order fixed; maps are sorted.
    hasher.update(serde_json::to_vec(&parts).unwrap_or_default());
    hasher.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The commands of a check, as they see the job: its search path (with
/// its toolchain directories), environment and sandbox.
fn check_commands(
    manifest: &Manifest,
    dir: &Path,
    allow: AllowList,
    cache_use: &CacheUse,
    data_root: &Path,
) -> AttemptCommands {
    let mut deny = vec![data_root.to_path_buf()];
    if let Some(acceptance) = &manifest.acceptance {
        deny.push(acceptance.dir.clone());
    }
    let mut commands = AttemptCommands::new(
        manifest,
        dir,
        allow,
        policy_for(manifest, deny),
        Instant::now() + PROBE_TIMEOUT,
    );
    cache_use.apply(&mut commands, manifest);
    commands.timeout = PROBE_TIMEOUT;
    commands
}

fn toolchain(
    manifest: &Manifest,
    acceptance: &Acceptance,
    cache_use: &CacheUse,
    data_root: &Path,
    cancel: &CancelToken,
) -> Toolchain {
    let program = acceptance.command.first().cloned().unwrap_or_default();
    let Ok(scratch) = tempfile::tempdir() else {
        return Toolchain {
            path: String::new(),
            program,
            resolved: Err("no scratch directory for the version probe".into()),
            version: String::new(),
        };
    };
    let allow = AllowList::program_any_args(&program).unwrap_or_default();
    let commands = check_commands(manifest, scratch.path(), allow, cache_use, data_root);
    let path = commands.search_path().to_env();
    let resolved = commands
        .search_path()
        .describe(&program)
        .map(|(resolved, real)| {
            let id = identity(&real);
            (resolved, real, id)
        })
        .map_err(|e| e.to_string());
    // The probe's answer, once per runner process for the same program,
    // file, search path, environment and sandbox.
    let memo_key =
        serde_json::to_string(&(&path, &program, &resolved, &commands.env, &manifest.sandbox))
            .unwrap_or_default();
    // Held while probing, so workers starting together probe once.
    let mut memo = memo()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let version = match memo.get(&memo_key) {
        Some(version) => version.clone(),
        None if resolved.is_err() => String::new(),
        None => {
            let argv = [program.clone(), "--version".to_string()];
            match commands.run_argv_capped(&argv, PROBE_OUTPUT_CAP, cancel) {
                // A cancelled probe says nothing: it is not kept.
                Ok(outcome) if outcome.cancelled => String::new(),
                Ok(outcome) => {
                    let version = format!(
                        "exit={:?} signal={:?} timed_out={}\n{}\n{}",
                        outcome.exit_code,
                        outcome.signal,
                        outcome.timed_out,
                        outcome.stdout.to_text().trim(),
                        outcome.stderr.to_text().trim()
                    );
                    memo.insert(memo_key, version.clone());
                    version
                }
                Err(e) => format!("the version probe failed: {e}"),
            }
        }
    };
    drop(memo);
    Toolchain {
        path,
        program,
        resolved,
        version,
    }
}

fn memo() -> &'static Mutex<HashMap<String, String>> {
    static MEMO: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The runtime's version and the identity of the running binary (a
/// rebuilt runtime may judge differently).
fn runtime() -> Runtime {
    static BINARY: OnceLock<String> = OnceLock::new();
    let binary = BINARY.get_or_init(|| match std::env::current_exe() {
        Ok(exe) => format!("{} {}", exe.display(), identity(&exe)),
        Err(e) => format!("unknown: {e}"),
    });
    Runtime {
        version: env!("CARGO_PKG_VERSION"),
        binary: binary.clone(),
    }
}

/// A file's size, permission bits, modification time and inode, or why it
/// cannot be read.
fn identity(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(meta) => format!(
            "{} {:o} {}.{} {}:{}",
            meta.len(),
            meta.mode() & 0o7777,
            meta.mtime(),
            meta.mtime_nsec(),
            meta.dev(),
            meta.ino()
        ),
        Err(e) => format!("unreadable: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(dir: &Path, extra: &str) -> Manifest {
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("tests")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), "").unwrap();
        std::fs::write(dir.join("tests/t.sh"), "exit 1").unwrap();
        let text = format!(
            "prompt = \"p\"\nsource = \"src\"\neditable = [\"*\"]\nallow = [\"true\"]\n\
             verify = [\"true\"]\n[sandbox]\nmode = \"off\"\n\
             [acceptance]\ndir = \"tests\"\ncommand = [\"sh\", \"t.sh\"]\n{extra}"
        );
        crate::manifest::parse_manifest(&dir.join("job.toml"), &text).unwrap()
    }

    fn key_of(manifest: &Manifest) -> String {
        let acceptance = manifest.acceptance.clone().unwrap();
        baseline_key(
            manifest,
            &acceptance,
            "cache",
            &CacheUse::default(),
            Path::new("/nonexistent-data"),
            &CancelToken::new(),
        )
    }

    #[test]
    fn the_key_is_stable_and_follows_every_input() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = job(dir.path(), "");
        let first = key_of(&manifest);
        assert_eq!(first.len(), 32);
        assert_eq!(first, key_of(&manifest), "stable");

        let timeout = job(dir.path(), "test_timeout = \"7s\"\n");
        assert_ne!(first, key_of(&timeout), "the test timeout");
        let canary = job(dir.path(), "canary = false\n");
        assert_ne!(first, key_of(&canary), "the canary setting");
        let results = job(dir.path(), "results = \"junit:out.xml\"\n");
        assert_ne!(first, key_of(&results), "the results format");

        std::fs::write(dir.path().join("tests/t.sh"), "exit 2").unwrap();
        let tests_changed = key_of(&manifest);
        assert_ne!(first, tests_changed, "an acceptance file");
        std::fs::write(dir.path().join("src/lib.rs"), "//").unwrap();
        assert_ne!(tests_changed, key_of(&manifest), "a source file");
    }

    #[test]
    fn the_toolchain_is_the_resolved_program_and_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = job(dir.path(), "");
        let acceptance = manifest.acceptance.clone().unwrap();
        let cancel = CancelToken::new();
        let found = toolchain(
            &manifest,
            &acceptance,
            &CacheUse::default(),
            Path::new("/nonexistent-data"),
            &cancel,
        );
        let (resolved, real, _) = found.resolved.clone().unwrap();
        assert!(resolved.ends_with("sh"), "{resolved:?}");
        assert!(real.is_absolute());
        assert!(found.version.starts_with("exit="), "{found:?}");
        // A program that is not on the search path: the error, no probe.
        let mut missing = acceptance.clone();
        missing.command = vec!["no-such-program-anywhere".into()];
        let gone = toolchain(
            &manifest,
            &missing,
            &CacheUse::default(),
            Path::new("/nonexistent-data"),
            &cancel,
        );
        assert!(gone.resolved.is_err());
        assert!(gone.version.is_empty());
    }
}
