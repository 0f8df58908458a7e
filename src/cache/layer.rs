//! The dependency build layer: the build outputs of a crate's
//! dependencies, harvested once from a trusted build (the baseline: the
//! job author's source and tests, before any model call) and copied into
//! the target dir of every later build, so dependencies compile once per
//! job instead of once per phase.
//!
//! What counts as a dependency's output is read from cargo's own messages
//! (`--message-format=json`): every artifact of a package that is not a
//! local path package, and the run of its build script, identified by the
//! hash cargo puts in their names. Local packages — the code the agent
//! edits and the hidden tests — never enter the layer, so a later build
//! always compiles them itself.
//!
//! Copies, never links: each phase gets files of its own (a reflink where
//! the file system has them, else a copy), with their modification times,
//! which cargo's freshness checks compare. A write through one cannot reach
//! the layer or another phase.

use std::collections::BTreeSet;
use std::fs::{self, File, FileTimes};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Directories of a cargo profile dir whose entries can be dependencies'.
const LAYER_DIRS: [&str; 3] = ["deps", "build", ".fingerprint"];

/// Failures copying a layer (the runtime's I/O).
#[derive(Debug, thiserror::Error)]
#[error("failed to {action} {}: {source}", .path.display())]
pub(crate) struct LayerError {
    action: &'static str,
    path: PathBuf,
    source: io::Error,
}

fn err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> LayerError {
    let path = path.to_path_buf();
    move |source| LayerError {
        action,
        path,
        source,
    }
}

/// The hashes cargo gave the dependencies' units, from the JSON messages
/// of a build: artifacts and build-script runs of every package whose id
/// is not a local `path+` one.
pub(crate) fn dependency_hashes(cargo_json: &str) -> BTreeSet<String> {
    let mut hashes = BTreeSet::new();
    for line in cargo_json.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(package) = message["package_id"].as_str() else {
            continue;
        };
        if package.starts_with("path+") {
            continue;
        }
        let mut paths: Vec<&str> = Vec::new();
        match message["reason"].as_str() {
            Some("compiler-artifact") => {
                if let Some(files) = message["filenames"].as_array() {
                    paths.extend(files.iter().filter_map(|f| f.as_str()));
                }
            }
            Some("build-script-executed") => {
                paths.extend(message["out_dir"].as_str());
            }
            _ => {}
        }
        for path in paths {
            // The file's own name (`libx-<hash>.rlib`) or, for build
            // scripts, its directory's (`build/x-<hash>/...`).
            for name in Path::new(path).iter().rev().take(2) {
                if let Some(hash) = name.to_str().and_then(unit_hash) {
                    hashes.insert(hash.to_string());
                }
            }
        }
    }
    hashes
}

/// The unit hash in a cargo output name: `libitertools-0123456789abcdef.rlib`,
/// `itertools-0123456789abcdef` (a fingerprint or build dir).
fn unit_hash(name: &str) -> Option<&str> {
    let stem = name.split('.').next()?;
    let (_, hash) = stem.rsplit_once('-')?;
    (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hash)
}

/// Whether `rel` (relative to a target dir) lies in a dependency's entry:
/// `<profile>/{deps,build,.fingerprint}/<name>-<hash>...` (or with a target
/// triple before the profile) whose hash is one of `hashes`.
pub(crate) fn is_layer_entry(rel: &Path, hashes: &BTreeSet<String>) -> bool {
    let parts: Vec<&str> = rel
        .components()
        .map(|c| match c {
            Component::Normal(name) => name.to_str().unwrap_or("\0"),
            _ => "\0",
        })
        .collect();
    (1..=2).any(|at| {
        parts.get(at).is_some_and(|dir| LAYER_DIRS.contains(dir))
            && parts
                .get(at + 1)
                .and_then(|entry| unit_hash(entry))
                .is_some_and(|hash| hashes.contains(hash))
    })
}

