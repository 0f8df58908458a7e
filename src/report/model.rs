//! The report's input: one [`Report`] holding a [`JobResult`] per job
//! instance, already derived from the event log. Renderers read nothing else.

use serde::{Deserialize, Serialize};

use crate::protocol::{FailureKind, Resources};

/// Version of the report data model as written to `results.json`.
/// 2: per-test acceptance verdicts (`f2p_passed` ... `baseline_reason`).
/// 3: 95% intervals (`pass_rate_ci`, `pass_at_1_ci`, `pass_at_k_ci`),
/// pass@k per family (`pass_at_k.families`) and paired provider
/// `comparisons`; the jobs are unchanged.
/// 4: per job `setup_ms` (setup time, no longer counted as acceptance
/// time), `manifest_hash`, `attempt_history` (every attempt with the
/// manifest hash it ran) and `first_attempt_accepted` (pass@k's sample).
/// 5: per job `integrity` (the last attempt's tamper signals and canary
/// evidence); per tally `tampered`, `signalled` and `signals`.
/// 6: per job `prompt`, `trace`, `logs` (the attempt's artifacts, relative
/// to its data dir) and `test_excerpts` (what each failing or missing test
/// printed of its own, from `runs/<job>/<n>/tests/excerpts.json`).
/// 7: per job `resources` (what its commands cost the machine: CPU time
/// summed, the highest memory and task peak) and per timeline entry of a
/// command its own `resources`.
/// 8: one word for a job that was accepted, the log's: `outcome`
/// `succeeded` (was `accepted`), per tally `succeeded` and
/// `cost_per_success_usd`, per job `first_attempt_succeeded`; older
/// documents still read.
/// 9: per job `harness_output` (why the tests did not build or collect).
/// 10: per job `timeline` is one object per attempt, its `moments` a
/// `phase` (one action) or a model `step` (its call, cost, headline, a full
/// trace's key fields, reply, observation and diff as excerpts, and its
/// actions); it was one flat list of entries.
pub const REPORT_SCHEMA_VERSION: u32 = 11;

/// Test names kept per list (failing, missing) in a [`JobResult`]; the
/// counts say how many there are in all.
pub const TEST_NAMES_KEPT: usize = 20;

/// Everything the renderers need, in the order jobs should be listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA_VERSION`] when built by this version.
    pub schema_version: u32,
    /// When the report was derived, in milliseconds since the Unix epoch (UTC).
    pub generated_at_ms: u64,
    /// The event logs the report was derived from.
    pub sources: Vec<String>,
    pub jobs: Vec<JobResult>,
}

impl Report {
    /// Whether any instance ran an external agent (then the others ran the
    /// runtime's loop, an arm of their own).
    /// Each finished job's outcome by task: its job and repeat (1 without
    /// `--repeat`) to whether it succeeded; pending and cancelled jobs
    /// are left out. What a paired comparison of two runs reads.
    pub fn finished_by_task(&self) -> std::collections::BTreeMap<(String, u32), bool> {
        self.jobs
            .iter()
            .filter_map(|j| {
                let succeeded = match j.outcome {
                    JobOutcome::Succeeded => true,
                    JobOutcome::Failed => false,
                    JobOutcome::Cancelled | JobOutcome::Pending => return None,
                };
                Some(((j.job.clone(), j.repeat.unwrap_or(1)), succeeded))
            })
            .collect()
    }

    pub fn with_agents(&self) -> bool {
        self.jobs.iter().any(|j| j.agent.is_some())
    }

    /// An empty report at schema version [`REPORT_SCHEMA_VERSION`].
    pub fn new(generated_at_ms: u64, sources: Vec<String>) -> Report {
        Report {
            schema_version: REPORT_SCHEMA_VERSION,
            generated_at_ms,
            sources,
            jobs: Vec::new(),
        }
    }
}

/// Where time went besides the model (`provider_latency_ms`): the
/// state's sums, as they are.
pub(super) use crate::state::TimeSpent;

/// One attempt the log holds for a job instance, those of earlier
/// manifests (before a `--replace`) included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRun {
    /// Its number, as the log and `DATA/runs/<job>/<n>/` name it.
    pub attempt: u32,
    /// The manifest hash it ran.
    pub manifest_hash: Option<String>,
    /// `succeeded`, `failed`, `interrupted` (started over, not counted) or
    /// `running` (not ended yet).
    pub status: String,
    #[serde(default)]
    pub failure_kind: Option<FailureKind>,
}

