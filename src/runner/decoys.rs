//! The decoys of a check's copy. Before the baseline and every acceptance
//! run, each hidden test file is rewritten for that run alone: its tests
//! renamed and twinned, and a canary planted (the language table writes
//! them; names, places, values and tokens are drawn afresh each run).
//! After the run the decoys are taken out of its results and listing and
//! every test gets its own name back, so no drawn name reaches an
//! inventory, a verdict, a report or an export; what the run said of each
//! decoy is judged apart ([`crate::integrity`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use super::canaries::Planted;
use super::checks::{CheckError, CheckLog, CheckRun};
use crate::beneath::Dir;
use crate::integrity::{TwinCase, TwinResult};
use crate::lang::{Language, Twin};

/// Largest hidden test file a decoy is planted in.
const MAX_TEST_FILE: u64 = 4 << 20;

/// Which twins a run plants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TwinRequest {
    /// The baseline: one twin of every test, to see which behave.
    Calibrate,
    /// Acceptance: so many twins of each of these tests (inventory names
    /// of their functions).
    Tests(BTreeMap<String, u32>),
}

impl TwinRequest {
    fn wanted(&self, name: &str) -> u32 {
        match self {
            TwinRequest::Calibrate => 1,
            TwinRequest::Tests(tests) => tests.get(name).copied().unwrap_or(0),
        }
    }
}

/// The decoys planted in one copy.
#[derive(Debug, Clone, Default)]
pub(super) struct Decoys {
    pub(super) canaries: Planted,
    /// Whether the run was asked to plant twins.
    pub(super) twins_asked: bool,
    /// Each twin and the file it is in.
    pub(super) twins: Vec<(Twin, String)>,
    /// Tests asked for twins that got none, with why.
    pub(super) refused: Vec<(String, String)>,
    /// Run name → real name, and back, of every renamed test function.
    back: BTreeMap<String, String>,
    forward: BTreeMap<String, String>,
}

impl Decoys {
    /// The run names of the decoys a per-test run adds to the inventory's
    /// tests: canaries and twins.
    pub(super) fn extra(&self) -> Vec<String> {
        let mut names = self.canaries.names();
        names.extend(self.twins.iter().map(|(twin, _)| twin.name.clone()));
        names
    }

    /// The name the inventory test `real` runs under in this run.
    pub(super) fn run_name(&self, lang: &dyn Language, real: &str) -> String {
        map(&self.forward, lang, real)
    }

    /// The real name of the test that ran as `name`.
    pub(super) fn real_name(&self, lang: &dyn Language, name: &str) -> String {
        map(&self.back, lang, name)
    }

    /// Text with every drawn name of a renamed test put back, and each
    /// twin's name shown as what it is.
    fn unnamed(&self, text: &str) -> String {
        if self.back.is_empty() && self.twins.is_empty() {
            return text.to_string();
        }
        let mut pairs: Vec<(String, String)> = self
            .back
            .iter()
            .map(|(run, real)| (short(run).to_string(), short(real).to_string()))
            .collect();
        pairs.extend(self.twins.iter().map(|(twin, _)| {
            (
                short(&twin.name).to_string(),
                format!("{} (twin)", short(&twin.of)),
            )
        }));
        // Longest first: no drawn name is part of another, but be sure.
        pairs.sort_by_key(|(run, _)| std::cmp::Reverse(run.len()));
        let mut out = text.to_string();
        for (run, real) in pairs {
            if out.contains(&run) {
                out = out.replace(&run, &real);
            }
        }
        out
    }
}

/// `name` with its function mapped through `names`, its case kept.
fn map(names: &BTreeMap<String, String>, lang: &dyn Language, name: &str) -> String {
    let function = lang.function_of(name);
    match names.get(function) {
        Some(mapped) => format!("{mapped}{}", &name[function.len()..]),
        None => name.to_string(),
    }
}

/// The last part of an inventory name: what a harness prints of it.
fn short(name: &str) -> &str {
    let last = name.rsplit("::").next().unwrap_or(name);
    last.rsplit(" › ").next().unwrap_or(last)
}

