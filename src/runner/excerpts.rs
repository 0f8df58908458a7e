//! The per-test output excerpts of an acceptance run, kept beside the
//! attempt's other artifacts (`DATA/runs/<job>/<n>/tests/excerpts.json`)
//! for reports and the viewer: what each failing or missing test printed of
//! its own. Never in the log, which keeps no command output.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::checks::CheckRun;
use crate::lang::Language;
use crate::verdict::{EXCERPTS_FILE, Verdict, excerpts_of};

/// Writes the excerpts of `verdict` from `run`'s per-test outputs, whole
/// or not at all (a temporary file renamed into place); the path written.
pub(super) fn save_excerpts(
    runs: &Path,
    run: &CheckRun,
    verdict: &Verdict,
    lang: Option<&dyn Language>,
) -> std::io::Result<PathBuf> {
    let function_of = |name: &str| match lang {
        Some(lang) => lang.function_of(name).to_string(),
        None => name.to_string(),
    };
    let outputs = run
        .results
        .as_ref()
        .map(|r| r.outputs.clone())
        .unwrap_or_default();
    let excerpts = excerpts_of(verdict, &outputs, &function_of);
    let path = runs.join(EXCERPTS_FILE);
    let text = serde_json::to_vec_pretty(&excerpts)
        .map_err(|e| std::io::Error::other(format!("failed to encode {}: {e}", path.display())))?;
    save_artifact(&path, &text)?;
    Ok(path)
}

/// Writes `bytes` as the attempt's artifact at `path`, whole or not at
/// all: a temporary file beside it, renamed into place; its directory
/// made first.
pub(super) fn save_artifact(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        std::io::Error::other(format!("failed to {what} {}: {e}", path.display()))
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| failed("create the directory of", &e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| failed("write", &e))?;
    tmp.write_all(bytes).map_err(|e| failed("write", &e))?;
    tmp.persist(path).map_err(|e| failed("write", &e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{TestOutcome, TestResults, read_excerpts};

    #[test]
    fn the_excerpts_of_a_run_are_written_whole_beside_its_artifacts() {
        let runs = tempfile::tempdir().unwrap();
        let mut results = TestResults::default();
        results
            .tests
            .insert("test/acceptance::m".into(), TestOutcome::Failed);
        results
            .outputs
            .insert("test/acceptance::m".into(), "  left: 0\n right: 1".into());
        let run = CheckRun {
            results: Some(results),
            ..CheckRun::default()
        };
        let verdict = Verdict {
            failing: vec!["test/acceptance::m".into()],
            missing: vec!["test/acceptance::gone".into()],
            ..Verdict::default()
        };
        let path = save_excerpts(runs.path(), &run, &verdict, None).unwrap();
        assert_eq!(path, runs.path().join("tests/excerpts.json"));
        let read = read_excerpts(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(read.tests.len(), 2);
        assert_eq!(
            read.tests[0].excerpt.as_deref(),
            Some("  left: 0\n right: 1")
        );
        assert_eq!(read.tests[1].status, "missing");
        assert_eq!(read.tests[1].excerpt, None);
        // Nothing else is left in the directory (no temporary file).
        let entries = std::fs::read_dir(runs.path().join("tests"))
            .unwrap()
            .count();
        assert_eq!(entries, 1);
    }
}