/// One job instance: a job, or one run of it in a provider sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// `<job>`, or `<job>@<provider>#<k>` in a sweep.
    pub instance: String,
    /// The manifest id.
    pub job: String,
    pub family: String,
    /// Provider name in a sweep; `None` when the manifest's provider ran.
    pub provider: Option<String>,
    /// The external agent that drove it (name, version, mode); `None` for
    /// the runtime's own loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<crate::protocol::AgentChoice>,
    /// Run index within a `--repeat` sweep.
    pub repeat: Option<u32>,
    /// The hash of the manifest the job runs now.
    #[serde(default)]
    pub manifest_hash: Option<String>,
    pub outcome: JobOutcome,
    pub failure_kind: Option<FailureKind>,
    /// Attempts started.
    pub attempts: u32,
    pub max_attempts: u32,
    /// Provider decisions over all attempts.
    pub steps: u32,
    pub invalid_decisions: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Sum of provider call latencies, in milliseconds: model time.
    pub provider_latency_ms: u64,
    pub provider_calls: u32,
    /// USD spent on provider calls (every billed call, an unusable reply
    /// too); `None` when the provider has no `[price]`.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Where the time went besides the model.
    #[serde(flatten)]
    pub time: TimeSpent,
    /// What the job's commands cost the machine, every attempt's: their
    /// CPU time summed, the highest memory and task peak of any one; a
    /// figure no command told is left out.
    #[serde(default)]
    pub resources: Resources,
    /// Wall time from first attempt start to the job's end, in milliseconds.
    pub wall_ms: u64,
    /// When its first attempt started and its last attempt ended, in
    /// milliseconds since the Unix epoch (for the batch's elapsed time).
    #[serde(default)]
    pub started_ms: Option<u64>,
    #[serde(default)]
    pub ended_ms: Option<u64>,
    /// Size of the final patch in bytes.
    pub patch_bytes: u64,
    /// Files the final patch touches.
    pub patch_files: u32,
    /// The final patch as a unified diff.
    pub patch: Option<String>,
    pub acceptance: CheckResult,
    pub baseline: CheckResult,
    /// Why the baseline is unusable, or an informational note about it.
    #[serde(default)]
    pub baseline_reason: Option<String>,
    /// Why the last attempt failed, in one line, when the log says: the
    /// first compiler error or failing test of a failed verify, the
    /// provider's last error, a refused decision, a rejected patch, a fault
    /// of the infrastructure.
    #[serde(default)]
    pub cause: Option<String>,
    /// Succeeded on its first attempt, which ran to its end in one go (no
    /// restart after a fault, no interruption): the single-attempt gate.
    #[serde(default)]
    pub first_attempt_clean: bool,
    /// How the first attempt under the current manifest ended, the sample
    /// pass@k counts: `true` succeeded, `false` failed by the model; `None`
    /// while it has not ended, or when it ended for a reason that is not
    /// the model's (infrastructure, setup, a cancel). Restarts after a
    /// fault of the infrastructure are the same attempt.
    #[serde(default, alias = "first_attempt_accepted")]
    pub first_attempt_succeeded: Option<bool>,
    /// The per-test verdict of the last attempt's acceptance run.
    #[serde(flatten)]
    pub tests: TestVerdict,
    /// The last finished attempt's integrity record: its tamper signals
    /// and what its canaries showed; `None` until an attempt finished with
    /// one (and in logs written before the record existed).
    #[serde(default)]
    pub integrity: Option<crate::protocol::Integrity>,
    /// Every attempt in the log, in order, with the manifest hash it ran:
    /// attempts of an earlier manifest stay here as history.
    #[serde(default)]
    pub attempt_history: Vec<AttemptRun>,
    /// The manifest's `[metadata]` (where the job came from: an imported
    /// SWE-bench instance's `instance_id`, `version`...); left out when
    /// empty.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub metadata: std::collections::BTreeMap<String, String>,
    /// The task prompt, as the manifest snapshot in the log holds it
    /// (`None` for a bare lifecycle task).
    #[serde(default)]
    pub prompt: Option<String>,
    /// The manifest's `trace`: `metadata` (the log only) or `full` (a
    /// transcript of the model's messages too).
    #[serde(default)]
    pub trace: Option<String>,
    /// The last attempt's logs and artifacts found beside the log, as paths
    /// relative to its data dir (`runs/<job>/<n>/acceptance.log`), with the
    /// baseline's log from the attempt that ran it.
    #[serde(default)]
    pub logs: Vec<String>,
    /// What each failing or missing test of the last acceptance run printed
    /// of its own; `None` when no test failed, or when the artifact is not
    /// beside this log (a shard merged without its `runs/`).
    #[serde(default)]
    pub test_excerpts: Option<crate::verdict::TestExcerpts>,
    /// Why the last acceptance run's tests did not build or collect: the
    /// first error of its output (`harness_output.txt`, escaped, at most 40
    /// lines and 4 KiB); `None` when they ran, or when the artifact is not
    /// beside this log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_output: Option<String>,
    /// Each attempt's timeline (a full trace's texts as excerpts).
    #[serde(deserialize_with = "timeline_of_any_version")]
    pub timeline: Vec<crate::protocol::AttemptTimeline>,
    /// Which of the report's `sources` the job was read from (for links
    /// to its artifacts); not part of `results.json`.
    #[serde(skip)]
    pub source: usize,
}