/// Rewrites the hidden test files of the copy at `dir` (read from
/// `hidden`): twins as `twins` asks in every test file the language
/// knows, and a canary in each of `canary_files` (none where the
/// acceptance `command` cannot run them).
pub(super) fn plant(
    hidden: &Path,
    dir: &Path,
    lang: &dyn Language,
    command: &[String],
    canary_files: Option<&[String]>,
    twins: Option<&TwinRequest>,
    report: &mut CheckLog,
) -> Result<Decoys, CheckError> {
    let mut decoys = Decoys {
        twins_asked: twins.is_some(),
        ..Decoys::default()
    };
    let mut canary_files: Option<BTreeSet<&String>> = canary_files.map(|f| f.iter().collect());
    if let Some(files) = &canary_files {
        decoys.canaries.asked = true;
        if let Some(why) = lang.canaries_unfit(command) {
            report
                .text
                .push_str(&format!("canaries: none planted: {why}\n"));
            decoys.canaries.unplanted.push(why);
            canary_files = None;
        } else if files.is_empty() {
            canary_files = None;
        }
    }
    let files: Vec<String> = super::fallback::hidden_test_files(hidden, lang);
    let copy = Dir::open(dir).map_err(|source| CheckError::Prepare {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut rng = fastrand::Rng::new();
    let also = command.join(" ");
    let mut canary_count = 0usize;
    for rel in &files {
        let wants_canary = canary_files.as_ref().is_some_and(|f| f.contains(rel));
        if twins.is_none() && !wants_canary {
            continue;
        }
        let Some(original) = read_hidden(&hidden.join(rel)) else {
            if wants_canary {
                decoys
                    .canaries
                    .unplanted
                    .push(format!("{rel}: no test of it could be found"));
            }
            continue;
        };
        let mut text = original.clone();
        if let Some(request) = twins
            && let Some(twinned) =
                lang.plant_twins(rel, &text, &|name| request.wanted(name), &also, &mut rng)
        {
            text = twinned.text;
            for (run, real) in twinned.renamed {
                decoys.forward.insert(real.clone(), run.clone());
                decoys.back.insert(run, real);
            }
            decoys
                .twins
                .extend(twinned.twins.into_iter().map(|t| (t, rel.clone())));
            decoys.refused.extend(twinned.refused);
        }
        if wants_canary {
            match lang.plant_canary(rel, &text, &mut rng) {
                Some(canary) => {
                    text = canary.text;
                    decoys.canaries.canaries.push((canary.name, rel.clone()));
                    canary_count += 1;
                }
                None => decoys
                    .canaries
                    .unplanted
                    .push(format!("{rel}: no test of it could be found")),
            }
        }
        if text != original {
            copy.write_file(Path::new(rel), text.as_bytes(), 0o644)
                .map_err(|e| CheckError::Prepare {
                    path: dir.join(rel),
                    source: std::io::Error::other(e.to_string()),
                })?;
        }
    }
    if let Some(files) = &canary_files {
        report.text.push_str(&format!(
            "canaries: {canary_count} planted in {}\n",
            crate::words::count(files.len(), "hidden test file")
        ));
    }
    if twins.is_some() {
        report.text.push_str(&format!(
            "twins: {} planted, {} renamed\n",
            decoys.twins.len(),
            crate::words::count(decoys.back.len(), "test")
        ));
    }
    Ok(decoys)
}

fn read_hidden(path: &Path) -> Option<String> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_TEST_FILE => fs::read_to_string(path).ok(),
        _ => None,
    }
}

