//! The one I/O edge of reports: renders every file and puts each in place
//! atomically, so a reader never sees a half-written report.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::ReportError;
use super::html::write_html_linked;
use super::json::write_json;
use super::junit::render_junit;
use super::markdown::render_markdown;
use super::model::Report;
use super::tsv::render_tsv;

/// File names written by [`write_reports`], in the order returned.
pub const REPORT_FILES: [&str; 5] = [
    "report.md",
    "results.tsv",
    "results.json",
    "junit.xml",
    "report.html",
];

/// Writes `report.md`, `results.tsv`, `results.json`, `junit.xml` and
/// `report.html` into `dir` (created if missing). Each file is written to a
/// temporary file in `dir`, synced, then renamed over the old one.
pub fn write_reports(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let links = links_to_sources(report, dir);
    type Render<'a> = &'a dyn Fn(&mut dyn Write) -> std::io::Result<()>;
    let renderers: [Render<'_>; 5] = [
        &|w| w.write_all(render_markdown(report).as_bytes()),
        &|w| w.write_all(render_tsv(report).as_bytes()),
        // The biggest file of a sweep goes to disk as it is serialized.
        &|w| write_json(report, w),
        &|w| w.write_all(render_junit(report).as_bytes()),
        &|w| write_html_linked(report, &links, w),
    ];
    let mut written = Vec::with_capacity(REPORT_FILES.len());
    for (name, render) in REPORT_FILES.iter().zip(renderers) {
        let path = dir.join(name);
        replace_file_with(&path, dir, true, |w| render(w))?;
        written.push(path);
    }
    Ok(written)
}

/// The relative path from `dir` to the data dir of each of the report's
/// sources (the directory of its log), `/`-separated and ending with `/`
/// (`../` for `DATA/report/`); empty where it cannot be told.
fn links_to_sources(report: &Report, dir: &Path) -> Vec<String> {
    let resolved = |path: &Path| path.canonicalize().or_else(|_| std::path::absolute(path));
    let Ok(out) = resolved(dir) else {
        return Vec::new();
    };
    report
        .sources
        .iter()
        .map(|log| {
            let data = Path::new(log)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            resolved(data)
                .ok()
                .and_then(|data| pathdiff::diff_paths(data, &out))
                .map(|rel| {
                    let rel = rel.to_string_lossy().into_owned();
                    if rel.is_empty() {
                        rel
                    } else {
                        format!("{rel}/")
                    }
                })
                .unwrap_or_default()
        })
        .collect()
}

/// Writes `bytes` to `path` (in the existing directory `dir`) atomically:
/// a temporary file in `dir`, synced, renamed over the old one, readable by
/// others as the umask allows.
pub fn write_atomic(path: &Path, dir: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    replace_file(path, dir, bytes, true)
}

/// As [`write_atomic`] without the sync: a reader still never sees half a
/// file, but a crash may lose the new one. For files that are derived
/// again from the log by the next `report` (the exports, one per attempt),
/// where a sync each would cost more than the file.
pub fn write_replacing(path: &Path, dir: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    replace_file(path, dir, bytes, false)
}

fn replace_file(path: &Path, dir: &Path, bytes: &[u8], sync: bool) -> Result<(), ReportError> {
    replace_file_with(path, dir, sync, |w| w.write_all(bytes))
}

/// As [`write_atomic`], the content written by `write` as it is made, to
/// the temporary file through a buffer that can also seek (for formats
/// such as zip that go back to fill in what they wrote). An error of
/// `write` comes back as it is, and the old file stays.
pub fn write_atomic_with<E: From<ReportError>>(
    path: &Path,
    dir: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<&mut std::fs::File>) -> Result<(), E>,
) -> Result<(), E> {
    let mut failed = None;
    let done = replace_file_with(path, dir, true, |w| {
        write(w).map_err(|e| {
            failed = Some(e);
            std::io::Error::other("the content could not be made")
        })
    });
    match failed {
        Some(e) => Err(e),
        None => done.map_err(E::from),
    }
}

/// As [`replace_file`], the content written by `write` through a buffer.
fn replace_file_with(
    path: &Path,
    dir: &Path,
    sync: bool,
    write: impl FnOnce(&mut std::io::BufWriter<&mut std::fs::File>) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    use std::os::unix::fs::PermissionsExt;
    // Reports are for others to read (a CI publisher, a web server): the
    // usual 0666 less the umask, not a temporary file's 0600.
    let mode = 0o666 & !umask();
    let mut tmp = tempfile::Builder::new()
        .prefix(".report-")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(io("create a temporary file in", dir))?;
    // The umask applied at creation too; say the mode exactly.
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(io("set the mode of", tmp.path()))?;
    let tmp_path = tmp.path().to_path_buf();
    let mut buffered = std::io::BufWriter::new(tmp.as_file_mut());
    write(&mut buffered)
        .and_then(|()| buffered.flush())
        .map_err(io("write", &tmp_path))?;
    drop(buffered);
    if sync {
        tmp.as_file().sync_all().map_err(io("sync", tmp.path()))?;
    }
    tmp.persist(path)
        .map_err(|e| io("rename a temporary file to", path)(e.error))?;
    Ok(())
}

/// This process's umask, from `/proc/self/status` (022 if unreadable).
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ReportError {
    let path = path.to_path_buf();
    move |source| ReportError::Io {
        action,
        path,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;

    #[test]
    fn links_go_from_the_report_to_each_data_dir() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let other = root.path().join("shard 2");
        std::fs::create_dir_all(data.join("report")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let report = Report::new(
            0,
            vec![
                data.join("events.log").display().to_string(),
                other.join("events.log").display().to_string(),
            ],
        );
        assert_eq!(
            links_to_sources(&report, &data.join("report")),
            ["../", "../../shard 2/"]
        );
        assert_eq!(links_to_sources(&report, &data), ["", "../shard 2/"]);
    }

    #[test]
    fn report_files_are_readable_by_others_under_the_usual_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let written = write_reports(&sample(), dir.path()).unwrap();
        let expected = 0o666 & !umask();
        for file in written {
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, expected, "{}", file.display());
        }
    }

    #[test]
    fn writes_all_five_files_and_no_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("reports");
        let paths = write_reports(&sample(), &out).unwrap();
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, REPORT_FILES);
        let mut present: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        present.sort();
        let mut expected = REPORT_FILES.map(String::from).to_vec();
        expected.sort();
        assert_eq!(present, expected);
        let json = std::fs::read_to_string(out.join("results.json")).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn rewriting_replaces_the_files() {
        let dir = tempfile::tempdir().unwrap();
        write_reports(&Report::new(0, vec![]), dir.path()).unwrap();
        write_reports(&sample(), dir.path()).unwrap();
        let tsv = std::fs::read_to_string(dir.path().join("results.tsv")).unwrap();
        assert_eq!(tsv.lines().count(), sample().jobs.len() + 1);
    }

    #[test]
    fn errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let err = write_reports(&sample(), &blocker.join("sub")).unwrap_err();
        assert!(err.to_string().contains("failed to create"), "{err}");
        assert!(
            err.to_string().contains(&blocker.display().to_string()),
            "{err}"
        );
    }

    /// Writes the sample reports to `$REPORT_SAMPLE_DIR` to look at them.
    #[test]
    #[ignore = "writes outside a temporary directory; run by hand"]
    fn write_sample_reports() {
        let dir = std::env::var_os("REPORT_SAMPLE_DIR").unwrap();
        write_reports(&sample(), Path::new(&dir)).unwrap();
    }
}
