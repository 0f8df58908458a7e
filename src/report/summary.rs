//! Figures derived from the job rows: totals, per-family and per-provider
//! summaries, and the failure analysis. Pure and deterministic: groups come
//! out sorted by name (failures by count, then kind).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::compare::{Comparison, comparisons};
use super::model::{JobOutcome, JobResult, Report};
use super::passk::PassAtK;
use super::stats::{Interval, wilson};
use crate::protocol::FailureKind;
use crate::state::Tally;

/// Counts and sums over a set of jobs: the tally of their outcomes and
/// what they spent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// How the jobs ended.
    #[serde(flatten)]
    pub tally: Tally,
    /// `succeeded / (jobs - pending)`; `None` while nothing has finished.
    pub pass_rate: Option<f64>,
    /// The 95% Wilson score interval of `pass_rate`, each finished job one
    /// trial; `None` while nothing has finished.
    #[serde(default)]
    pub pass_rate_ci: Option<Interval>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub provider_calls: u64,
    /// Summed provider latency, milliseconds.
    pub provider_latency_ms: u64,
    /// Summed wall time of the jobs ("job time"), milliseconds.
    pub wall_ms: u64,
    /// From the first attempt's start to the last attempt's end across the
    /// jobs: the elapsed wall time, which parallel workers make shorter than
    /// the job time. Milliseconds.
    pub elapsed_ms: u64,
    /// Median wall time of finished jobs, milliseconds.
    pub median_wall_ms: Option<u64>,
    /// USD spent by the jobs whose provider has a price; `None` when none
    /// has one.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// `cost_usd` over the jobs that succeeded: what one success cost.
    #[serde(default, alias = "cost_per_accepted_usd")]
    pub cost_per_success_usd: Option<f64>,
    /// Where the jobs' time went, summed (model time is
    /// `provider_latency_ms`).
    #[serde(flatten)]
    pub time: super::model::TimeSpent,
    /// Jobs that failed `tampered` (forged results), counted apart from
    /// the other failures.
    #[serde(default)]
    pub tampered: u32,
    /// Jobs whose last attempt has at least one tamper signal.
    #[serde(default)]
    pub signalled: u32,
    /// Tamper signals of the jobs' last attempts, in all.
    #[serde(default)]
    pub signals: u64,
}

impl Figures {
    pub fn of<'a>(jobs: impl IntoIterator<Item = &'a JobResult>) -> Figures {
        let mut t = Figures::default();
        let mut walls = Vec::new();
        let (mut first, mut last): (Option<u64>, Option<u64>) = (None, None);
        for j in jobs {
            if let Some(start) = j.started_ms {
                first = Some(first.map_or(start, |f| f.min(start)));
            }
            if let Some(end) = j.ended_ms {
                last = Some(last.map_or(end, |l| l.max(end)));
            }
            t.tally.add(j.outcome);
            t.input_tokens = t.input_tokens.saturating_add(j.input_tokens);
            t.output_tokens = t.output_tokens.saturating_add(j.output_tokens);
            t.provider_calls = t.provider_calls.saturating_add(u64::from(j.provider_calls));
            t.provider_latency_ms = t.provider_latency_ms.saturating_add(j.provider_latency_ms);
            t.wall_ms = t.wall_ms.saturating_add(j.wall_ms);
            t.time.add(&j.time);
            if let Some(cost) = j.cost_usd {
                t.cost_usd = Some(crate::protocol::add_usd(t.cost_usd.unwrap_or(0.0), cost));
            }
            if j.outcome == JobOutcome::Failed && j.failure_kind == Some(FailureKind::Tampered) {
                t.tampered += 1;
            }
            if let Some(record) = &j.integrity {
                t.signals = t.signals.saturating_add(u64::from(record.signal_count));
                t.signalled += u32::from(record.signal_count > 0);
            }
            if j.outcome.is_terminal() {
                walls.push(j.wall_ms);
            }
        }
        let succeeded = t.tally.succeeded;
        t.pass_rate = t.tally.pass_rate();
        t.pass_rate_ci = wilson(succeeded, t.tally.finished());
        t.median_wall_ms = median(&mut walls);
        t.cost_per_success_usd = t
            .cost_usd
            .filter(|_| succeeded > 0)
            .map(|cost| cost / f64::from(succeeded));
        t.elapsed_ms = match (first, last) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => 0,
        };
        t
    }

    /// Mean latency of one provider call, milliseconds.
    pub fn mean_latency_ms(&self) -> Option<u64> {
        (self.provider_calls > 0).then(|| self.provider_latency_ms / self.provider_calls)
    }
}

/// The median; the lower-rounded mean of the middle two for an even count.
pub(super) fn median(values: &mut [u64]) -> Option<u64> {
    values.sort_unstable();
    let mid = values.len() / 2;
    match values.len() {
        0 => None,
        n if !n.is_multiple_of(2) => values.get(mid).copied(),
        _ => {
            let (a, b) = (*values.get(mid - 1)?, *values.get(mid)?);
            Some(a / 2 + b / 2 + (a % 2 + b % 2) / 2)
        }
    }
}

/// One family's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilySummary {
    pub family: String,
    #[serde(flatten)]
    pub figures: Figures,
    /// The single-attempt gate: every instance of the family succeeded
    /// on its first attempt, run in one go (none pending).
    #[serde(default)]
    pub first_attempt_gate: bool,
}

/// One provider's line (jobs of a sweep; jobs without a provider are left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSummary {
    pub provider: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// How often one failure kind occurred, and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureSummary {
    pub kind: FailureKind,
    pub count: u32,
    /// Instances in report order.
    pub instances: Vec<String>,
}