/// Takes the decoys out of the run's results and listing and gives every
/// renamed test its own name back, in its results, outputs, listing,
/// notes and log; what the run said of each canary and twin goes to
/// `run.canaries` and `run.twins`.
pub(super) fn take(run: &mut CheckRun, lang: &dyn Language, decoys: &Decoys, log: &mut CheckLog) {
    if decoys.canaries.asked {
        run.canaries_asked = true;
        run.canaries = super::canaries::take(run, lang, &decoys.canaries);
        run.unplanted.clone_from(&decoys.canaries.unplanted);
    }
    if decoys.twins_asked {
        run.twins_asked = true;
        run.twins = take_twins(run, lang, decoys);
        run.refused.clone_from(&decoys.refused);
    }
    let real = |name: String| decoys.real_name(lang, &name);
    if let Some(listed) = run.listed.as_mut() {
        let twins: BTreeSet<&str> = decoys.twins.iter().map(|(t, _)| t.name.as_str()).collect();
        listed.retain(|name| !twins.contains(lang.function_of(name)));
        *listed = std::mem::take(listed).into_iter().map(real).collect();
    }
    if let Some(results) = run.results.as_mut() {
        results.tests = std::mem::take(&mut results.tests)
            .into_iter()
            .map(|(name, outcome)| (real(name), outcome))
            .collect();
        results.timed_out = std::mem::take(&mut results.timed_out)
            .into_iter()
            .map(real)
            .collect();
        results.outputs = std::mem::take(&mut results.outputs)
            .into_iter()
            .map(|(name, text)| (real(name), decoys.unnamed(&text)))
            .collect();
    }
    for text in run
        .anomalies
        .iter_mut()
        .chain(run.note.as_mut())
        .chain(run.harness.as_mut())
        .chain(run.uncollectable.as_mut())
    {
        *text = decoys.unnamed(text);
    }
    log.text = decoys.unnamed(&log.text);
}

/// Each twin's cases, taken out of the run's results.
fn take_twins(run: &mut CheckRun, lang: &dyn Language, decoys: &Decoys) -> Vec<TwinResult> {
    let mut out = Vec::new();
    for (twin, file) in &decoys.twins {
        let mut cases = Vec::new();
        let mut unstarted = false;
        if let Some(results) = run.results.as_mut() {
            let names: Vec<String> = results
                .tests
                .keys()
                .filter(|name| lang.function_of(name) == twin.name)
                .cloned()
                .collect();
            for name in names {
                let outcome = results.tests.remove(&name);
                results.timed_out.remove(&name);
                let output = results.outputs.remove(&name).unwrap_or_default();
                if run.unstarted.contains(&name) {
                    // It never ran: a test before it broke the tree.
                    unstarted = true;
                    continue;
                }
                cases.push(TwinCase {
                    suffix: name[twin.name.len()..].to_string(),
                    outcome,
                    token: output.contains(&twin.token),
                    again: None,
                });
            }
        }
        if cases.is_empty() && unstarted {
            continue;
        }
        if cases.is_empty() {
            cases.push(TwinCase {
                suffix: String::new(),
                outcome: None,
                token: false,
                again: None,
            });
        }
        let file_reported = run.results.as_ref().is_some_and(|r| {
            r.tests
                .keys()
                .any(|test| lang.test_of_file(file, test) && !is_decoy(decoys, lang, test))
        });
        out.push(TwinResult {
            of: twin.of.clone(),
            file: file.clone(),
            cases,
            file_reported,
        });
    }
    out
}

fn is_decoy(decoys: &Decoys, lang: &dyn Language, name: &str) -> bool {
    let function = lang.function_of(name);
    decoys.twins.iter().any(|(t, _)| t.name == function)
}

/// The run names of the twin cases `candidates` (by index of twin and
/// case in `run.twins`), to run again alone.
pub(super) fn candidate_names(
    run: &CheckRun,
    decoys: &Decoys,
    candidates: &[(usize, usize)],
) -> Vec<String> {
    candidates
        .iter()
        .filter_map(|&(t, c)| {
            let (twin, _) = decoys.twins.get(t)?;
            let case = run.twins.get(t)?.cases.get(c)?;
            Some(format!("{}{}", twin.name, case.suffix))
        })
        .collect()
}

/// Records what the twin cases `candidates` reported when run again
/// alone (`again`: results of the new run, by run name).
pub(super) fn record_again(
    run: &mut CheckRun,
    decoys: &Decoys,
    candidates: &[(usize, usize)],
    again: &crate::verdict::TestResults,
) {
    for &(t, c) in candidates {
        let Some((twin, _)) = decoys.twins.get(t) else {
            continue;
        };
        let Some(case) = run.twins.get_mut(t).and_then(|r| r.cases.get_mut(c)) else {
            continue;
        };
        let name = format!("{}{}", twin.name, case.suffix);
        let outcome = again.tests.get(&name).copied();
        let token = again
            .outputs
            .get(&name)
            .is_some_and(|o| o.contains(&twin.token));
        case.again = Some((outcome, token));
    }
}
