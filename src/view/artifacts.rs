//! An attempt's artifacts, read beneath the data dir's `runs/` and nowhere
//! else (never a workspace): through `beneath/`, so no symlink is followed,
//! no `..` or absolute path resolves, a FIFO never blocks, and reads are
//! capped before anything is allocated.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};
use serde::Serialize;

use crate::beneath::{self, Dir, Kind};
use crate::lifecycle::DataDir;

/// Bytes of an artifact served whole at most.
pub(super) const SERVE_CAP: u64 = 32 << 20;
/// Bytes of `patch.diff` shown on a job's page (the link serves it whole).
pub(super) const PATCH_CAP: u64 = 512 << 10;
/// Entries of an attempt's `tests/` listed on a job's page.
pub(super) const TESTS_LISTED: usize = 500;

/// Characters a URL path segment keeps as they are.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'@')
    .remove(b'~');

/// The `runs/` directory of one data dir.
#[derive(Debug, Clone)]
pub(super) struct Artifacts {
    runs: PathBuf,
}

/// One file of an attempt, as a job's page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(super) struct Listed {
    /// Its path below the attempt's directory (`patch.diff`, `tests/excerpts.json`).
    pub name: String,
    /// Where the viewer serves it.
    pub href: String,
    pub bytes: Option<u64>,
}

/// The first bytes of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(super) struct Excerpt {
    pub text: String,
    pub bytes: u64,
    /// Whether the file holds more than `text`.
    pub cut: bool,
}

impl Artifacts {
    pub(super) fn new(data: &DataDir) -> Artifacts {
        Artifacts {
            runs: data.root().join("runs"),
        }
    }

