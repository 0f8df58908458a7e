//! Where the programs of a search path really live, found by the runner
//! (never from anything a command or a model controls) and granted
//! read-only, so a toolchain reached through links runs inside the
//! sandbox as it does outside.
//!
//! For every directory of the search path: its real path, and the real
//! directory of every program in it that is a link to somewhere else
//! (`cargo -> /nix/store/.../bin/cargo`). For a job's own toolchain
//! directories (`[sandbox] toolchains`) also the directory's prefix
//! (`DIR/..`: a venv's `lib/python3.x` and `pyvenv.cfg`) and the real
//! prefix of every link target (`.../bin/..`: the interpreter a venv's
//! `python` points at, with its standard library). A prefix is only
//! granted where it names a toolchain rather than a home or the root: it
//! has at least two components and does not hold the runner's `HOME`;
//! otherwise the directory alone is.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Scanned directories kept per process.
const CACHED: usize = 64;

/// What identifies a directory's listing: device, inode and mtime.
type Stamp = (u64, u64, i64, i64);

struct Scan {
    dir: PathBuf,
    toolchain: bool,
    stamp: Stamp,
    grants: Vec<PathBuf>,
}

/// The real paths a command needs to run the programs of `dir`, found
/// once per directory and listing (a directory whose entries change, such
/// as a venv a setup command makes, is scanned again).
pub(crate) fn grants_for(dir: &Path, toolchain: bool) -> Vec<PathBuf> {
    static CACHE: Mutex<Vec<Scan>> = Mutex::new(Vec::new());
    let Ok(meta) = std::fs::metadata(dir) else {
        return Vec::new();
    };
    let stamp = (meta.dev(), meta.ino(), meta.mtime(), meta.mtime_nsec());
    if let Ok(cache) = CACHE.lock()
        && let Some(scan) = cache
            .iter()
            .find(|s| s.dir == dir && s.toolchain == toolchain && s.stamp == stamp)
    {
        return scan.grants.clone();
    }
    let grants = scan(dir, toolchain);
    if let Ok(mut cache) = CACHE.lock() {
        cache.retain(|s| !(s.dir == dir && s.toolchain == toolchain));
        if cache.len() >= CACHED {
            cache.remove(0);
        }
        cache.push(Scan {
            dir: dir.to_path_buf(),
            toolchain,
            stamp,
            grants: grants.clone(),
        });
    }
    grants
}

fn scan(dir: &Path, toolchain: bool) -> Vec<PathBuf> {
    let Ok(real) = dir.canonicalize() else {
        return Vec::new();
    };
    let mut grants = vec![real.clone()];
    let add = |path: PathBuf, grants: &mut Vec<PathBuf>| {
        if !grants.iter().any(|g| path.starts_with(g)) && !under_system(&path) {
            grants.retain(|g| !g.starts_with(&path));
            grants.push(path);
        }
    };
    if toolchain && let Some(prefix) = real.parent().filter(|p| is_prefix(p)) {
        add(prefix.to_path_buf(), &mut grants);
    }
    let Ok(entries) = std::fs::read_dir(&real) else {
        return grants;
    };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        // A link to a name in the same directory (`cargo -> rustup`) leads
        // to an entry scanned on its own.
        if std::fs::read_link(entry.path()).is_ok_and(|to| {
            to.components().count() == 1 && to.is_relative() && to != Path::new("..")
        }) {
            continue;
        }
        let Ok(target) = entry.path().canonicalize() else {
            continue; // a dangling link runs nowhere
        };
        let Some(home) = target.parent() else {
            continue;
        };
        let grant = match home.parent() {
            Some(prefix) if toolchain && is_prefix(prefix) => prefix,
            _ => home,
        };
        add(grant.to_path_buf(), &mut grants);
    }
    grants
}

