//! The comparison page's JSON: two providers (over every data dir) or two
//! data dirs (runs) over the jobs they share, as a matrix of outcomes per
//! job with who won it, and the report's paired comparison of the two
//! (wins, losses, the exact sign test, the bootstrap interval). Pure.

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::Model;
use crate::report::{Comparison, JobResult, compare};
use crate::state::Tally;

/// What is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Kind {
    Provider,
    Run,
}

/// The comparison page.
#[derive(Debug, Serialize)]
pub(super) struct CompareView {
    pub version: u64,
    pub kind: Kind,
    /// What can be chosen: the providers of every data dir, and the data dirs.
    pub providers: Vec<String>,
    pub runs: Vec<String>,
    /// The two sides chosen (a provider's name, or a data dir's index).
    pub a: Option<String>,
    pub b: Option<String>,
    pub rows: Vec<MatrixRow>,
    pub comparison: Option<Comparison>,
    /// The comparison's verdict in words (`x better`, `no significant
    /// difference`).
    pub verdict: Option<String>,
}

/// One job under both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct MatrixRow {
    /// The job (with its provider when data dirs are compared).
    pub key: String,
    pub a: Cell,
    pub b: Cell,
    /// `a`, `b` or `tie` when both have finished runs of it.
    pub winner: Option<&'static str>,
}

/// One side's runs of one job.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(super) struct Cell {
    /// How its runs ended.
    #[serde(flatten)]
    pub tally: Tally,
    /// Runs that ended one way or another.
    pub finished: u32,
    /// Failure kinds of its failed runs, in order.
    pub failure_kinds: Vec<&'static str>,
    /// `(data dir index, instance)` of each run, for links.
    pub instances: Vec<(usize, String)>,
}

impl Cell {
    fn add(&mut self, run: usize, j: &JobResult) {
        self.tally.add(j.outcome);
        self.finished = self.tally.finished();
        if let Some(kind) = j.failure_kind {
            self.failure_kinds.push(kind.as_str());
        }
        self.instances.push((run, j.instance.clone()));
    }

    fn fraction(&self) -> Option<f64> {
        self.tally.pass_rate()
    }
}

/// The comparison of `a` and `b` by `kind`; a side not given is the first
/// (or second) one there is.
pub(super) fn compare_view(
    model: &Model,
    kind: Kind,
    a: Option<&str>,
    b: Option<&str>,
) -> CompareView {
    let all: Vec<(usize, &JobResult)> = model
        .runs
        .iter()
        .enumerate()
        .flat_map(|(i, run)| run.report.jobs.iter().map(move |j| (i, j)))
        .collect();
    // The arms of the sweeps: a provider, and an external agent with it
    // (`<provider>+<agent>`), compared like providers.
    let with_agents = model.runs.iter().any(|run| run.report.with_agents());
    let mut providers: Vec<String> = all.iter().filter_map(|(_, j)| j.arm(with_agents)).collect();
    providers.sort();
    providers.dedup();
    let runs: Vec<String> = model.runs.iter().map(|r| r.label.clone()).collect();
    let choices: Vec<String> = match kind {
        Kind::Provider => providers.clone(),
        Kind::Run => (0..runs.len()).map(|i| i.to_string()).collect(),
    };
    let pick = |given: Option<&str>, default: usize| {
        given
            .filter(|g| choices.iter().any(|c| c == g))
            .map(str::to_string)
            .or_else(|| choices.get(default).cloned())
    };
    let (a, b) = (pick(a, 0), pick(b, 1));
    let (rows, comparison) = match (&a, &b) {
        (Some(a), Some(b)) => {
            let side = |chosen: &str| -> Vec<(usize, &JobResult)> {
                all.iter()
                    .filter(|(run, j)| match kind {
                        Kind::Provider => j.arm(with_agents).as_deref() == Some(chosen),
                        Kind::Run => run.to_string() == chosen,
                    })
                    .copied()
                    .collect()
            };
            let key = match kind {
                Kind::Provider => provider_key,
                Kind::Run => run_key,
            };
            let (rows, comparison) = matrix(&side(a), &side(b), key, a, b);
            (rows, Some(comparison))
        }
        _ => (Vec::new(), None),
    };
    CompareView {
        version: model.version,
        kind,
        providers,
        runs,
        a,
        b,
        rows,
        verdict: comparison.as_ref().map(Comparison::verdict),
        comparison,
    }
}

