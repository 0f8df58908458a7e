//! How the commands of a job see its cache after setup: `{cache}`
//! expanded, the job's own `CARGO_HOME` (offline: everything it needs is
//! there), the setup directory readable but never writable, and the
//! dependency layer copied into each build's own target dir.

use std::path::{Path, PathBuf};

use super::checks::CheckRun;
use super::commands::AttemptCommands;
use crate::cache::{JobCache, LayerError, harvest_layer, seed_layer};
use crate::manifest::{CACHE_PLACEHOLDER, Manifest};

/// A job's cache as the commands of one attempt use it.
#[derive(Debug, Clone, Default)]
pub struct CacheUse {
    /// The directory `{cache}` names (jobs with `[setup]` only).
    pub setup_dir: Option<PathBuf>,
    /// The job's own `CARGO_HOME` (jobs with `[setup]` only).
    pub cargo_home: Option<PathBuf>,
    /// The dependency build layer, when one was harvested.
    pub layer: Option<PathBuf>,
}

impl CacheUse {
    /// What `manifest`'s commands get from `cache` as it is now.
    pub fn of(manifest: &Manifest, cache: &JobCache) -> CacheUse {
        let has_setup = manifest.setup.is_some();
        CacheUse {
            setup_dir: has_setup.then(|| cache.setup_dir()),
            cargo_home: has_setup.then(|| cache.cargo_home()),
            layer: cache.has_layer().then(|| cache.layer_dir()),
        }
    }

    /// `text` with `{cache}` replaced by the cache directory.
    pub fn expand(&self, text: &str) -> String {
        match &self.setup_dir {
            Some(dir) => text.replace(CACHE_PLACEHOLDER, &dir.display().to_string()),
            None => text.to_string(),
        }
    }

    /// Points `commands` at the cache, read-only. The job's own `[env]`
    /// wins over the variables set here.
    pub fn apply(&self, commands: &mut AttemptCommands, manifest: &Manifest) {
        for (key, value) in &manifest.env {
            commands.env.insert(key.clone(), self.expand(value));
        }
        if let Some(home) = &self.cargo_home {
            set_default(
                commands,
                "CARGO_HOME",
                &home.display().to_string(),
                manifest,
            );
            // Setup fetched what the job needs, and later phases have no
            // network: cargo must not try.
            set_default(commands, "CARGO_NET_OFFLINE", "true", manifest);
        }
        if let Some(dir) = &self.setup_dir {
            commands.sandbox.readable.push(dir.clone());
        }
        if !manifest.sandbox.toolchains.is_empty() {
            commands.use_toolchains(manifest, |dir| self.expand(dir));
        }
    }

    /// Copies the dependency layer into `dir/target` (a build's own).
    pub fn seed(&self, dir: &Path) -> Result<u64, LayerError> {
        match &self.layer {
            Some(layer) => seed_layer(layer, &dir.join("target")),
            None => Ok(0),
        }
    }
}

fn set_default(commands: &mut AttemptCommands, key: &str, value: &str, manifest: &Manifest) {
    if !manifest.env.contains_key(key) {
        commands.env.insert(key.to_string(), value.to_string());
    }
}

/// Copies the dependencies' build outputs of a trusted build in `dir` into
/// the job's dependency layer, unless another runner did first. A harvest
/// that fails leaves no layer (later builds compile the dependencies
/// themselves), so it is not an error of the attempt.
pub(super) fn harvest(cache: &JobCache, dir: &Path, run: &CheckRun) {
    let Ok(_lock) = cache.lock() else {
        return;
    };
    if !cache.has_layer() {
        let _ = harvest_layer(
            &dir.join("target"),
            &run.dependency_hashes,
            &cache.layer_staging(),
            &cache.layer_dir(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholder_names_the_setup_dir_only_for_jobs_with_setup() {
        let with = CacheUse {
            setup_dir: Some(PathBuf::from("/d/cache/k/setup")),
            ..CacheUse::default()
        };
        assert_eq!(with.expand("{cache}/site:x"), "/d/cache/k/setup/site:x");
        assert_eq!(CacheUse::default().expand("{cache}"), "{cache}");
    }
}
