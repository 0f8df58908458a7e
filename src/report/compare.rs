//! Paired comparison of the providers of a sweep on the jobs they share:
//! per job, the provider with the higher pass fraction over its repeats
//! wins; the exact sign test (McNemar's exact test) on the wins and losses
//! says whether the difference is significant, and a paired bootstrap over
//! the jobs gives an interval for the mean difference in pass@1.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::model::{JobOutcome, Report};
use super::noise::{Noise, Runs, minimum_detectable, noise_error, noise_interval};
use super::stats::{Interval, SIGNIFICANCE_LEVEL, bootstrap_mean, mean, sign_test};

/// Provider `a` against provider `b` (`a` sorts first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    /// Jobs with at least one finished run under both providers.
    pub jobs: u32,
    /// Shared jobs where `a`'s pass fraction is higher.
    pub a_wins: u32,
    /// Shared jobs where `b`'s pass fraction is higher.
    pub b_wins: u32,
    /// Shared jobs with equal pass fractions.
    pub ties: u32,
    /// Mean pass fraction (pass@1) of `a` over the shared jobs.
    pub a_pass_at_1: f64,
    /// Mean pass fraction (pass@1) of `b` over the shared jobs.
    pub b_pass_at_1: f64,
    /// `a_pass_at_1 - b_pass_at_1`: the mean per-job difference.
    pub difference: f64,
    /// 95% paired bootstrap interval of `difference` (jobs resampled with
    /// both providers' fractions kept together).
    pub difference_ci: Option<Interval>,
    /// Two-sided exact sign test on `a_wins` against `b_wins`.
    pub p_value: f64,
    /// `p_value < 0.05`.
    pub significant: bool,
    /// The smallest difference the run-to-run noise lets this comparison
    /// tell (α = 0.05, power 0.8), from each shared job's flip rate under
    /// both providers; `None` unless every shared job ran at least twice
    /// under both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mde: Option<f64>,
    /// The 95% interval the runs' noise gives `difference` (from the same
    /// flip rates as `mde`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_ci: Option<Interval>,
    /// The difference's interval holds 0 (`noise_ci`, or without repeats
    /// `difference_ci`): within noise.
    #[serde(default)]
    pub within_noise: bool,
}

impl Comparison {
    /// `<a> better` or `<b> better` when significant (by who won more
    /// jobs), otherwise `no significant difference`.
    pub fn verdict(&self) -> String {
        match (self.significant, self.a_wins.cmp(&self.b_wins)) {
            (true, std::cmp::Ordering::Greater) => format!("{} better", self.a),
            (true, std::cmp::Ordering::Less) => format!("{} better", self.b),
            _ => "no significant difference".to_string(),
        }
    }
}

/// Every pair of providers in the report, sorted by `a`, then `b`; empty
/// with fewer than two providers. Jobs without a provider are left out.
pub fn comparisons(report: &Report) -> Vec<Comparison> {
    let runs = runs_by_provider(report);
    let fractions: Vec<(String, BTreeMap<&str, f64>)> = runs
        .iter()
        .map(|(provider, jobs)| {
            let fractions = jobs
                .iter()
                .filter(|(_, (n, _))| *n > 0)
                .map(|(job, (n, c))| (*job, f64::from(*c) / f64::from(*n)))
                .collect();
            (provider.clone(), fractions)
        })
        .collect();
    let mut out = Vec::new();
    for (i, (a, a_jobs)) in fractions.iter().enumerate() {
        for (b, b_jobs) in fractions.iter().skip(i + 1) {
            let (a_runs, b_runs) = (runs.get(a), runs.get(b));
            let mut pairs: Vec<(f64, f64)> = Vec::new();
            let mut counts: Vec<(Runs, Runs)> = Vec::new();
            for (job, fa) in a_jobs {
                let Some(fb) = b_jobs.get(job) else {
                    continue;
                };
                pairs.push((*fa, *fb));
                let count = |arm: Option<&BTreeMap<&str, Runs>>| {
                    arm.and_then(|r| r.get(job)).copied().unwrap_or_default()
                };
                counts.push((count(a_runs), count(b_runs)));
            }
            let mut comparison = compare(a, b, &pairs);
            if let Some(se) = noise_error(&counts) {
                let interval = noise_interval(comparison.difference, se);
                comparison.mde = Some(minimum_detectable(se));
                comparison.within_noise = interval.low <= 0.0 && 0.0 <= interval.high;
                comparison.noise_ci = Some(interval);
            }
            out.push(comparison);
        }
    }
    out
}

