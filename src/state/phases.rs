//! The reducer's handlers of the phases of an attempt: setup, the
//! baseline, the end of the agent phase, the patch (or its rejection) and
//! acceptance. Each phase is recorded once per attempt (the baseline once
//! per job); each handler checks everything before it changes anything.

use super::attempt::{AgentEnd, Patch, Phase};
use super::job::{Baseline, Job};
use super::reducer::{At, Illegal};
use crate::protocol::{
    AcceptanceRecord, AgentFinishedRecord, BaselineOrigin, BaselineRecord, CheckResult,
    PatchRecord, SetupRecord,
};

/// `setup`: the job's trusted `[setup]` ran or was reused, in the shared
/// cache it names (kept from `gc` while the job is in the log).
pub(super) fn setup(job: &mut Job, at: &At<'_>, event: &SetupRecord) -> Result<(), Illegal> {
    at.open_attempt(job)?;
    job.setup_cause = event.cause.clone();
    if let Some(key) = &event.cache {
        job.caches.insert(key.clone());
    }
    Ok(())
}

/// `baseline`: the pristine source judged, with its test inventory, by
/// this attempt's commands or reused from an earlier baseline with the
/// same key.
pub(super) fn baseline(job: &mut Job, at: &At<'_>, event: &BaselineRecord) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if event.result == CheckResult::Error {
        // A broken harness is what the job fails for.
        attempt.causes.last = event.reason.clone();
    }
    let origin = event.reused_from.clone().unwrap_or_else(|| BaselineOrigin {
        job: at.id.to_string(),
        attempt: attempt.number,
    });
    job.baseline = Some(Baseline {
        result: event.result,
        inventory: event.inventory.clone(),
        reason: event.reason.clone(),
        timed_out: event.timed_out.clone(),
        canary: event.canary.clone(),
        twins: event.twins.clone(),
        key: event.key.clone(),
        origin,
        reused: event.reused_from.is_some(),
    });
    Ok(())
}

/// `agent_finished`: the agent phase ended; later phases never rerun it.
pub(super) fn agent_finished(
    job: &mut Job,
    at: &At<'_>,
    event: &AgentFinishedRecord,
) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if attempt.phase.agent_done() {
        return Err(at.phase_twice(attempt.number, "agent"));
    }
    attempt.phase = Phase::Patch {
        agent: AgentEnd {
            outcome: event.outcome,
            failure_kind: event.failure_kind,
        },
    };
    attempt.steps = attempt.steps.max(event.steps);
    attempt.integrity.add(event.integrity.iter().cloned());
    attempt.integrity.stray_files = event
        .stray_files
        .iter()
        .take(crate::protocol::SIGNALS_KEPT)
        .cloned()
        .collect();
    if let Some(cause) = &event.cause {
        attempt.causes.agent = Some(cause.clone());
    }
    Ok(())
}

/// `patch`: the agent's patch and the runner's copy of it were saved.
pub(super) fn patch(job: &mut Job, at: &At<'_>, event: &PatchRecord) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if matches!(attempt.phase, Phase::Rejected | Phase::Judged { .. }) {
        return Err(at.phase_twice(attempt.number, "patch"));
    }
    attempt.phase = Phase::Acceptance;
    attempt.patch = Some(Patch {
        bytes: event.bytes,
        files: event.files,
        files_hash: event.files_hash.clone(),
    });
    attempt.integrity.add(event.integrity.iter().cloned());
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
    event: &AcceptanceRecord,
) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if matches!(attempt.phase, Phase::Rejected | Phase::Judged { .. }) {
        return Err(at.phase_twice(attempt.number, "acceptance"));
    }
    attempt.phase = Phase::Judged {
        result: event.result,
        verdict: event.verdict.clone(),
    };
    attempt.integrity.add(event.integrity.iter().cloned());
    attempt.causes.acceptance.clone_from(&event.cause);
    attempt.integrity.forged.clear();
    if let Some(canary) = &event.canary {
        attempt.integrity.canaries = u32::try_from(canary.planted.len()).unwrap_or(u32::MAX);
        attempt.integrity.forged.clone_from(&canary.forged);
    }
    if let Some(twins) = &event.twins {
        attempt.integrity.twins = twins.planted;
        attempt
            .integrity
            .forged
            .extend(twins.forged.iter().cloned());
    }
    Ok(())
}