impl JobResult {
    /// The arm of a sweep this instance ran in, as tables, pass@k and the
    /// paired comparisons name it: its provider and its external agent
    /// (`<provider>+<agent>`); where other instances of the report ran an
    /// agent (`with_agents`), one without is `runtime`'s. `None` for a job
    /// run as its manifest says, outside any sweep.
    pub fn arm(&self, with_agents: bool) -> Option<String> {
        let agent = match &self.agent {
            Some(agent) => Some(agent.label()),
            None if with_agents => Some("runtime".to_string()),
            None => None,
        };
        match (&self.provider, agent) {
            (Some(provider), Some(agent)) => Some(format!("{provider}+{agent}")),
            (Some(provider), None) => Some(provider.clone()),
            (None, Some(agent)) => Some(agent),
            (None, None) => None,
        }
    }

    /// The external agent as `name@version`, and its mode, when one drove
    /// the job.
    pub fn agent_words(&self) -> Option<(String, crate::protocol::AgentMode)> {
        self.agent.as_ref().map(|a| {
            let name = match &a.version {
                Some(version) => format!("{}@{version}", a.name),
                None => a.name.clone(),
            };
            (name, a.mode)
        })
    }

    /// A contained agent's new files outside `editable` (a note).
    pub fn stray_files(&self) -> &[String] {
        self.integrity
            .as_ref()
            .map_or(&[], |r| r.stray_files.as_slice())
    }

    /// A pending job with every figure at zero; fixtures and builders fill in the rest.
    pub fn new(instance: &str, job: &str, family: &str) -> JobResult {
        JobResult {
            instance: instance.to_string(),
            job: job.to_string(),
            family: family.to_string(),
            provider: None,
            agent: None,
            repeat: None,
            manifest_hash: None,
            outcome: JobOutcome::Pending,
            failure_kind: None,
            attempts: 0,
            max_attempts: 0,
            steps: 0,
            invalid_decisions: 0,
            input_tokens: 0,
            output_tokens: 0,
            provider_latency_ms: 0,
            provider_calls: 0,
            cost_usd: None,
            time: TimeSpent::default(),
            resources: Resources::default(),
            wall_ms: 0,
            started_ms: None,
            ended_ms: None,
            patch_bytes: 0,
            patch_files: 0,
            patch: None,
            acceptance: CheckResult::NotRun,
            baseline: CheckResult::NotRun,
            baseline_reason: None,
            cause: None,
            first_attempt_clean: false,
            first_attempt_succeeded: None,
            tests: TestVerdict::default(),
            integrity: None,
            attempt_history: Vec::new(),
            metadata: Default::default(),
            prompt: None,
            trace: None,
            logs: Vec::new(),
            test_excerpts: None,
            harness_output: None,
            timeline: Vec::new(),
            source: 0,
        }
    }

    /// The failure kind as text, or `""` when there is none.
    pub fn failure_str(&self) -> &'static str {
        self.failure_kind.map_or("", FailureKind::as_str)
    }

    /// The integrity record in a few words: its signal count, and whether
    /// a canary showed the results forged; `-` without a record.
    pub fn integrity_summary(&self) -> String {
        match &self.integrity {
            None => "-".to_string(),
            Some(record) => {
                let signals = match record.signal_count {
                    1 => "1 signal".to_string(),
                    n => format!("{n} signals"),
                };
                if record.forged() {
                    format!("canary forged, {signals}")
                } else {
                    signals
                }
            }
        }
    }
}

