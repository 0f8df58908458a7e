//! The runner's Rust toolchain, located once at job start from the runner's
//! own environment (never from anything a model controls), so commands can
//! find `cargo` and the sandbox can grant read access to it.

use std::path::{Path, PathBuf};

/// Where rustup and cargo keep their files, if present on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toolchain {
    pub rustup_home: Option<PathBuf>,
    pub cargo_home: Option<PathBuf>,
}

impl Toolchain {
    /// `RUSTUP_HOME` / `CARGO_HOME` of the runner, else `~/.rustup` and
    /// `~/.cargo`; each kept only if it is an existing directory.
    pub fn detect() -> Toolchain {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let pick = |var: &str, default: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(default)))
                .filter(|p| p.is_absolute() && p.is_dir())
                .and_then(|p| p.canonicalize().ok())
        };
        Toolchain {
            rustup_home: pick("RUSTUP_HOME", ".rustup"),
            cargo_home: pick("CARGO_HOME", ".cargo"),
        }
    }

    /// `CARGO_HOME/bin`, where rustup installs its proxies.
    pub fn cargo_bin(&self) -> Option<PathBuf> {
        self.cargo_home
            .as_deref()
            .map(|h| h.join("bin"))
            .filter(|p| p.is_dir())
    }

    /// What a sandboxed command may read (and execute) of the toolchain:
    /// all of rustup's home, and of cargo's home only the binaries, the
    /// package caches and the configuration (not `credentials.toml`).
    pub fn readable(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(rustup) = &self.rustup_home {
            out.push(rustup.clone());
        }
        if let Some(cargo) = &self.cargo_home {
            for entry in ["bin", "registry", "git", "config.toml", "config"] {
                let path = cargo.join(entry);
                if path.exists() {
                    out.push(path);
                }
            }
        }
        out
    }

    /// Whether `path` lies in the toolchain (used to explain sandbox grants).
    pub fn contains(&self, path: &Path) -> bool {
        self.readable().iter().any(|p| path.starts_with(p))
    }
}
