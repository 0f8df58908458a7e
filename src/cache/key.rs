//! The key of a job's cache: a SHA-256 of everything that decides what the
//! setup fetches and what the dependencies build into, so a changed
//! `Cargo.lock`, setup command or `[env]` never reuses a stale cache, while
//! every attempt, repeat and provider of the same job shares one.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::inputs::SetupInputs;
use crate::manifest::Manifest;

/// Prefix of the hashed bytes, so a key never means two layouts.
const KEY_DOMAIN: &[u8] = b"agent-runtime job cache v1\n";

/// Deepest directory level the digest walks (deeper trees are cut there,
/// and the cut is part of the digest).
const MAX_DEPTH: usize = 64;

#[derive(Serialize)]
struct KeyParts<'a> {
    id: &'a str,
    source: &'a Path,
    source_digest: &'a str,
    setup: Option<&'a crate::manifest::Setup>,
    env: &'a std::collections::BTreeMap<String, String>,
    acceptance_dir: Option<&'a Path>,
    acceptance_digest: Option<&'a str>,
    acceptance_command: Option<&'a [String]>,
    sandbox: &'a crate::manifest::Sandbox,
}

/// Prefix of the hashed bytes of a shared cache's key.
const SHARED_DOMAIN: &[u8] = b"agent-runtime shared cache v2\n";

#[derive(Serialize)]
struct SharedParts<'a> {
    language: &'a str,
    inputs: &'a [(String, String)],
    setup: Option<&'a crate::manifest::Setup>,
    env: &'a std::collections::BTreeMap<String, String>,
    sandbox: &'a crate::manifest::Sandbox,
}

/// The inputs of `manifest`'s setup when its cache is shared: a job with
/// `[setup]` whose acceptance runs a language of the table (which names
/// the inputs). `None` for a job-scoped cache.
pub(crate) fn shared_inputs(manifest: &Manifest) -> Option<SetupInputs> {
    let setup = manifest.setup.as_ref()?;
    let tooling = crate::lang::tooling_for(manifest.acceptance.as_ref()?)?;
    Some(SetupInputs::find(&manifest.source, tooling, &setup.inputs))
}

/// The cache key of `manifest`. A job with `[setup]` whose language the
/// table knows gets a shared key: the language, its setup inputs (as the
/// language reads them, see [`SetupInputs`]), `[setup]`, `[env]` and the
/// sandbox settings — not the job id or the rest of the source, so jobs
/// with the same dependencies share one cache. Any other job's key is
/// job-scoped: its id, the source and acceptance trees (names, sizes and
/// modification times, see [`tree_digest`]), `[setup]`, `[env]`, the
/// acceptance command and the sandbox settings. Never the provider, the
/// prompt or the limits: those do not change what is fetched or built.
/// 32 hex digits.
pub(crate) fn cache_key(manifest: &Manifest) -> String {
    if let Some(inputs) = shared_inputs(manifest) {
        let material = inputs.key_material(&manifest.source);
        let parts = SharedParts {
            language: inputs.tooling.tooling_name(),
            inputs: &material,
            setup: manifest.setup.as_ref(),
            env: &manifest.env,
            sandbox: &manifest.sandbox,
        };
        let mut hasher = Sha256::new();
        hasher.update(SHARED_DOMAIN);
        hasher.update(serde_json::to_vec(&parts).unwrap_or_default());
        return hex(&hasher.finalize()[..16]);
    }
    job_key(manifest)
}

fn job_key(manifest: &Manifest) -> String {
    let source_digest = tree_digest(&manifest.source);
    let acceptance_digest = manifest.acceptance.as_ref().map(|a| tree_digest(&a.dir));
    let parts = KeyParts {
        id: &manifest.id,
        source: &manifest.source,
        source_digest: &source_digest,
        setup: manifest.setup.as_ref(),
        env: &manifest.env,
        acceptance_dir: manifest.acceptance.as_ref().map(|a| a.dir.as_path()),
        acceptance_digest: acceptance_digest.as_deref(),
        acceptance_command: manifest.acceptance.as_ref().map(|a| a.command.as_slice()),
        sandbox: &manifest.sandbox,
    };
    let mut hasher = Sha256::new();
    hasher.update(KEY_DOMAIN);
    // Serializing a struct keeps the field order fixed; `env` is sorted.
    hasher.update(serde_json::to_vec(&parts).unwrap_or_default());
    hex(&hasher.finalize()[..16])
}

