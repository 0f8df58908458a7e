//! The reducer's handlers of the phases of an attempt: setup, the
//! baseline, the end of the agent phase, the patch (or its rejection) and
//! acceptance. Each phase is recorded once per attempt (the baseline once
//! per job); each handler checks everything before it changes anything.

use super::attempt::{AgentEnd, Patch, Phase};
use super::job::{Baseline, Job};
use super::reducer::{At, Illegal};
use crate::protocol::{
    BaselineOrigin, CanaryBaseline, CanaryCheck, CheckResult, FailureKind, Inventory, Outcome,
    Signal, TwinBaseline, TwinCheck, Verdict,
};

/// `setup`: the job's trusted `[setup]` ran or was reused, in the shared
/// cache it names (kept from `gc` while the job is in the log).
pub(super) fn setup(
    job: &mut Job,
    at: &At<'_>,
    cause: Option<&String>,
    cache: Option<&String>,
) -> Result<(), Illegal> {
    at.open_attempt(job)?;
    job.setup_cause = cause.cloned();
    if let Some(key) = cache {
        job.caches.insert(key.clone());
    }
    Ok(())
}

/// What a `baseline` event says.
pub(super) struct BaselineEvent<'e> {
    pub result: CheckResult,
    pub inventory: Option<&'e Inventory>,
    pub reason: Option<&'e String>,
    pub timed_out: &'e [String],
    pub canary: Option<&'e CanaryBaseline>,
    pub twins: Option<&'e TwinBaseline>,
    pub key: Option<&'e String>,
    pub reused_from: Option<&'e BaselineOrigin>,
}

/// `baseline`: the pristine source judged, with its test inventory, by
/// this attempt's commands or reused from an earlier baseline with the
/// same key.
pub(super) fn baseline(
    job: &mut Job,
    at: &At<'_>,
    event: BaselineEvent<'_>,
) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if event.result == CheckResult::Error {
        // A broken harness is what the job fails for.
        attempt.causes.last = event.reason.cloned();
    }
    let origin = event
        .reused_from
        .cloned()
        .unwrap_or_else(|| BaselineOrigin {
            job: at.id.to_string(),
            attempt: attempt.number,
        });
    job.baseline = Some(Baseline {
        result: event.result,
        inventory: event.inventory.cloned(),
        reason: event.reason.cloned(),
        timed_out: event.timed_out.to_vec(),
        canary: event.canary.cloned(),
        twins: event.twins.cloned(),
        key: event.key.cloned(),
        origin,
        reused: event.reused_from.is_some(),
    });
    Ok(())
}

/// `agent_finished`: the agent phase ended; later phases never rerun it.
pub(super) fn agent_finished(
    job: &mut Job,
    at: &At<'_>,
    outcome: Outcome,
    failure_kind: Option<FailureKind>,
    steps: u32,
    integrity: &[Signal],
) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if attempt.phase.agent_done() {
        return Err(at.phase_twice(attempt.number, "agent"));
    }
    attempt.phase = Phase::Patch {
        agent: AgentEnd {
            outcome,
            failure_kind,
        },
    };
    attempt.steps = attempt.steps.max(steps);
    attempt.integrity.add(integrity.iter().cloned());
    Ok(())
}

/// `patch`: the agent's patch and the runner's copy of it were saved.
pub(super) fn patch(
    job: &mut Job,
    at: &At<'_>,
    patch: Patch,
    integrity: &[Signal],
) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if matches!(attempt.phase, Phase::Rejected | Phase::Judged { .. }) {
        return Err(at.phase_twice(attempt.number, "patch"));
    }
    attempt.phase = Phase::Acceptance;
    attempt.patch = Some(patch);
    attempt.integrity.add(integrity.iter().cloned());
    Ok(())
}

/// `patch_rejected`: the patch cannot be carried; a recorded patch may
/// still be rejected by acceptance (what it holds cannot be laid on the
/// clean copy), once, before it is judged.
pub(super) fn patch_rejected(job: &mut Job, at: &At<'_>, reason: &str) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if matches!(attempt.phase, Phase::Rejected | Phase::Judged { .. }) {
        return Err(at.phase_twice(attempt.number, "patch"));
    }
    attempt.phase = Phase::Rejected;
    attempt.causes.last = Some(reason.to_string());
    attempt.causes.patch = Some(reason.to_string());
    Ok(())
}

/// `acceptance`: the patch judged on a clean copy, once.
pub(super) fn acceptance(
    job: &mut Job,
    at: &At<'_>,
    result: CheckResult,
    verdict: Option<&Verdict>,
    canary: Option<&CanaryCheck>,
    twins: Option<&TwinCheck>,
    integrity: &[Signal],
) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if matches!(attempt.phase, Phase::Rejected | Phase::Judged { .. }) {
        return Err(at.phase_twice(attempt.number, "acceptance"));
    }
    attempt.phase = Phase::Judged {
        result,
        verdict: verdict.cloned(),
    };
    attempt.integrity.add(integrity.iter().cloned());
    attempt.integrity.forged.clear();
    if let Some(canary) = canary {
        attempt.integrity.canaries = u32::try_from(canary.planted.len()).unwrap_or(u32::MAX);
        attempt.integrity.forged.clone_from(&canary.forged);
    }
    if let Some(twins) = twins {
        attempt.integrity.twins = twins.planted;
        attempt
            .integrity
            .forged
            .extend(twins.forged.iter().cloned());
    }
    Ok(())
}