/// Providers are compared per job: its runs under each provider.
fn provider_key(j: &JobResult) -> String {
    j.job.clone()
}

/// Data dirs are compared per job and provider: the same instance, less
/// its repeat.
fn run_key(j: &JobResult) -> String {
    match j.arm(j.agent.is_some()) {
        Some(arm) => format!("{}@{arm}", j.job),
        None => j.job.clone(),
    }
}

/// The rows of every job either side ran, in job order, and the paired
/// comparison over those both finished.
pub(super) fn matrix(
    side_a: &[(usize, &JobResult)],
    side_b: &[(usize, &JobResult)],
    key: fn(&JobResult) -> String,
    a: &str,
    b: &str,
) -> (Vec<MatrixRow>, Comparison) {
    let mut cells: BTreeMap<String, (Cell, Cell)> = BTreeMap::new();
    for (run, j) in side_a {
        cells.entry(key(j)).or_default().0.add(*run, j);
    }
    for (run, j) in side_b {
        cells.entry(key(j)).or_default().1.add(*run, j);
    }
    let mut pairs = Vec::new();
    let rows = cells
        .into_iter()
        .map(|(key, (ca, cb))| {
            let winner = match (ca.fraction(), cb.fraction()) {
                (Some(fa), Some(fb)) => {
                    pairs.push((fa, fb));
                    Some(match fa.total_cmp(&fb) {
                        std::cmp::Ordering::Greater => "a",
                        std::cmp::Ordering::Less => "b",
                        std::cmp::Ordering::Equal => "tie",
                    })
                }
                _ => None,
            };
            MatrixRow {
                key,
                a: ca,
                b: cb,
                winner,
            }
        })
        .collect();
    (rows, compare(a, b, &pairs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::FailureKind;
    use crate::report::JobOutcome;

    fn run(job: &str, provider: &str, k: u32, outcome: JobOutcome) -> JobResult {
        let mut j = JobResult::new(&format!("{job}@{provider}#{k}"), job, "f");
        j.provider = Some(provider.to_string());
        j.repeat = Some(k);
        j.outcome = outcome;
        if outcome == JobOutcome::Failed {
            j.failure_kind = Some(FailureKind::TestsFailed);
        }
        j
    }

    #[test]
    fn the_matrix_pairs_shared_finished_jobs_and_names_the_winner() {
        use JobOutcome::{Failed, Pending, Succeeded};
        let a = [
            run("j1", "x", 1, Succeeded),
            run("j1", "x", 2, Failed),
            run("j2", "x", 1, Succeeded),
            run("j3", "x", 1, Pending),
            run("only_x", "x", 1, Succeeded),
        ];
        let b = [
            run("j1", "y", 1, Failed),
            run("j2", "y", 1, Succeeded),
            run("j3", "y", 1, Succeeded),
        ];
        let side_a: Vec<(usize, &JobResult)> = a.iter().map(|j| (0, j)).collect();
        let side_b: Vec<(usize, &JobResult)> = b.iter().map(|j| (0, j)).collect();
        let (rows, c) = matrix(&side_a, &side_b, provider_key, "x", "y");
        let summary: Vec<(&str, Option<&str>)> =
            rows.iter().map(|r| (r.key.as_str(), r.winner)).collect();
        assert_eq!(
            summary,
            [
                ("j1", Some("a")),
                ("j2", Some("tie")),
                ("j3", None),
                ("only_x", None)
            ]
        );
        assert_eq!(rows[0].a.failure_kinds, ["tests_failed"]);
        assert_eq!((rows[0].a.finished, rows[0].a.tally.succeeded), (2, 1));
        assert_eq!(rows[2].a.tally.pending, 1);
        assert_eq!(rows[0].a.instances[1], (0, "j1@x#2".to_string()));
        // The report's comparison of the two shared finished jobs.
        assert_eq!((c.jobs, c.a_wins, c.b_wins, c.ties), (2, 1, 0, 1));
        assert_eq!((c.a.as_str(), c.b.as_str()), ("x", "y"));
    }

    #[test]
    fn data_dirs_pair_the_same_job_and_provider() {
        let j = run("j", "p", 3, JobOutcome::Succeeded);
        assert_eq!(run_key(&j), "j@p");
        assert_eq!(provider_key(&j), "j");
        let plain = JobResult::new("plain", "plain", "f");
        assert_eq!(run_key(&plain), "plain");
    }
}
