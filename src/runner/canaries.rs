//! Canaries in a check's copy: before the baseline and every acceptance
//! run, each hidden test file the run is for gets one test that must fail,
//! under a name, at a place and with values drawn for this run (the
//! language table writes it). After the run the canaries are taken out of
//! its results and listing, so they are never tests of an inventory, a
//! verdict or a report; what the run said of each is judged apart
//! ([`crate::integrity`]).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::checks::{CheckError, CheckLog, CheckRun};
use crate::beneath::Dir;
use crate::integrity::CanaryResult;
use crate::lang::Language;

/// Largest hidden test file a canary is planted in.
const MAX_TEST_FILE: u64 = 4 << 20;

/// The canaries planted in one copy.
#[derive(Debug, Clone, Default)]
pub(super) struct Planted {
    /// Whether the run was asked to plant any (the job uses canaries).
    pub(super) asked: bool,
    /// Inventory name and file of each canary.
    pub(super) canaries: Vec<(String, String)>,
    /// Files that could take none, and why.
    pub(super) unplanted: Vec<String>,
}

impl Planted {
    /// The canaries' inventory names.
    pub(super) fn names(&self) -> Vec<String> {
        self.canaries.iter().map(|(name, _)| name.clone()).collect()
    }
}

/// Plants a canary in each of `files` (hidden test files, relative to the
/// acceptance dir) in the copy at `dir`, reading them from `hidden`; none
/// where the acceptance `command` cannot run them.
pub(super) fn plant(
    hidden: &Path,
    dir: &Path,
    lang: &dyn Language,
    command: &[String],
    files: &[String],
    report: &mut CheckLog,
) -> Result<Planted, CheckError> {
    let mut planted = Planted {
        asked: true,
        ..Planted::default()
    };
    if let Some(why) = lang.canaries_unfit(command) {
        report
            .text
            .push_str(&format!("canaries: none planted: {why}\n"));
        planted.unplanted.push(why);
        return Ok(planted);
    }
    let copy = Dir::open(dir).map_err(|source| CheckError::Prepare {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut rng = fastrand::Rng::new();
    for rel in files {
        let path = hidden.join(rel);
        let text = match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() && meta.len() <= MAX_TEST_FILE => {
                fs::read_to_string(&path).ok()
            }
            _ => None,
        };
        let Some(canary) = text.and_then(|text| lang.plant_canary(rel, &text, &mut rng)) else {
            planted
                .unplanted
                .push(format!("{rel}: no test of it could be found"));
            continue;
        };
        copy.write_file(Path::new(rel), canary.text.as_bytes(), 0o644)
            .map_err(|e| CheckError::Prepare {
                path: dir.join(rel),
                source: std::io::Error::other(e.to_string()),
            })?;
        planted.canaries.push((canary.name, rel.clone()));
    }
    report.text.push_str(&format!(
        "canaries: {} planted in {}\n",
        planted.canaries.len(),
        crate::words::count(files.len(), "hidden test file")
    ));
    Ok(planted)
}

/// Takes the canaries out of the run's results and listing; what the run
/// said of each.
pub(super) fn take(
    run: &mut CheckRun,
    lang: &dyn Language,
    planted: &Planted,
) -> Vec<CanaryResult> {
    let names: BTreeSet<&String> = planted.canaries.iter().map(|(name, _)| name).collect();
    if let Some(listed) = run.listed.as_mut() {
        listed.retain(|name| !names.contains(name));
    }
    let mut results = Vec::new();
    for (name, file) in &planted.canaries {
        let outcome = run.results.as_mut().and_then(|r| {
            r.timed_out.remove(name);
            r.tests.remove(name)
        });
        let file_reported = run
            .results
            .as_ref()
            .is_some_and(|r| r.tests.keys().any(|test| lang.test_of_file(file, test)));
        results.push(CanaryResult {
            name: name.clone(),
            file: file.clone(),
            outcome,
            file_reported,
        });
    }
    results
}