    /// The handle on `runs/` (the data dir is the user's: its own path may
    /// go through symlinks; nothing beneath it may).
    fn root(&self) -> Result<Dir, beneath::Error> {
        Dir::open(&self.runs).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => beneath::Error::NotFound,
            _ => beneath::Error::Io(e),
        })
    }

    /// The whole of regular file `rel` (relative to `runs/`), at most
    /// [`SERVE_CAP`] bytes.
    pub(super) fn read(&self, rel: &Path) -> Result<Vec<u8>, beneath::Error> {
        Ok(self.root()?.read_capped(rel, SERVE_CAP)?.0)
    }

    /// The first `cap` bytes of regular file `rel`, as text.
    pub(super) fn excerpt(&self, rel: &Path, cap: u64) -> Result<Excerpt, beneath::Error> {
        let (bytes, meta) = self.root()?.read_head(rel, cap)?;
        Ok(Excerpt {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            bytes: meta.size,
            cut: meta.size > bytes.len() as u64,
        })
    }

    /// The first `cap` bytes of `<job>/<n>/<file>` as text, for the report
    /// model, and whether the file holds more; `None` when it is missing
    /// or refused.
    pub(super) fn head(
        &self,
        job: &str,
        attempt: u32,
        file: &str,
        cap: u64,
    ) -> Option<(String, bool)> {
        let rel = attempt_dir(job, attempt).join(file);
        let e = self.excerpt(&rel, cap).ok()?;
        Some((e.text, e.cut))
    }

    /// The files of attempt `n` of `job` and of its `tests/`, in name
    /// order, each with the link that serves it; `run` is the data dir's
    /// index in the viewer.
    pub(super) fn listing(&self, run: usize, job: &str, attempt: u32) -> Vec<Listed> {
        let rel = attempt_dir(job, attempt);
        let Ok(dir) = self.root().and_then(|root| root.open_dir(&rel)) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in dir.entries().unwrap_or_default() {
            match entry.kind {
                Kind::File => {
                    let bytes = dir
                        .open_file(Path::new(&entry.name))
                        .ok()
                        .map(|(_, m)| m.size);
                    out.push(listed(run, &rel, Path::new(&entry.name), bytes));
                }
                Kind::Dir if entry.name == "tests" => {
                    for test in self.test_files(job, attempt).into_iter().take(TESTS_LISTED) {
                        let name = Path::new("tests").join(&test);
                        out.push(listed(run, &rel, &name, None));
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The regular files directly in attempt `n`'s `tests/`, in name order.
    pub(super) fn test_files(&self, job: &str, attempt: u32) -> Vec<std::ffi::OsString> {
        let rel = attempt_dir(job, attempt).join("tests");
        let Ok(dir) = self.root().and_then(|root| root.open_dir(&rel)) else {
            return Vec::new();
        };
        dir.entries()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.kind == Kind::File)
            .map(|e| e.name)
            .collect()
    }
}

/// `<job>/<n>` below `runs/`.
pub(super) fn attempt_dir(job: &str, attempt: u32) -> PathBuf {
    Path::new(job).join(attempt.to_string())
}

fn listed(run: usize, attempt_dir: &Path, name: &Path, bytes: Option<u64>) -> Listed {
    Listed {
        name: String::from_utf8_lossy(name.as_os_str().as_bytes()).into_owned(),
        href: href(run, &attempt_dir.join(name)),
        bytes,
    }
}

/// The viewer's link to `rel` below data dir `run`'s `runs/`: each name
/// percent-encoded from its bytes.
pub(super) fn href(run: usize, rel: &Path) -> String {
    let mut out = format!("/runs/{run}");
    for component in rel.iter() {
        out.push('/');
        out.extend(percent_encoding::percent_encode(
            component.as_bytes(),
            SEGMENT,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> (tempfile::TempDir, Artifacts) {
        let tmp = tempfile::tempdir().unwrap();
        let attempt = tmp.path().join("runs/job/1");
        std::fs::create_dir_all(attempt.join("tests")).unwrap();
        std::fs::write(attempt.join("patch.diff"), "diff --git a/x b/x\n").unwrap();
        std::fs::write(attempt.join("tests/t__adds.txt"), "left: 1\nright: 2\n").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "outside runs/").unwrap();
        let artifacts = Artifacts::new(&DataDir::new(tmp.path()));
        (tmp, artifacts)
    }

    #[test]
    fn files_beneath_runs_are_read_and_listed_with_links() {
        let (_tmp, a) = data();
        assert_eq!(
            a.read(Path::new("job/1/patch.diff")).unwrap(),
            b"diff --git a/x b/x\n"
        );
        let listing = a.listing(3, "job", 1);
        let names: Vec<&str> = listing.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["patch.diff", "tests/t__adds.txt"]);
        assert_eq!(listing[0].href, "/runs/3/job/1/patch.diff");
        assert_eq!(listing[0].bytes, Some(19));
        let e = a.excerpt(Path::new("job/1/tests/t__adds.txt"), 4).unwrap();
        assert_eq!((e.text.as_str(), e.bytes, e.cut), ("left", 17, true));
        let whole = a.head("job", 1, "patch.diff", 100).unwrap();
        assert_eq!(whole, ("diff --git a/x b/x\n".to_string(), false));
        let cut = a.head("job", 1, "patch.diff", 4).unwrap();
        assert_eq!(cut, ("diff".to_string(), true));
        assert_eq!(a.head("job", 1, "none", 4), None);
    }

    #[test]
    fn nothing_outside_runs_or_through_a_symlink_is_read() {
        let (tmp, a) = data();
        assert!(matches!(
            a.read(Path::new("../secret.txt")),
            Err(beneath::Error::BadPath)
        ));
        assert!(a.read(Path::new("/etc/passwd")).is_err());
        std::os::unix::fs::symlink(
            tmp.path().join("secret.txt"),
            tmp.path().join("runs/job/1/link"),
        )
        .unwrap();
        std::os::unix::fs::symlink(tmp.path(), tmp.path().join("runs/up")).unwrap();
        assert!(matches!(
            a.read(Path::new("job/1/link")),
            Err(beneath::Error::Symlink)
        ));
        assert!(a.read(Path::new("up/secret.txt")).is_err());
        assert!(
            a.listing(0, "job", 1).iter().all(|l| l.name != "link"),
            "symlinks are not listed"
        );
    }

    #[test]
    fn a_missing_runs_dir_is_not_found() {
        let tmp = tempfile::tempdir().unwrap();
        let a = Artifacts::new(&DataDir::new(tmp.path()));
        assert!(matches!(
            a.read(Path::new("x")),
            Err(beneath::Error::NotFound)
        ));
        assert!(a.listing(0, "job", 1).is_empty());
    }

    #[test]
    fn links_encode_every_name() {
        assert_eq!(
            href(0, Path::new("a job/1/tests/<x>.txt")),
            "/runs/0/a%20job/1/tests/%3Cx%3E.txt"
        );
    }
}