/// What the last acceptance run said test by test. Counts are `None` when
/// there is no per-test verdict: acceptance was not reached, or it was
/// judged by its exit status alone (`[acceptance] results = "exit"`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestVerdict {
    /// Acceptance ran and was judged against the baseline's inventory.
    pub verified_per_test: bool,
    /// Fail-to-pass tests that pass now, of all fail-to-pass tests.
    pub f2p_passed: Option<u32>,
    pub f2p_total: Option<u32>,
    /// Pass-to-pass tests that still pass, of all pass-to-pass tests.
    pub p2p_passed: Option<u32>,
    pub p2p_total: Option<u32>,
    /// Inventory tests reported but not passed: the first [`TEST_NAMES_KEPT`].
    pub failing_tests: Vec<String>,
    /// How many tests failed in all.
    pub failing_count: u32,
    /// Inventory tests not reported at all: the first [`TEST_NAMES_KEPT`].
    pub missing_tests: Vec<String>,
    /// How many tests were missing in all.
    pub missing_count: u32,
}

impl TestVerdict {
    /// The report's view of a logged verdict: names capped, counts kept.
    pub fn of(verdict: &crate::verdict::Verdict) -> TestVerdict {
        let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        let kept = |names: &[String]| names.iter().take(TEST_NAMES_KEPT).cloned().collect();
        TestVerdict {
            verified_per_test: true,
            f2p_passed: Some(n(verdict.f2p_passed)),
            f2p_total: Some(n(verdict.f2p_total)),
            p2p_passed: Some(n(verdict.p2p_passed)),
            p2p_total: Some(n(verdict.p2p_total)),
            failing_tests: kept(&verdict.failing),
            failing_count: n(verdict.failing.len()),
            missing_tests: kept(&verdict.missing),
            missing_count: n(verdict.missing.len()),
        }
    }
}

pub use crate::state::JobOutcome;

/// Result of the acceptance tests or of the baseline check.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum CheckResult {
    /// Not reached (yet).
    NotRun,
    /// Deliberately not run (no acceptance, or `baseline = "skip"`).
    Skipped,
    Passed,
    Failed,
    /// The baseline's test harness could not run or report.
    Error,
}

impl CheckResult {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl CheckResult {
    /// A baseline verdict in the words of the human views (`fails as
    /// required`, `already passes`, `skipped`, `harness error`, `not run`).
    pub fn baseline_words(self) -> &'static str {
        use crate::state::BaselineVerdict;
        match self {
            CheckResult::NotRun => "not run",
            CheckResult::Passed => BaselineVerdict::Passed.words(),
            CheckResult::Failed => BaselineVerdict::Failed.words(),
            CheckResult::Skipped => BaselineVerdict::Skipped.words(),
            CheckResult::Error => BaselineVerdict::Error.words(),
        }
    }
}

impl From<crate::state::BaselineVerdict> for CheckResult {
    fn from(verdict: crate::state::BaselineVerdict) -> CheckResult {
        match verdict {
            crate::state::BaselineVerdict::Passed => CheckResult::Passed,
            crate::state::BaselineVerdict::Failed => CheckResult::Failed,
            crate::state::BaselineVerdict::Skipped => CheckResult::Skipped,
            crate::state::BaselineVerdict::Error => CheckResult::Error,
        }
    }
}

/// A `timeline` as schema 10 writes it, or as earlier ones did (one flat
/// list of entries), grouped into attempts and steps.
fn timeline_of_any_version<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<crate::protocol::AttemptTimeline>, D::Error> {
    use crate::protocol::{Action, AttemptTimeline, EntryKind};
    #[derive(Deserialize)]
    struct FlatEntry {
        attempt: u32,
        step: u32,
        at_ms: u64,
        kind: EntryKind,
        detail: String,
        ok: bool,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum AnyVersion {
        Attempts(Vec<AttemptTimeline>),
        Flat(Vec<FlatEntry>),
    }
    Ok(match AnyVersion::deserialize(deserializer)? {
        AnyVersion::Attempts(attempts) => attempts,
        AnyVersion::Flat(entries) => AttemptTimeline::from_flat(entries.into_iter().map(|e| {
            (
                e.attempt,
                e.step,
                Action::new(e.at_ms, e.kind, e.detail, e.ok),
            )
        })),
    })
}

#[cfg(test)]
mod names_tests {
    use super::*;
    use strum::VariantArray;

    #[test]
    fn the_report_s_names_are_serde_s() {
        for &v in JobOutcome::VARIANTS {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str(), "{v:?}");
            assert_eq!(v.to_string(), v.as_str());
        }
        for &v in CheckResult::VARIANTS {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str(), "{v:?}");
        }
        for &v in crate::state::JobState::VARIANTS {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str(), "{v:?}");
        }
    }
}
