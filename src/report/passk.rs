//! pass@k over repeated runs: the unbiased estimator from n runs with c
//! succeeded, per (job, provider) group, and its mean over jobs per provider
//! and per (family, provider), with a bootstrap interval over the jobs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::model::Report;
use super::stats::{Interval, bootstrap_mean, mean};

/// The unbiased pass@k estimate from `n` finished runs of which `c` were
/// succeeded: `1 - C(n-c, k) / C(n, k)`, the chance that at least one of `k`
/// runs drawn without replacement succeeded.
///
/// Computed as `1 - prod_{i=n-c+1..=n} (1 - k/i)`, which never forms a large
/// binomial coefficient. `None` when `k` is zero, `k > n` or `c > n`.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    let k = f64::from(k);
    let miss: f64 = (n - c + 1..=n).map(|i| 1.0 - k / f64::from(i)).product();
    Some(1.0 - miss)
}

/// One (job, provider) group of a repeated sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassGroup {
    pub job: String,
    #[serde(default)]
    pub family: String,
    pub provider: Option<String>,
    /// Runs (repeats) in the group, finished or not.
    pub runs: u32,
    /// Repeats whose first attempt ended by the model (`n`): succeeded, or
    /// failed for a reason of the model's; not yet ended, or ended by the
    /// infrastructure or a cancel, it is no sample.
    pub n: u32,
    /// Repeats whose first attempt succeeded (`c`); a later attempt's
    /// success does not count.
    pub c: u32,
    /// `c / n`; `None` before any run finished.
    pub pass_at_1: Option<f64>,
    /// `None` while fewer than `k` runs have finished.
    pub pass_at_k: Option<f64>,
}

/// Means over a set of groups (jobs), each with a 95% percentile bootstrap
/// interval over those jobs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PassMeans {
    /// Groups (jobs) in the set.
    pub groups: u32,
    /// Groups whose estimates are defined (at least `k` finished runs).
    pub complete: u32,
    /// Mean pass@1 over the groups with a finished run.
    pub pass_at_1: Option<f64>,
    #[serde(default)]
    pub pass_at_1_ci: Option<Interval>,
    /// Mean pass@k over the complete groups.
    pub pass_at_k: Option<f64>,
    #[serde(default)]
    pub pass_at_k_ci: Option<Interval>,
}

impl PassMeans {
    fn of(groups: &[&PassGroup]) -> PassMeans {
        let at_1: Vec<f64> = groups.iter().filter_map(|g| g.pass_at_1).collect();
        let at_k: Vec<f64> = groups.iter().filter_map(|g| g.pass_at_k).collect();
        PassMeans {
            groups: count(groups.len()),
            complete: count(at_k.len()),
            pass_at_1: mean(&at_1),
            pass_at_1_ci: bootstrap_mean(&at_1),
            pass_at_k: mean(&at_k),
            pass_at_k_ci: bootstrap_mean(&at_k),
        }
    }
}

/// Means over the groups of one provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderPass {
    pub provider: Option<String>,
    #[serde(flatten)]
    pub means: PassMeans,
}

/// Means over the groups of one family under one provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyPass {
    pub family: String,
    pub provider: Option<String>,
    #[serde(flatten)]
    pub means: PassMeans,
}

/// pass@1 and pass@k of a repeated sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassAtK {
    /// Runs per group: the largest group's size.
    pub k: u32,
    pub groups: Vec<PassGroup>,
    pub providers: Vec<ProviderPass>,
    /// Per (family, provider), sorted by family, then provider.
    #[serde(default)]
    pub families: Vec<FamilyPass>,
}