/// A digest of the tree at `root`: every entry's relative name, kind,
/// size, permission bits and modification time, in name order, without
/// following symlinks (a link's target is hashed instead) and without
/// `.git` and `target` (which are not part of a job's inputs). Reading
/// metadata only keeps it cheap on large sources; an edit changes the
/// modification time, as it does for cargo's own freshness checks. A tree
/// that cannot be read hashes what could be read, plus the error.
pub(crate) fn tree_digest(root: &Path) -> String {
    let mut hasher = Sha256::new();
    walk(root, Path::new(""), 0, &mut hasher);
    hex(&hasher.finalize()[..16])
}

fn walk(root: &Path, rel: &Path, depth: usize, hasher: &mut Sha256) {
    if depth >= MAX_DEPTH {
        hasher.update(b"<too deep>");
        return;
    }
    let entries = match std::fs::read_dir(root.join(rel)) {
        Ok(entries) => entries,
        Err(e) => {
            hasher.update(format!("<unreadable {}: {e}>", rel.display()).as_bytes());
            return;
        }
    };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        if depth == 0 && (name == ".git" || name == "target") {
            continue;
        }
        let child = rel.join(&name);
        let Ok(meta) = root.join(&child).symlink_metadata() else {
            continue;
        };
        use std::os::unix::ffi::OsStrExt;
        hasher.update(child.as_os_str().as_bytes());
        hasher.update([0]);
        let kind = meta.file_type();
        let line = format!(
            "{} {} {:o} {}.{}\n",
            if kind.is_dir() {
                'd'
            } else if kind.is_symlink() {
                'l'
            } else {
                'f'
            },
            meta.len(),
            meta.mode() & 0o7777,
            meta.mtime(),
            meta.mtime_nsec()
        );
        hasher.update(line.as_bytes());
        if kind.is_symlink()
            && let Ok(target) = std::fs::read_link(root.join(&child))
        {
            hasher.update(target.as_os_str().as_bytes());
        }
        if kind.is_dir() {
            walk(root, &child, depth + 1, hasher);
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(dir: &Path, id: &str, deps: &str) -> Manifest {
        let root = dir.join(id);
        std::fs::create_dir_all(root.join("src/src")).unwrap();
        std::fs::create_dir_all(root.join("tests")).unwrap();
        let cargo =
            format!("[package]\nname = \"{id}\"\nversion = \"0.1.0\"\n[dependencies]\n{deps}");
        std::fs::write(root.join("src/Cargo.toml"), cargo).unwrap();
        std::fs::write(root.join("src/src/lib.rs"), id).unwrap();
        let toml = format!(
            "id = \"{id}\"\nprompt = \"p\"\nsource = \"src\"\neditable = [\"src/*.rs\"]\nallow = [\"cargo test **\"]\nverify = [\"cargo\", \"test\"]\n[setup]\ncommands = [[\"cargo\", \"fetch\"]]\n[acceptance]\ndir = \"tests\"\ncommand = [\"cargo\", \"test\", \"--offline\"]\n"
        );
        std::fs::write(root.join("job.toml"), toml).unwrap();
        crate::manifest::load_manifest(&root.join("job.toml")).unwrap()
    }

    #[test]
    fn jobs_with_the_same_dependencies_share_a_key_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = job(dir.path(), "alpha", "rand = \"0.8\"\n");
        let b = job(dir.path(), "beta", "rand = \"0.8\"\n");
        let c = job(dir.path(), "gamma", "rand = \"0.7\"\n");
        assert_eq!(
            cache_key(&a),
            cache_key(&b),
            "same dependencies, other crates"
        );
        assert_ne!(cache_key(&a), cache_key(&c));
        // An edit outside the inputs keeps the key.
        let before = cache_key(&a);
        std::fs::write(a.source.join("src/lib.rs"), "changed").unwrap();
        assert_eq!(cache_key(&a), before);
    }

    #[test]
    fn the_digest_follows_names_and_content_changes_but_skips_target() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "a").unwrap();
        let first = tree_digest(dir.path());
        assert_eq!(first, tree_digest(dir.path()), "stable");
        std::fs::create_dir_all(dir.path().join("target/debug")).unwrap();
        std::fs::write(dir.path().join("target/debug/x"), "build output").unwrap();
        assert_eq!(first, tree_digest(dir.path()), "target/ is not an input");
        std::fs::write(dir.path().join("src/lib.rs"), "ab").unwrap();
        let second = tree_digest(dir.path());
        assert_ne!(first, second, "a size change");
        std::fs::write(dir.path().join("Cargo.lock"), "").unwrap();
        assert_ne!(second, tree_digest(dir.path()), "a new file");
    }
}
