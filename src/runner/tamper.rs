//! The attempt's integrity as the runner gathers and settles it: the
//! patch's signals read from the runner's copy and the pristine source,
//! which hidden test files a check plants canaries in, and the verdict
//! once the record is known (forged results are `tampered`; under strict
//! integrity, so is any signal).

use std::collections::BTreeSet;
use std::path::Path;

use super::carried::{Carried, Carry};
use super::decoys::TwinRequest;
use super::fallback::{hidden_files, hidden_test_files};
use super::patch::FILE_CAP;
use crate::beneath::Dir;
use crate::integrity::{PatchFile, WorkspaceGuard, patch_signals};
use crate::lang::Language;
use crate::manifest::{Acceptance, Manifest};
use crate::protocol::{CommandFor, FailureKind, Integrity, Outcome, Signal};
use crate::state::Job;

/// The signals of the patch whose copy (`files.json` hashing to
/// `files_hash`) lies in `runs`. A file that cannot be read is left out:
/// the copy was checked when it was written, and acceptance checks again.
pub(super) fn patch_integrity(manifest: &Manifest, runs: &Path, files_hash: &str) -> Vec<Signal> {
    let Ok(Carried::Copy { files, entries }) = Carried::load(runs, Some(files_hash)) else {
        return Vec::new();
    };
    let (Ok(copy), Ok(source)) = (Dir::open(&files), Dir::open(&manifest.source)) else {
        return Vec::new();
    };
    let read = |dir: &Dir, rel: &str| {
        dir.read_capped(Path::new(rel), FILE_CAP)
            .ok()
            .map(|(bytes, _)| bytes)
    };
    // Each path with its old (source) and new (copy) bytes.
    type Contents = (String, Option<Vec<u8>>, Option<Vec<u8>>);
    let contents: Vec<Contents> = entries
        .iter()
        .map(|entry| {
            let new = match &entry.change {
                Carry::Write { .. } => read(&copy, &entry.path),
                Carry::Link { target } => Some(target.as_bytes().to_vec()),
                Carry::Delete => None,
            };
            (entry.path.clone(), read(&source, &entry.path), new)
        })
        .collect();
    let patch: Vec<PatchFile<'_>> = contents
        .iter()
        .map(|(rel, old, new)| PatchFile {
            rel,
            old: old.as_deref(),
            new: new.as_deref(),
        })
        .collect();
    let hidden: BTreeSet<String> = manifest
        .acceptance
        .as_ref()
        .map(|a| hidden_files(&a.dir).into_iter().collect())
        .unwrap_or_default();
    patch_signals(&patch, &hidden, &manifest.editable)
}

/// The hidden test files the `check` run of `job` plants canaries in:
/// at the baseline every one; at acceptance, when the baseline turned
/// canaries on, those whose tests the inventory holds. `None`: no
/// canaries (`canary = false`, or a harness the table does not know).
pub(super) fn canary_files(
    acceptance: &Acceptance,
    lang: Option<&dyn Language>,
    check: CommandFor,
    job: &Job,
) -> Option<Vec<String>> {
    let lang = lang.filter(|_| acceptance.canary)?;
    let files = hidden_test_files(&acceptance.dir, lang);
    match check {
        CommandFor::Baseline => Some(files),
        _ => {
            let baseline = job.baseline.as_ref()?;
            baseline.canary.as_ref().filter(|c| c.on)?;
            let inventory = baseline.inventory.as_ref()?;
            Some(
                files
                    .into_iter()
                    .filter(|file| inventory.names().any(|name| lang.test_of_file(file, name)))
                    .collect(),
            )
        }
    }
}

/// Twins of each fail-to-pass test at acceptance.
const TWINS_PER_FAILING: u32 = 2;
/// Pass-to-pass tests of a file that get a twin at acceptance.
const PASSING_WITH_TWINS: usize = 5;