/// Every derived figure the renderers show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub totals: Figures,
    pub families: Vec<FamilySummary>,
    pub providers: Vec<ProviderSummary>,
    pub failures: Vec<FailureSummary>,
    pub pass_at_k: Option<PassAtK>,
    /// Every pair of providers of a sweep, compared on their shared jobs.
    pub comparisons: Vec<Comparison>,
    /// Each provider's flip rates over the jobs it ran more than once.
    pub noise: Vec<super::noise::Noise>,
}

impl Summary {
    pub fn of(report: &Report) -> Summary {
        let mut families: BTreeMap<&str, Vec<&JobResult>> = BTreeMap::new();
        let mut providers: BTreeMap<String, Vec<&JobResult>> = BTreeMap::new();
        let mut failures: BTreeMap<FailureKind, Vec<String>> = BTreeMap::new();
        let with_agents = report.with_agents();
        for j in &report.jobs {
            families.entry(&j.family).or_default().push(j);
            if let Some(arm) = j.arm(with_agents) {
                providers.entry(arm).or_default().push(j);
            }
            if let Some(kind) = j.failure_kind
                && j.outcome != JobOutcome::Succeeded
            {
                failures.entry(kind).or_default().push(j.instance.clone());
            }
        }
        let mut failures: Vec<FailureSummary> = failures
            .into_iter()
            .map(|(kind, instances)| FailureSummary {
                kind,
                count: u32::try_from(instances.len()).unwrap_or(u32::MAX),
                instances,
            })
            .collect();
        failures.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)));
        Summary {
            totals: Figures::of(&report.jobs),
            families: families
                .into_iter()
                .map(|(family, jobs)| FamilySummary {
                    family: family.to_string(),
                    figures: Figures::of(jobs.iter().copied()),
                    first_attempt_gate: !jobs.is_empty()
                        && jobs.iter().all(|j| j.first_attempt_clean),
                })
                .collect(),
            providers: providers
                .into_iter()
                .map(|(provider, jobs)| ProviderSummary {
                    provider,
                    figures: Figures::of(jobs),
                })
                .collect(),
            failures,
            pass_at_k: PassAtK::of(report),
            comparisons: comparisons(report),
            noise: super::compare::noise(report),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;

    #[test]
    fn median_handles_odd_even_and_empty() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [5]), Some(5));
        assert_eq!(median(&mut [9, 1, 5]), Some(5));
        assert_eq!(median(&mut [4, 1, 2, 3]), Some(2));
        assert_eq!(median(&mut [u64::MAX, u64::MAX]), Some(u64::MAX));
    }

    #[test]
    fn totals_count_every_outcome() {
        let s = Summary::of(&sample());
        let t = &s.totals.tally;
        assert_eq!(t.jobs, 11);
        assert_eq!(t.jobs, t.succeeded + t.failed + t.cancelled + t.pending);
        assert_eq!((t.succeeded, t.cancelled, t.pending), (2, 1, 1));
        assert_eq!(s.totals.pass_rate, Some(2.0 / 10.0));
        assert_eq!(s.totals.pass_rate_ci, wilson(2, 10));
    }

    #[test]
    fn families_are_sorted_and_pending_is_left_out_of_the_rate() {
        let s = Summary::of(&sample());
        let names: Vec<&str> = s.families.iter().map(|f| f.family.as_str()).collect();
        assert_eq!(names, ["off_by_one", "parsing"]);
        let parsing = &s.families[1].figures;
        assert_eq!(parsing.tally.pending, 1);
        assert_eq!(parsing.pass_rate, Some(1.0 / 8.0));
        // The interval counts finished jobs only: 1 of 8.
        assert_eq!(parsing.pass_rate_ci, wilson(1, 8));
    }

    #[test]
    fn providers_cover_only_sweep_jobs() {
        let s = Summary::of(&sample());
        let names: Vec<&str> = s.providers.iter().map(|p| p.provider.as_str()).collect();
        assert_eq!(names, ["alpha", "beta"]);
        assert!(s.providers.iter().all(|p| p.figures.tally.jobs == 3));
    }

    #[test]
    fn failures_are_grouped_most_frequent_first() {
        let s = Summary::of(&sample());
        assert_eq!(s.failures[0].kind, FailureKind::TestsFailed);
        assert_eq!(s.failures[0].instances, ["render_cell", "tokenize@alpha#1"]);
        let total: u32 = s.failures.iter().map(|f| f.count).sum();
        assert_eq!(total, 8);
        for kind in [
            FailureKind::TestsMissing,
            FailureKind::PatchRejected,
            FailureKind::AcceptanceFailed,
        ] {
            assert!(
                s.failures.iter().any(|f| f.kind == kind && f.count == 1),
                "{kind}"
            );
        }
        assert!(
            s.failures
                .iter()
                .any(|f| f.kind == FailureKind::InvalidBaseline && f.instances == ["parse_header"])
        );
    }

    #[test]
    fn the_first_attempt_gate_needs_every_instance_clean() {
        let report = crate::report::fixture::sample();
        let summary = Summary::of(&report);
        let gate = |family: &str| {
            summary
                .families
                .iter()
                .find(|f| f.family == family)
                .map(|f| f.first_attempt_gate)
        };
        // off_by_one has a clean job that succeeded and a failed one.
        assert_eq!(gate("off_by_one"), Some(false));
        let mut clean = report.clone();
        clean.jobs.retain(|j| j.instance == "off_by_one");
        let summary = Summary::of(&clean);
        assert!(summary.families[0].first_attempt_gate);
        clean.jobs[0].first_attempt_clean = false;
        assert!(!Summary::of(&clean).families[0].first_attempt_gate);
    }
}
