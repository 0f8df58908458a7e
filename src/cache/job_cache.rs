//! Where a job's cache lives and how runners share it: `DATA/cache/<key>/`
//! holds `setup/` (the directory `{cache}` names, with the job's own
//! `CARGO_HOME` in `setup/cargo/`), `setup.done` once the setup commands
//! succeeded, and `deps/` (the dependency build layer) once harvested.
//! `DATA/cache/<key>.lock` is held (an OS file lock) while a runner fills
//! either, so the instances of one job in a batch run setup once and the
//! others wait and reuse it.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Failures handling a job cache (the runtime's I/O, not a verdict).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CacheError {
    #[error("failed to {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CacheError {
    let path = path.to_path_buf();
    move |source| CacheError::Io {
        action,
        path,
        source,
    }
}

/// What `setup.done` records about the run that filled the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SetupMarker {
    pub duration_ms: u64,
}

/// One job's cache directory.
#[derive(Debug, Clone)]
pub(crate) struct JobCache {
    root: PathBuf,
}

/// Held while a runner fills the cache; released when dropped.
#[derive(Debug)]
pub(crate) struct CacheLock {
    _file: File,
}

/// Files of the runner's `CARGO_HOME` a job's own one starts with: the
/// configuration (registry mirrors, source replacement), never credentials.
const CARGO_CONFIG: [&str; 2] = ["config.toml", "config"];

impl JobCache {
    /// The cache named `key` under `cache_dir` (`DATA/cache`).
    pub(crate) fn new(cache_dir: &Path, key: &str) -> JobCache {
        JobCache {
            root: cache_dir.join(key),
        }
    }

    /// The cache's key (its directory's name).
    pub(crate) fn key(&self) -> &str {
        self.root
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
    }

    /// The directory `{cache}` names: writable for the setup commands,
    /// read-only for every later command.
    pub(crate) fn setup_dir(&self) -> PathBuf {
        self.root.join("setup")
    }

    /// The job's own `CARGO_HOME` (`registry/` and `git/` filled by setup).
    pub(crate) fn cargo_home(&self) -> PathBuf {
        self.setup_dir().join("cargo")
    }

    /// The dependency build layer: a target dir holding only the
    /// dependencies' build outputs.
    pub(crate) fn layer_dir(&self) -> PathBuf {
        self.root.join("deps")
    }

    /// Waits for and takes the cache's lock.
    pub(crate) fn lock(&self) -> Result<CacheLock, CacheError> {
        let parent = self.root.parent().unwrap_or(Path::new("/"));
        fs::create_dir_all(parent).map_err(io("create", parent))?;
        let path = self.root.with_extension("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io("open", &path))?;
        file.lock().map_err(io("lock", &path))?;
        Ok(CacheLock { _file: file })
    }

    fn setup_marker_path(&self) -> PathBuf {
        self.root.join("setup.done")
    }

    /// The marker of a setup that succeeded, if there is one.
    pub(crate) fn setup_marker(&self) -> Option<SetupMarker> {
        let text = fs::read_to_string(self.setup_marker_path()).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Empties the setup directory for a fresh run: no marker, an empty
    /// `setup/`, and a `CARGO_HOME` holding the runner's cargo
    /// configuration (copied, so the job sees the same registry settings).
    pub(crate) fn reset_setup(&self, runner_cargo_home: Option<&Path>) -> Result<(), CacheError> {
        let marker = self.setup_marker_path();
        if marker.exists() {
            fs::remove_file(&marker).map_err(io("remove", &marker))?;
        }
        let dir = self.setup_dir();
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(io("remove", &dir))?;
        }
        let home = self.cargo_home();
        fs::create_dir_all(&home).map_err(io("create", &home))?;
        for name in CARGO_CONFIG {
            let Some(from) = runner_cargo_home.map(|h| h.join(name)) else {
                continue;
            };
            if from.is_file() {
                fs::copy(&from, home.join(name)).map_err(io("copy", &from))?;
            }
        }
        Ok(())
    }

    /// Records that setup succeeded (atomically: a marker is whole or absent).
    pub(crate) fn mark_setup(&self, marker: &SetupMarker) -> Result<(), CacheError> {
        let path = self.setup_marker_path();
        let tmp = self.root.join("setup.done.tmp");
        let text = serde_json::to_string(marker).unwrap_or_default();
        fs::write(&tmp, text).map_err(io("write", &tmp))?;
        fs::rename(&tmp, &path).map_err(io("rename", &tmp))
    }

    /// Whether a dependency layer was harvested.
    pub(crate) fn has_layer(&self) -> bool {
        self.layer_dir().is_dir()
    }

    /// Where a harvest is assembled before it is renamed into place.
    pub(crate) fn layer_staging(&self) -> PathBuf {
        self.root.join("deps.tmp")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_is_reset_marked_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let runner = dir.path().join("runner-cargo");
        fs::create_dir_all(&runner).unwrap();
        fs::write(runner.join("config.toml"), "[net]\n").unwrap();
        fs::write(runner.join("credentials.toml"), "secret").unwrap();
        let cache = JobCache::new(&dir.path().join("cache"), "k");
        let _lock = cache.lock().unwrap();
        assert_eq!(cache.setup_marker(), None);
        cache.reset_setup(Some(&runner)).unwrap();
        assert!(cache.cargo_home().join("config.toml").is_file());
        assert!(!cache.cargo_home().join("credentials.toml").exists());
        fs::write(cache.setup_dir().join("leftover"), "x").unwrap();
        let marker = SetupMarker { duration_ms: 12 };
        cache.mark_setup(&marker).unwrap();
        assert_eq!(cache.setup_marker(), Some(marker));
        cache.reset_setup(None).unwrap();
        assert_eq!(cache.setup_marker(), None);
        assert!(!cache.setup_dir().join("leftover").exists());
    }
}