/// The twins the `check` run of `job` plants: at the baseline one of
/// every test, to see which behave; at acceptance, when the baseline
/// turned them on, [`TWINS_PER_FAILING`] of each fail-to-pass test and
/// one of up to [`PASSING_WITH_TWINS`] pass-to-pass tests per hidden file,
/// drawn afresh, leaving out the tests the baseline excluded. `None`: no
/// twins (`twins = false`, or a harness the table does not know).
pub(super) fn twin_request(
    acceptance: &Acceptance,
    lang: Option<&dyn Language>,
    check: CommandFor,
    job: &Job,
) -> Option<TwinRequest> {
    let lang = lang.filter(|_| acceptance.twins)?;
    if check == CommandFor::Baseline {
        return Some(TwinRequest::Calibrate);
    }
    let baseline = job.baseline.as_ref()?;
    let twins = baseline.twins.as_ref().filter(|t| t.on)?;
    let inventory = baseline.inventory.as_ref()?;
    let excluded: BTreeSet<&str> = twins.excluded.iter().map(String::as_str).collect();
    let function = |name: &String| lang.function_of(name).to_string();
    let mut wanted: std::collections::BTreeMap<String, u32> = inventory
        .fail_to_pass
        .iter()
        .map(function)
        .filter(|f| !excluded.contains(f.as_str()))
        .map(|f| (f, TWINS_PER_FAILING))
        .collect();
    let mut rng = fastrand::Rng::new();
    for file in hidden_test_files(&acceptance.dir, lang) {
        let mut passing: Vec<String> = inventory
            .pass_to_pass
            .iter()
            .filter(|name| lang.test_of_file(&file, name))
            .map(function)
            .filter(|f| !excluded.contains(f.as_str()) && !wanted.contains_key(f))
            .collect();
        passing.sort();
        passing.dedup();
        rng.shuffle(&mut passing);
        for f in passing.into_iter().take(PASSING_WITH_TWINS) {
            wanted.insert(f, 1);
        }
    }
    Some(TwinRequest::Tests(wanted))
}

/// The guard of an attempt's workspace: non-editable files commands change
/// are signals, and a verify-only job (verify is its only judge) gets them
/// back before each verify.
pub(super) fn workspace_guard(
    manifest: &Manifest,
    workspace: &Path,
) -> Result<WorkspaceGuard, crate::agent::WorkspaceError> {
    let editable = crate::agent::editable_set(&manifest.editable)?;
    Ok(WorkspaceGuard::new(
        &manifest.source,
        workspace,
        editable,
        manifest.acceptance.is_none(),
    ))
}

/// The verdict of the attempt `job` is running, and its integrity record:
/// what its phases recorded, settled by [`settle`] (strict when
/// `--strict-integrity` or `[acceptance] strict_integrity` says so).
pub(super) fn settle_attempt(
    job: Option<&Job>,
    manifest: &Manifest,
    strict: bool,
    verdict: (Outcome, Option<FailureKind>),
) -> (Outcome, Option<FailureKind>, Integrity) {
    let integrity = job
        .and_then(Job::attempt)
        .map(|a| a.integrity.clone())
        .unwrap_or_default();
    let strict = strict
        || manifest
            .acceptance
            .as_ref()
            .is_some_and(|a| a.strict_integrity);
    let (outcome, kind) = settle(verdict, &integrity, strict);
    (outcome, kind, integrity)
}

/// The attempt's verdict with its integrity record: results a canary shows
/// forged are `tampered`; with `strict`, so is an attempt with any signal
/// that succeeded or was judged by acceptance (an attempt that failed
/// earlier keeps its kind, its record still holds the signals).
pub(super) fn settle(
    verdict: (Outcome, Option<FailureKind>),
    integrity: &Integrity,
    strict: bool,
) -> (Outcome, Option<FailureKind>) {
    let judged = matches!(
        verdict,
        (Outcome::Succeeded, _)
            | (
                _,
                Some(
                    FailureKind::TestsFailed
                        | FailureKind::TestsMissing
                        | FailureKind::AcceptanceFailed
                )
            )
    );
    let tampered = integrity.forged() || (strict && integrity.signal_count > 0 && judged);
    if tampered {
        (Outcome::Failed, Some(FailureKind::Tampered))
    } else {
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SignalKind;

    #[test]
    fn forged_results_are_tampered_and_strict_integrity_fails_judged_attempts() {
        let clean = Integrity::default();
        let ok = (Outcome::Succeeded, None);
        assert_eq!(settle(ok, &clean, true), ok);
        let forged = Integrity {
            forged: vec!["the canary x was reported passed".into()],
            ..Integrity::default()
        };
        let tampered = (Outcome::Failed, Some(FailureKind::Tampered));
        assert_eq!(settle(ok, &forged, false), tampered);
        let failed = (Outcome::Failed, Some(FailureKind::TestsFailed));
        assert_eq!(settle(failed, &forged, false), tampered);
        let mut signalled = Integrity::default();
        signalled.add([Signal::new(SignalKind::WorkspaceChanged, "t.rs", "changed")]);
        assert_eq!(settle(ok, &signalled, false), ok);
        assert_eq!(settle(ok, &signalled, true), tampered);
        assert_eq!(settle(failed, &signalled, true), tampered);
        let early = (Outcome::Failed, Some(FailureKind::VerifyFailed));
        assert_eq!(settle(early, &signalled, true), early);
    }
}
