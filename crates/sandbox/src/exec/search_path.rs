//! The fixed search path programs are resolved from.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::ExecError;
use super::toolchain::Toolchain;

/// Directories searched in order for a program name. Chosen at job start
/// from the runner's configuration and the job's manifest, never from
/// model input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
    /// How many of `dirs`, from the front, are the job's own toolchain
    /// directories (granted with their prefixes).
    toolchains: usize,
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
        SearchPath::for_job(&[], toolchain)
    }

    /// A job's own toolchain directories (`[sandbox] toolchains`, absolute),
    /// then the runner's toolchain's bin directory and the system ones.
    pub fn for_job(toolchains: &[PathBuf], toolchain: &Toolchain) -> SearchPath {
        let mut path = SearchPath::new(toolchains.to_vec());
        path.toolchains = path.dirs.len();
        let mut rest: Vec<PathBuf> = toolchain.cargo_bin().into_iter().collect();
        rest.extend(SYSTEM_DIRS.iter().map(PathBuf::from));
        for dir in rest {
            if !path.dirs.contains(&dir) {
                path.dirs.push(dir);
            }
        }
        path
    }

    /// A custom list; relative and duplicate entries are dropped.
    pub fn new(dirs: Vec<PathBuf>) -> SearchPath {
        let mut kept: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            if dir.is_absolute() && !kept.contains(&dir) {
                kept.push(dir);
            }
        }
        SearchPath {
            dirs: kept,
            toolchains: 0,
        }
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The job's own toolchain directories, first on the path.
    pub fn toolchain_dirs(&self) -> &[PathBuf] {
        &self.dirs[..self.toolchains]
    }

    /// What a command must be able to read to run programs from this path:
    /// every directory as given (its links are recreated inside the
    /// sandbox) and the real paths behind it (see `resolve`).
    pub fn grants(&self) -> Vec<PathBuf> {
        let mut out = self.dirs.clone();
        for (index, dir) in self.dirs.iter().enumerate() {
            for grant in super::resolve::grants_for(dir, index < self.toolchains) {
                if !out.contains(&grant) {
                    out.push(grant);
                }
            }
        }
        out
    }

    /// What a command must be able to read to run the one program
    /// `resolved` (found on this path): every directory as given, and the
    /// real directory of `resolved` where its links lead elsewhere. No
    /// other entry of the path is looked at.
    pub fn grants_for_program(&self, resolved: &Path) -> Vec<PathBuf> {
        let mut out = self.dirs.clone();
        for grant in super::resolve::grants_for_program(resolved) {
            if !out.contains(&grant) {
                out.push(grant);
            }
        }
        out
    }

    /// Where `name` resolves and the file that really runs (its links
    /// followed), for `doctor` and `validate --verbose`.
    pub fn describe(&self, name: &str) -> Result<(PathBuf, PathBuf), ExecError> {
        let resolved = self.resolve(name)?;
        let real = resolved.canonicalize().unwrap_or_else(|_| resolved.clone());
        Ok((resolved, real))
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