impl PassAtK {
    /// Groups the jobs that carry a `repeat` index; `None` when none do.
    pub fn of(report: &Report) -> Option<PassAtK> {
        let mut groups: BTreeMap<(String, Option<String>), (u32, u32, u32)> = BTreeMap::new();
        let mut family: BTreeMap<&str, &str> = BTreeMap::new();
        let with_agents = report.with_agents();
        for job in report.jobs.iter().filter(|j| j.repeat.is_some()) {
            family.entry(&job.job).or_insert(&job.family);
            let g = groups
                .entry((job.job.clone(), job.arm(with_agents)))
                .or_default();
            // Each repeat's sample is its first attempt (restarts after a
            // fault of the infrastructure are the same attempt; retries
            // after it are not samples), once it ended by the model.
            g.0 += 1;
            if let Some(succeeded) = job.first_attempt_succeeded {
                g.1 += 1;
                g.2 += u32::from(succeeded);
            }
        }
        let k = groups.values().map(|g| g.0).max()?;
        let groups: Vec<PassGroup> = groups
            .into_iter()
            .map(|((job, provider), (runs, n, c))| PassGroup {
                family: family.get(job.as_str()).copied().unwrap_or("").to_string(),
                job,
                provider,
                runs,
                n,
                c,
                pass_at_1: pass_at_k(n, c, 1),
                pass_at_k: pass_at_k(n, c, k),
            })
            .collect();
        let mut by_provider: BTreeMap<Option<String>, Vec<&PassGroup>> = BTreeMap::new();
        let mut by_family: BTreeMap<(&str, Option<String>), Vec<&PassGroup>> = BTreeMap::new();
        for g in &groups {
            by_provider.entry(g.provider.clone()).or_default().push(g);
            by_family
                .entry((&g.family, g.provider.clone()))
                .or_default()
                .push(g);
        }
        let providers = by_provider
            .into_iter()
            .map(|(provider, gs)| ProviderPass {
                provider,
                means: PassMeans::of(&gs),
            })
            .collect();
        let families = by_family
            .into_iter()
            .map(|((family, provider), gs)| FamilyPass {
                family: family.to_string(),
                provider,
                means: PassMeans::of(&gs),
            })
            .collect();
        Some(PassAtK {
            k,
            groups,
            providers,
            families,
        })
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;
    use crate::report::model::JobOutcome;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn pass_at_k_matches_the_definition() {
        assert!(close(pass_at_k(3, 1, 1), 1.0 / 3.0));
        assert!(close(pass_at_k(3, 1, 3), 1.0));
        assert!(close(pass_at_k(3, 0, 1), 0.0));
        assert!(close(pass_at_k(3, 0, 3), 0.0));
        assert!(close(pass_at_k(3, 3, 1), 1.0));
        // 1 - C(3,2)/C(5,2) = 1 - 3/10
        assert!(close(pass_at_k(5, 2, 2), 0.7));
    }

    #[test]
    fn pass_at_k_is_undefined_outside_its_domain() {
        assert_eq!(pass_at_k(3, 1, 0), None);
        assert_eq!(pass_at_k(2, 1, 3), None);
        assert_eq!(pass_at_k(2, 3, 1), None);
    }

    #[test]
    fn pass_at_k_stays_finite_for_large_n() {
        let p = pass_at_k(10_000, 5_000, 100);
        assert!(p.is_some_and(|p| p.is_finite() && p > 0.999_999));
        assert!(close(pass_at_k(10_000, 1, 1), 1e-4));
    }

    #[test]
    fn groups_a_two_provider_sweep_with_three_repeats() {
        let report = sample();
        let pass = PassAtK::of(&report).unwrap();
        assert_eq!(pass.k, 3);
        assert_eq!(pass.groups.len(), 2);
        let alpha = &pass.groups[0];
        assert_eq!(alpha.provider.as_deref(), Some("alpha"));
        assert_eq!((alpha.n, alpha.c), (3, 1));
        assert!(close(alpha.pass_at_1, 1.0 / 3.0));
        assert!(close(alpha.pass_at_k, 1.0));
        let beta = &pass.groups[1];
        assert_eq!((beta.n, beta.c), (3, 0));
        assert!(close(beta.pass_at_k, 0.0));
        assert_eq!(pass.providers.len(), 2);
        assert!(close(pass.providers[0].means.pass_at_k, 1.0));
        assert_eq!(alpha.family, "parsing");
        assert_eq!(pass.families.len(), 2);
        assert_eq!(pass.families[1].family, "parsing");
        assert_eq!(pass.families[1].provider.as_deref(), Some("beta"));
    }

    #[test]
    fn each_repeat_counts_its_first_attempt_only() {
        let mut report = sample();
        for j in report
            .jobs
            .iter_mut()
            .filter(|j| j.provider.as_deref() == Some("beta"))
        {
            // Succeeded on a retry: still a failed sample.
            j.outcome = JobOutcome::Succeeded;
            j.attempts = 2;
            j.first_attempt_succeeded = Some(false);
        }
        if let Some(j) = report
            .jobs
            .iter_mut()
            .find(|j| j.instance == "tokenize@beta#3")
        {
            // Its first attempt ended by the infrastructure: no sample.
            j.first_attempt_succeeded = None;
        }
        let pass = PassAtK::of(&report).unwrap();
        let beta = &pass.groups[1];
        assert_eq!((beta.runs, beta.n, beta.c), (3, 2, 0));
        assert!(close(beta.pass_at_1, 0.0));
    }

    #[test]
    fn no_repeats_means_no_pass_at_k() {
        let mut report = sample();
        report.jobs.retain(|j| j.repeat.is_none());
        assert_eq!(PassAtK::of(&report), None);
    }

    #[test]
    fn an_unfinished_group_has_no_pass_at_k() {
        let mut report = sample();
        if let Some(j) = report.jobs.iter_mut().find(|j| j.repeat == Some(3)) {
            j.outcome = JobOutcome::Pending;
            j.first_attempt_succeeded = None;
        }
        let pass = PassAtK::of(&report).unwrap();
        assert_eq!(pass.groups[0].n, 2);
        assert_eq!(pass.groups[0].pass_at_k, None);
        assert_eq!(pass.providers[0].means.complete, 0);
        assert_eq!(pass.providers[0].means.pass_at_k, None);
        assert_eq!(pass.providers[0].means.pass_at_k_ci, None);
        assert!(pass.providers[0].means.pass_at_1_ci.is_some());
    }
}
