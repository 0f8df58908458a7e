//! The fixed search path programs are resolved from.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::ExecError;
use super::toolchain::Toolchain;

/// Directories searched in order for a program name. Chosen at job start
/// from the runner's configuration, never from model input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
}

/// System directories searched after the toolchain's.
const SYSTEM_DIRS: [&str; 3] = ["/usr/local/bin", "/usr/bin", "/bin"];

impl SearchPath {
    /// The toolchain's bin directory (where the runner's `cargo` lives),
    /// then `/usr/local/bin`, `/usr/bin`, `/bin`.
    pub fn fixed() -> SearchPath {
        SearchPath::for_toolchain(&Toolchain::detect())
    }

    pub fn for_toolchain(toolchain: &Toolchain) -> SearchPath {
        let mut dirs: Vec<PathBuf> = toolchain.cargo_bin().into_iter().collect();
        dirs.extend(SYSTEM_DIRS.iter().map(PathBuf::from));
        SearchPath::new(dirs)
    }

    /// A custom list; relative and duplicate entries are dropped.
    pub fn new(dirs: Vec<PathBuf>) -> SearchPath {
        let mut kept: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            if dir.is_absolute() && !kept.contains(&dir) {
                kept.push(dir);
            }
        }
        SearchPath { dirs: kept }
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The value of `PATH` given to commands.
    pub fn to_env(&self) -> String {
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        dirs.join(":")
    }

    /// The absolute path of the first executable regular file called `name`.
    /// The path is not canonicalized: multi-call binaries such as rustup's
    /// proxies dispatch on the name they were started as.
    pub fn resolve(&self, name: &str) -> Result<PathBuf, ExecError> {
        let not_found = || ExecError::NotFound {
            program: name.to_string(),
            path: self.to_env(),
        };
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(not_found());
        }
        self.dirs
            .iter()
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable(candidate))
            .ok_or_else(not_found)
    }
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_names_in_order_and_never_paths() {
        let path = SearchPath::new(vec![
            PathBuf::from("relative"),
            PathBuf::from("/usr/bin"),
            PathBuf::from("/bin"),
            PathBuf::from("/usr/bin"),
        ]);
        assert_eq!(path.dirs().len(), 2);
        assert_eq!(path.resolve("sh").unwrap(), PathBuf::from("/usr/bin/sh"));
        assert!(path.resolve("/bin/sh").is_err());
        assert!(path.resolve("../bin/sh").is_err());
        assert!(path.resolve("no-such-program-here").is_err());
        assert_eq!(path.to_env(), "/usr/bin:/bin");
    }
}