/// The real directory of the program `resolved`, where its links lead
/// out of the system directories (none where they do not).
pub(crate) fn grants_for_program(resolved: &Path) -> Vec<PathBuf> {
    let Ok(target) = resolved.canonicalize() else {
        return Vec::new();
    };
    target
        .parent()
        .filter(|home| !under_system(home))
        .map(|home| vec![home.to_path_buf()])
        .unwrap_or_default()
}

/// Whether `prefix` may be granted whole as a toolchain's prefix.
fn is_prefix(prefix: &Path) -> bool {
    let deep = prefix.components().count() > 2; // `/` and two names
    let home = std::env::var_os("HOME").map(PathBuf::from);
    deep && !home.is_some_and(|home| home.starts_with(prefix))
}

/// Whether `path` lies in a system directory every command may read.
fn under_system(path: &Path) -> bool {
    static SYSTEM: OnceLock<Vec<PathBuf>> = OnceLock::new();
    SYSTEM
        .get_or_init(|| {
            ["/usr", "/bin", "/sbin", "/lib", "/lib64"]
                .iter()
                .filter_map(|p| Path::new(p).canonicalize().ok())
                .collect()
        })
        .iter()
        .any(|system| path.starts_with(system))
}

/// Why `resolved` could not be started, beyond the error itself: what is
/// missing inside the sandbox when the file exists outside it.
pub(crate) fn why_not_started(resolved: &Path, error: &std::io::Error) -> Option<String> {
    if error.raw_os_error() != Some(libc::ENOENT) && error.raw_os_error() != Some(libc::EACCES) {
        return None;
    }
    let real = resolved.canonicalize().ok()?;
    let head = std::fs::read(&real).ok().map(|bytes| {
        let line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
        String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned()
    });
    let link = if real != resolved {
        format!(" (a link to {})", real.display())
    } else {
        String::new()
    };
    Some(match head.as_deref().and_then(|h| h.strip_prefix("#!")) {
        Some(interpreter) => format!(
            "it exists outside the sandbox{link}; its interpreter `{}` is missing or not \
             granted inside (name its directory in [sandbox] toolchains)",
            interpreter.trim()
        ),
        None => format!(
            "it exists outside the sandbox{link}; a link target, its loader or a library \
             it needs is not granted inside (name its directory in [sandbox] toolchains)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_links_are_followed_and_toolchains_get_their_prefixes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        // An interpreter installed under its own prefix, and a venv whose
        // bin links to it.
        let interp = root.join("versions/3.12/bin");
        std::fs::create_dir_all(&interp).unwrap();
        std::fs::write(interp.join("python3.12"), "").unwrap();
        let venv_bin = root.join("venv/bin");
        std::fs::create_dir_all(&venv_bin).unwrap();
        std::os::unix::fs::symlink(interp.join("python3.12"), venv_bin.join("python")).unwrap();
        std::os::unix::fs::symlink("python", venv_bin.join("python3")).unwrap();
        std::os::unix::fs::symlink("/usr/bin/env", venv_bin.join("env")).unwrap();
        std::os::unix::fs::symlink(root.join("missing"), venv_bin.join("gone")).unwrap();

        let plain = scan(&venv_bin, false);
        assert_eq!(plain, [venv_bin.clone(), interp.clone()]);
        let toolchain = scan(&venv_bin, true);
        assert_eq!(toolchain, [root.join("venv"), root.join("versions/3.12")]);

        // A directory link resolves to its target.
        std::os::unix::fs::symlink(&venv_bin, root.join("bin-link")).unwrap();
        assert_eq!(grants_for(&root.join("bin-link"), false), plain);
    }

    #[test]
    fn a_home_or_the_root_is_never_a_prefix() {
        assert!(!is_prefix(Path::new("/")));
        assert!(!is_prefix(Path::new("/opt")));
        assert!(is_prefix(Path::new("/opt/python")));
        if let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
            && home.components().count() > 2
        {
            assert!(!is_prefix(&home));
        }
    }
}
