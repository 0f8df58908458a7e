//! Turning job arguments into manifest files: a file is itself, a directory
//! is every `*.toml` directly inside it (or, when it holds none, every
//! `*/job.toml` one level down: the job folders an import writes), anything
//! with `*?[` is a glob.
//! The result is sorted and without duplicates, so runs are reproducible.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Why a job argument named no manifest.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExpandError {
    #[error("{}: no such file or directory{}", path.display(), hint.as_deref().map(|h| format!(" (did you mean {h}?)")).unwrap_or_default())]
    NotFound {
        path: PathBuf,
        /// The same path with `.toml`, when that exists.
        hint: Option<String>,
    },
    #[error("{}: directory holds no *.toml files and no job folders (*/job.toml)", path.display())]
    EmptyDir { path: PathBuf },
    #[error("{}: cannot list directory: {source}", path.display())]
    ListDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{pattern}: invalid glob: {message}")]
    BadPattern { pattern: String, message: String },
    #[error("{pattern}: glob matched no files")]
    NoMatch { pattern: String },
}

/// Expands `args` (files, directories, globs) into manifest paths, sorted
/// and deduplicated. Paths are kept as the user wrote them (so messages
/// quote them back); duplicates are found by their absolute form.
pub(crate) fn expand_jobs<P: AsRef<Path>>(args: &[P]) -> Result<Vec<PathBuf>, ExpandError> {
    let mut found = Vec::new();
    for arg in args {
        found.extend(expand_one(arg.as_ref())?);
    }
    found.sort();
    let mut seen = BTreeSet::new();
    found.retain(|path| seen.insert(identity(path)));
    Ok(found)
}

fn expand_one(arg: &Path) -> Result<Vec<PathBuf>, ExpandError> {
    if arg.is_dir() {
        return toml_files_in(arg);
    }
    if arg.exists() {
        return Ok(vec![arg.to_path_buf()]);
    }
    let text = arg.to_string_lossy();
    if !text.contains(['*', '?', '[']) {
        let with_toml = PathBuf::from(format!("{text}.toml"));
        return Err(ExpandError::NotFound {
            path: arg.to_path_buf(),
            hint: with_toml.is_file().then(|| with_toml.display().to_string()),
        });
    }
    let files = glob_files(&text)?;
    if files.is_empty() {
        return Err(ExpandError::NoMatch {
            pattern: text.to_string(),
        });
    }
    Ok(files)
}

/// The files matching glob `pattern` (`*` and `?` within one name, `**`
/// across directories, `[...]` a class), walked from its literal leading
/// directories. Entries that cannot be read while matching are skipped:
/// the files we could not see would fail to load anyway, with a better
/// message.
fn glob_files(pattern: &str) -> Result<Vec<PathBuf>, ExpandError> {
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ExpandError::BadPattern {
            pattern: pattern.to_string(),
            message: e.kind().to_string(),
        })?
        .compile_matcher();
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components
        .iter()
        .take_while(|c| !c.contains(['*', '?', '[', '{']))
        .count()
        .min(components.len().saturating_sub(1));
    let base = match components[..literal].join("/") {
        root if root.is_empty() && pattern.starts_with('/') => "/".to_string(),
        root => root,
    };
    // Without `**` a match lies exactly as deep as the pattern's names.
    let depth = if pattern.contains("**") {
        MAX_GLOB_DEPTH
    } else {
        components.len() - literal
    };
    let mut files = Vec::new();
    walk(Path::new(&base), depth, &mut |path| {
        if matcher.is_match(path) && path.is_file() {
            files.push(path.to_path_buf());
        }
    });
    Ok(files)
}

/// How deep `**` walks.
const MAX_GLOB_DEPTH: usize = 32;

/// Calls `found` with every entry below `dir` (as `dir` joined with its
/// names; `dir` empty meaning the current directory), `depth` levels deep.
fn walk(dir: &Path, depth: usize, found: &mut dyn FnMut(&Path)) {
    if depth == 0 {
        return;
    }
    let listed = if dir.as_os_str().is_empty() {
        std::fs::read_dir(".")
    } else {
        std::fs::read_dir(dir)
    };
    let Ok(entries) = listed else { return };
    for entry in entries.flatten() {
        let path = dir.join(entry.file_name());
        found(&path);
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&path, depth - 1, found);
        }
    }
}

fn toml_files_in(dir: &Path) -> Result<Vec<PathBuf>, ExpandError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ExpandError::ListDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ExpandError::ListDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "toml") && path.is_file() {
            files.push(path);
        }
    }
    if files.is_empty() {
        // A directory of job folders, as `import` writes them.
        let folders = std::fs::read_dir(dir).map_err(|source| ExpandError::ListDir {
            path: dir.to_path_buf(),
            source,
        })?;
        files.extend(
            folders
                .flatten()
                .map(|entry| entry.path().join("job.toml"))
                .filter(|path| path.is_file()),
        );
    }
    if files.is_empty() {
        return Err(ExpandError::EmptyDir {
            path: dir.to_path_buf(),
        });
    }
    Ok(files)
}

fn identity(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| {
        super::fields::normalize(&std::path::absolute(path).unwrap_or_default())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn expands_files_dirs_and_globs_sorted_without_duplicates() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        touch(&root.join("jobs/b.toml"));
        touch(&root.join("jobs/a.toml"));
        touch(&root.join("jobs/notes.md"));
        touch(&root.join("jobs/nested/c.toml"));
        let args = vec![
            root.join("jobs"),
            root.join("jobs/a.toml"),
            root.join("jobs/**/*.toml"),
        ];
        let found = expand_jobs(&args).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["jobs/a.toml", "jobs/b.toml", "jobs/nested/c.toml"]);
    }

    #[test]
    fn a_directory_of_job_folders_is_every_job_toml_one_level_down() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        touch(&root.join("track/rust-bob/job.toml"));
        touch(&root.join("track/rust-anagram/job.toml"));
        touch(&root.join("track/rust-anagram/source/Cargo.toml"));
        touch(&root.join("track/README.md"));
        std::fs::create_dir_all(root.join("track/empty")).unwrap();
        let found = expand_jobs(&[root.join("track")]).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["track/rust-anagram/job.toml", "track/rust-bob/job.toml"]
        );
        // Manifests directly inside come first: the folders are not read.
        touch(&root.join("track/extra.toml"));
        let found = expand_jobs(&[root.join("track")]).unwrap();
        assert_eq!(found, [root.join("track/extra.toml")]);
    }

    #[test]
    fn names_what_matched_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let missing = root.join("nope.toml");
        assert!(matches!(
            expand_jobs(&[&missing]),
            Err(ExpandError::NotFound { .. })
        ));
        let err = expand_jobs(&[root.join("*.toml")]).unwrap_err();
        assert!(err.to_string().ends_with("glob matched no files"), "{err}");
        std::fs::create_dir(root.join("empty")).unwrap();
        let err = expand_jobs(&[root.join("empty")]).unwrap_err();
        assert!(matches!(err, ExpandError::EmptyDir { .. }));
        let err = expand_jobs(&[root.join("[")]).unwrap_err();
        assert!(matches!(err, ExpandError::BadPattern { .. }), "{err}");
    }
}
