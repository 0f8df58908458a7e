//! Canaries in a check's copy: before the baseline and every acceptance
//! run, each hidden test file the run is for gets one test that must fail,
//! under a name, at a place and with values drawn for this run (the
//! language table writes it; `decoys.rs` plants it with the twins). After
//! the run the canaries are taken out of its results and listing, so they
//! are never tests of an inventory, a verdict or a report; what the run
//! said of each is judged apart ([`crate::integrity`]).

use std::collections::BTreeSet;

use super::checks::CheckRun;
use crate::integrity::CanaryResult;
use crate::lang::Language;

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
