//! The reducer's handlers of the phases of an attempt: setup, the
//! baseline, the end of the agent phase, the patch (or its rejection) and
//! acceptance. Each phase is recorded once per attempt (the baseline once
//! per job); each handler checks everything before it changes anything.

use super::attempt::{AgentEnd, Patch, Phase};
use super::job::{Baseline, Job};
use super::reducer::{At, Illegal};
use crate::protocol::{
    CanaryBaseline, CanaryCheck, CheckResult, FailureKind, Inventory, Outcome, Signal, Verdict,
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

/// `baseline`: the pristine source judged, with its test inventory.
pub(super) fn baseline(
    job: &mut Job,
    at: &At<'_>,
    result: CheckResult,
    inventory: Option<&Inventory>,
    reason: Option<&String>,
    canary: Option<&CanaryBaseline>,
) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if result == CheckResult::Error {
        // A broken harness is what the job fails for.
        attempt.causes.last = reason.cloned();
    }
    job.baseline = Some(Baseline {
        result,
        inventory: inventory.cloned(),
        reason: reason.cloned(),
        canary: canary.cloned(),
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
    if let Some(canary) = canary {
        attempt.integrity.canaries = u32::try_from(canary.planted.len()).unwrap_or(u32::MAX);
        attempt.integrity.forged.clone_from(&canary.forged);
    }
    Ok(())
}
