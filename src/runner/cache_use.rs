//! How the commands of a job see its cache after setup: `{cache}`
//! expanded, the job's own `CARGO_HOME` (offline: everything it needs is
//! there), the setup directory readable but never writable, the links the
//! language wants from each tree into it (JavaScript's `node_modules`),
//! and the dependency layer copied into the own target dir of each phase
//! that builds.

use std::path::{Path, PathBuf};

use super::checks::CheckRun;
use super::commands::AttemptCommands;
use crate::cache::{JobCache, LayerError, harvest_layer, seed_layer};
use crate::manifest::{CACHE_PLACEHOLDER, Manifest};

/// A job's cache as the commands of one attempt use it.
#[derive(Debug, Clone, Default)]
pub(crate) struct CacheUse {
    /// The directory `{cache}` names (jobs with `[setup]` only).
    pub setup_dir: Option<PathBuf>,
    /// The job's own `CARGO_HOME` (jobs with `[setup]` only).
    pub cargo_home: Option<PathBuf>,
    /// The dependency build layer, when one was harvested.
    pub layer: Option<PathBuf>,
    /// Links made in each tree: (path in the tree, target in the cache).
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Which commands build (and so get the layer): the language's test,
    /// `None` when the table does not know the job's language.
    pub tooling: Option<&'static dyn crate::lang::Tooling>,
}

impl CacheUse {
    /// What `manifest`'s commands get from `cache` as it is now.
    pub(crate) fn of(manifest: &Manifest, cache: &JobCache) -> CacheUse {
        let has_setup = manifest.setup.is_some();
        let tooling = manifest
            .acceptance
            .as_ref()
            .and_then(crate::lang::tooling_for);
        let links = match (has_setup, tooling) {
            (true, Some(tooling)) => tooling
                .cache_links()
                .iter()
                .map(|l| (PathBuf::from(l.tree), cache.setup_dir().join(l.cache)))
                .collect(),
            _ => Vec::new(),
        };
        CacheUse {
            setup_dir: has_setup.then(|| cache.setup_dir()),
            cargo_home: has_setup.then(|| cache.cargo_home()),
            layer: cache.has_layer().then(|| cache.layer_dir()),
            links,
            tooling,
        }
    }

    /// `text` with `{cache}` replaced by the cache directory.
    pub(crate) fn expand(&self, text: &str) -> String {
        match &self.setup_dir {
            Some(dir) => text.replace(CACHE_PLACEHOLDER, &dir.display().to_string()),
            None => text.to_string(),
        }
    }

    /// Points `commands` at the cache, read-only. The job's own `[env]`
    /// wins over the variables set here.
    pub(crate) fn apply(&self, commands: &mut AttemptCommands, manifest: &Manifest) {
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

    /// Whether a phase running `commands` builds, and so gets the layer:
    /// one of them builds, as the language says; every phase when the
    /// language is not known.
    pub(crate) fn builds<'a>(&self, mut commands: impl Iterator<Item = &'a [String]>) -> bool {
        match self.tooling {
            Some(tooling) => commands.any(|argv| tooling.builds(argv)),
            None => true,
        }
    }

    /// Prepares the tree `dir` for a phase: the links into the cache
    /// (left out where the tree has the name, or the cache lacks the
    /// target), and, when the phase `builds`, a copy of the dependency
    /// layer in `dir/target` (its own).
    pub(crate) fn seed(&self, dir: &Path, builds: bool) -> Result<u64, LayerError> {
        for (tree, target) in &self.links {
            let link = dir.join(tree);
            if target.exists() && link.symlink_metadata().is_err() {
                let _ = std::os::unix::fs::symlink(target, &link);
            }
        }
        match &self.layer {
            Some(layer) if builds => seed_layer(layer, &dir.join("target")),
            _ => Ok(0),
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