/// Copies the dependencies' entries of the target dir `target` into the
/// new layer `dest`, through `staging` (renamed into place once whole).
/// Symlinks are not copied. Returns the number of files; with none, no
/// layer is made.
pub(crate) fn harvest_layer(
    target: &Path,
    hashes: &BTreeSet<String>,
    staging: &Path,
    dest: &Path,
) -> Result<u64, LayerError> {
    if staging.exists() {
        fs::remove_dir_all(staging).map_err(err("remove", staging))?;
    }
    if hashes.is_empty() || !target.is_dir() {
        return Ok(0);
    }
    fs::create_dir_all(staging).map_err(err("create", staging))?;
    let mut files = 0;
    harvest_dir(target, Path::new(""), hashes, staging, &mut files)?;
    if files == 0 {
        fs::remove_dir_all(staging).map_err(err("remove", staging))?;
        return Ok(0);
    }
    fs::rename(staging, dest).map_err(err("rename", staging))?;
    Ok(files)
}

fn harvest_dir(
    target: &Path,
    rel: &Path,
    hashes: &BTreeSet<String>,
    staging: &Path,
    files: &mut u64,
) -> Result<(), LayerError> {
    let dir = target.join(rel);
    for entry in fs::read_dir(&dir).map_err(err("read", &dir))? {
        let entry = entry.map_err(err("read", &dir))?;
        let child = rel.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(err("stat", &target.join(&child)))?;
        if is_layer_entry(&child, hashes) {
            *files += copy_tree(&target.join(&child), &staging.join(&child))?;
        } else if kind.is_dir() && child.components().count() < 3 {
            harvest_dir(target, &child, hashes, staging, files)?;
        }
    }
    Ok(())
}

/// Copies the layer into the target dir `target` of a build about to run,
/// unless `target` already exists (a source that ships its own). Returns
/// the number of files copied.
pub(crate) fn seed_layer(layer: &Path, target: &Path) -> Result<u64, LayerError> {
    if !layer.is_dir() || target.exists() {
        return Ok(0);
    }
    copy_tree(layer, target)
}