/// Each provider's noise (flip rates) over the jobs it ran more than once.
pub(super) fn noise(report: &Report) -> Vec<Noise> {
    super::noise::noise(&runs_by_provider(report))
}

/// provider -> job -> (finished, succeeded), each arm of a sweep.
fn runs_by_provider(report: &Report) -> BTreeMap<String, BTreeMap<&str, Runs>> {
    let mut runs: BTreeMap<String, BTreeMap<&str, Runs>> = BTreeMap::new();
    let with_agents = report.with_agents();
    for j in &report.jobs {
        let Some(provider) = j.arm(with_agents) else {
            continue;
        };
        let entry = runs.entry(provider).or_default().entry(&j.job).or_default();
        if j.outcome.is_terminal() {
            entry.0 += 1;
        }
        if j.outcome == JobOutcome::Succeeded {
            entry.1 += 1;
        }
    }
    runs
}

/// The comparison of `a` and `b` from their pass fractions on each shared job.
pub fn compare(a: &str, b: &str, pairs: &[(f64, f64)]) -> Comparison {
    let (mut a_wins, mut b_wins, mut ties) = (0u32, 0u32, 0u32);
    for (fa, fb) in pairs {
        match fa.total_cmp(fb) {
            std::cmp::Ordering::Greater => a_wins += 1,
            std::cmp::Ordering::Less => b_wins += 1,
            std::cmp::Ordering::Equal => ties += 1,
        }
    }
    let a_fractions: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let b_fractions: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let differences: Vec<f64> = pairs.iter().map(|(fa, fb)| fa - fb).collect();
    let p_value = sign_test(a_wins, b_wins);
    let difference_ci = bootstrap_mean(&differences);
    Comparison {
        a: a.to_string(),
        b: b.to_string(),
        jobs: a_wins + b_wins + ties,
        a_wins,
        b_wins,
        ties,
        a_pass_at_1: mean(&a_fractions).unwrap_or(0.0),
        b_pass_at_1: mean(&b_fractions).unwrap_or(0.0),
        difference: mean(&differences).unwrap_or(0.0),
        difference_ci,
        p_value,
        significant: p_value < SIGNIFICANCE_LEVEL,
        mde: None,
        noise_ci: None,
        within_noise: difference_ci.is_none_or(|ci| ci.low <= 0.0 && 0.0 <= ci.high),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;
    use crate::report::model::JobResult;

    fn run(job: &str, provider: &str, k: u32, outcome: JobOutcome) -> JobResult {
        let mut j = JobResult::new(&format!("{job}@{provider}#{k}"), job, "f");
        j.provider = Some(provider.to_string());
        j.repeat = Some(k);
        j.outcome = outcome;
        j
    }

    /// `succeeded` of 3 runs of `job` under `provider` succeed.
    fn runs(report: &mut Report, job: &str, provider: &str, succeeded: u32) {
        for k in 1..=3 {
            let outcome = if k <= succeeded {
                JobOutcome::Succeeded
            } else {
                JobOutcome::Failed
            };
            report.jobs.push(run(job, provider, k, outcome));
        }
    }

    #[test]
    fn wins_losses_and_ties_by_pass_fraction() {
        let mut report = Report::new(0, vec![]);
        for (job, a, b) in [
            ("j1", 3, 0),
            ("j2", 2, 1),
            ("j3", 1, 1),
            ("j4", 0, 3),
            ("j5", 3, 3),
        ] {
            runs(&mut report, job, "alpha", a);
            runs(&mut report, job, "beta", b);
        }
        let c = comparisons(&report);
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!((c.a.as_str(), c.b.as_str()), ("alpha", "beta"));
        assert_eq!((c.jobs, c.a_wins, c.b_wins, c.ties), (5, 2, 1, 2));
        // 2 vs 1 discordant: 2 · (1 + 3) / 8 = 1.
        assert_eq!(c.p_value, 1.0);
        assert!(!c.significant);
        assert_eq!(c.verdict(), "no significant difference");
        let expected_a = (1.0 + 2.0 / 3.0 + 1.0 / 3.0 + 0.0 + 1.0) / 5.0;
        let expected_b = (0.0 + 1.0 / 3.0 + 1.0 / 3.0 + 1.0 + 1.0) / 5.0;
        assert!((c.a_pass_at_1 - expected_a).abs() < 1e-12);
        assert!((c.b_pass_at_1 - expected_b).abs() < 1e-12);
        assert!((c.difference - (expected_a - expected_b)).abs() < 1e-12);
        let ci = c.difference_ci.unwrap();
        assert!(ci.low <= c.difference && c.difference <= ci.high);
        assert!(ci.low >= -1.0 && ci.high <= 1.0);
    }

    #[test]
    fn a_clear_winner_is_significant() {
        let pairs: Vec<(f64, f64)> = (0..8)
            .map(|_| (1.0, 0.0))
            .chain([(0.0, 1.0), (1.0, 1.0)])
            .collect();
        let c = compare("x", "y", &pairs);
        assert_eq!((c.a_wins, c.b_wins, c.ties), (8, 1, 1));
        assert_eq!(c.p_value, 20.0 / 512.0);
        assert!(c.significant);
        assert_eq!(c.verdict(), "x better");
        assert_eq!(compare("y", "x", &[(0.0, 1.0); 6]).verdict(), "x better");
        assert!((c.difference - 0.7).abs() < 1e-12);
        let ci = c.difference_ci.unwrap();
        assert!(ci.low > 0.0, "{ci:?}");
    }

    #[test]
    fn only_shared_finished_jobs_are_paired() {
        let mut report = Report::new(0, vec![]);
        runs(&mut report, "both", "alpha", 3);
        runs(&mut report, "both", "beta", 0);
        runs(&mut report, "only_alpha", "alpha", 3);
        report
            .jobs
            .push(run("pending", "alpha", 1, JobOutcome::Succeeded));
        report
            .jobs
            .push(run("pending", "beta", 1, JobOutcome::Pending));
        let mut plain = JobResult::new("plain", "plain", "f");
        plain.outcome = JobOutcome::Succeeded;
        report.jobs.push(plain);
        let c = &comparisons(&report)[0];
        assert_eq!((c.jobs, c.a_wins, c.b_wins, c.ties), (1, 1, 0, 0));
    }

    #[test]
    fn three_providers_give_three_pairs_and_one_gives_none() {
        let mut report = Report::new(0, vec![]);
        for p in ["c", "a", "b"] {
            runs(&mut report, "j", p, 1);
        }
        let pairs: Vec<(String, String)> = comparisons(&report)
            .into_iter()
            .map(|c| (c.a, c.b))
            .collect();
        let expected =
            [("a", "b"), ("a", "c"), ("b", "c")].map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(pairs, expected);
        let mut single = Report::new(0, vec![]);
        runs(&mut single, "j", "a", 1);
        assert!(comparisons(&single).is_empty());
    }

    #[test]
    fn no_shared_jobs_is_no_evidence() {
        let c = compare("a", "b", &[]);
        assert_eq!((c.jobs, c.p_value, c.significant), (0, 1.0, false));
        assert_eq!(c.difference_ci, None);
    }

    #[test]
    fn the_sample_sweep_shares_one_job() {
        let c = comparisons(&sample());
        assert_eq!(c.len(), 1);
        // alpha 1/3 against beta 0/3 on tokenize.
        assert_eq!((c[0].a_wins, c[0].b_wins, c[0].ties), (1, 0, 0));
    }
}