/// Copies the tree (or file) `from` to `to`: directories made, regular
/// files copied with their permission bits and times, symlinks and
/// special files left out.
fn copy_tree(from: &Path, to: &Path) -> Result<u64, LayerError> {
    let meta = from.symlink_metadata().map_err(err("stat", from))?;
    if meta.is_file() {
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(err("create", parent))?;
        }
        copy_file(from, to, &meta)?;
        return Ok(1);
    }
    if !meta.is_dir() {
        return Ok(0);
    }
    fs::create_dir_all(to).map_err(err("create", to))?;
    let mut files = 0;
    for entry in fs::read_dir(from).map_err(err("read", from))? {
        let entry = entry.map_err(err("read", from))?;
        files += copy_tree(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(files)
}

/// A file of its own at `to` with `from`'s content, mode and times: a
/// reflink (shared blocks, copied on write) where the file system can, a
/// kernel-side copy otherwise. Never a hard link.
fn copy_file(from: &Path, to: &Path, meta: &fs::Metadata) -> Result<(), LayerError> {
    let mut source = File::open(from).map_err(err("open", from))?;
    let mut dest = File::options()
        .write(true)
        .create_new(true)
        .mode(meta.permissions().mode() & 0o777)
        .open(to)
        .map_err(err("create", to))?;
    if rustix::fs::ioctl_ficlone(&dest, &source).is_err() {
        io::copy(&mut source, &mut dest).map_err(err("copy", from))?;
    }
    let mut times = FileTimes::new();
    if let Ok(modified) = meta.modified() {
        times = times.set_modified(modified);
    }
    if let Ok(accessed) = meta.accessed() {
        times = times.set_accessed(accessed);
    }
    dest.set_times(times).map_err(err("set the times of", to))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGES: &str = concat!(
        r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#itertools@0.14.0","filenames":["/c/target/debug/deps/libitertools-bc47bbb9a7a852fa.rlib","/c/target/debug/deps/libitertools-bc47bbb9a7a852fa.rmeta"]}"#,
        "\n",
        r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#libc@0.2.0","target":{"kind":["custom-build"]},"filenames":["/c/target/debug/build/libc-1111111111111111/build-script-build"]}"#,
        "\n",
        r#"{"reason":"build-script-executed","package_id":"registry+https://github.com/rust-lang/crates.io-index#libc@0.2.0","out_dir":"/c/target/debug/build/libc-2222222222222222/out"}"#,
        "\n",
        r#"{"reason":"compiler-artifact","package_id":"path+file:///c#word_ranks@0.1.0","filenames":["/c/target/debug/deps/libword_ranks-3333333333333333.rlib"]}"#,
        "\nnot json\n",
    );

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hashes_are_the_dependencies_and_never_a_local_package() {
        assert_eq!(
            dependency_hashes(MESSAGES),
            set(&["1111111111111111", "2222222222222222", "bc47bbb9a7a852fa"])
        );
    }

    #[test]
    fn only_entries_of_those_units_belong_to_the_layer() {
        let hashes = dependency_hashes(MESSAGES);
        let yes = [
            "debug/deps/libitertools-bc47bbb9a7a852fa.rlib",
            "debug/deps/itertools-bc47bbb9a7a852fa.d",
            "debug/.fingerprint/itertools-bc47bbb9a7a852fa/lib-itertools",
            "debug/build/libc-2222222222222222/out/x.rs",
            "x86_64-unknown-linux-gnu/debug/deps/libitertools-bc47bbb9a7a852fa.rlib",
        ];
        let no = [
            "debug/deps/libword_ranks-3333333333333333.rlib",
            "debug/.fingerprint/word_ranks-3333333333333333",
            "debug/deps/acceptance-4444444444444444",
            "debug/incremental/itertools-bc47bbb9a7a852fa",
            "debug/libitertools-bc47bbb9a7a852fa.rlib",
            "debug/deps",
            "debug/deps/libitertools-bc47bbb9a7a852fa-extra",
            "a/b/c/deps/libitertools-bc47bbb9a7a852fa.rlib",
        ];
        for rel in yes {
            assert!(is_layer_entry(Path::new(rel), &hashes), "{rel}");
        }
        for rel in no {
            assert!(!is_layer_entry(Path::new(rel), &hashes), "{rel}");
        }
    }

    #[test]
    fn a_harvest_keeps_dependencies_with_their_times_and_seeds_private_copies() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        let deps = target.join("debug/deps");
        fs::create_dir_all(&deps).unwrap();
        fs::create_dir_all(target.join("debug/incremental")).unwrap();
        let dep = deps.join("libitertools-bc47bbb9a7a852fa.rlib");
        fs::write(&dep, "dependency").unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        File::options()
            .write(true)
            .open(&dep)
            .unwrap()
            .set_modified(old)
            .unwrap();
        fs::write(deps.join("libword_ranks-3333333333333333.rlib"), "local").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", deps.join("itertools-bc47bbb9a7a852fa.d"))
            .unwrap();
        let layer = dir.path().join("layer");
        let files = harvest_layer(
            &target,
            &dependency_hashes(MESSAGES),
            &dir.path().join("staging"),
            &layer,
        )
        .unwrap();
        assert_eq!(files, 1, "the dependency only; no local file, no symlink");
        let cached = layer.join("debug/deps/libitertools-bc47bbb9a7a852fa.rlib");
        assert_eq!(fs::metadata(&cached).unwrap().modified().unwrap(), old);
        assert!(!dir.path().join("staging").exists());

        let phase = dir.path().join("phase/target");
        assert_eq!(seed_layer(&layer, &phase).unwrap(), 1);
        let copy = phase.join("debug/deps/libitertools-bc47bbb9a7a852fa.rlib");
        assert_eq!(fs::metadata(&copy).unwrap().modified().unwrap(), old);
        fs::write(&copy, "poisoned").unwrap();
        assert_eq!(fs::read_to_string(&cached).unwrap(), "dependency");
        // A target dir that exists is left as it is.
        assert_eq!(seed_layer(&layer, &phase).unwrap(), 0);
        // Nothing to harvest makes no layer.
        let none = dir.path().join("none");
        let files =
            harvest_layer(&target, &BTreeSet::new(), &dir.path().join("s2"), &none).unwrap();
        assert_eq!(files, 0);
        assert!(!none.exists());
    }
}
