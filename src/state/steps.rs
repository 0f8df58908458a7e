//! The reducer's handlers of what happens inside an agent phase: provider
//! calls and their decisions, retries and failures, commands, edits and
//! verifies. They need the attempt to be open; each checks that before it
//! changes anything.

use super::job::{Job, Waiting};
use super::reducer::{At, Illegal};
use crate::protocol::{
    CallFigures, CommandFor, CommandRecord, DecisionKind, DecisionRecord, ProviderFailedRecord,
    ProviderRetryRecord, VerifyRecord, add_usd,
};

/// `model_call`: one model call of the agent phase; its tokens, latency
/// and cost are the attempt's and the job's.
pub(super) fn model_call(
    job: &mut Job,
    at: &At<'_>,
    step: u32,
    call: &CallFigures,
) -> Result<(), Illegal> {
    let price = job.price;
    let attempt = at.open_attempt(job)?;
    attempt.tokens = attempt
        .tokens
        .saturating_add(call.input_tokens)
        .saturating_add(call.output_tokens);
    attempt.steps = attempt.steps.max(step);
    attempt.last_call = Some(call.clone());
    let usage = &mut job.usage;
    usage.provider_calls = usage.provider_calls.saturating_add(1);
    // Sums saturate: a log of an older version (or a hand-made one) may
    // hold any count.
    usage.input_tokens = usage.input_tokens.saturating_add(call.input_tokens);
    usage.output_tokens = usage.output_tokens.saturating_add(call.output_tokens);
    usage.latency_ms = usage.latency_ms.saturating_add(call.latency_ms);
    if let Some(price) = price {
        job.cost_usd = add_usd(
            job.cost_usd,
            price.cost(
                call.input_tokens,
                call.cached_input_tokens,
                call.output_tokens,
            ),
        );
    }
    Ok(())
}

/// `decision`: what was asked at `step` (or why the reply was refused).
/// A format 2 decision carries its model call too, which counts first.
pub(super) fn decision(job: &mut Job, at: &At<'_>, event: &DecisionRecord) -> Result<(), Illegal> {
    let DecisionRecord {
        step,
        kind,
        reason,
        call,
        ..
    } = event;
    let (step, kind) = (*step, *kind);
    if let Some(call) = call {
        model_call(job, at, step, call)?;
    }
    let attempt = at.open_attempt(job)?;
    attempt.steps = attempt.steps.max(step);
    if kind == DecisionKind::Invalid {
        attempt.invalid_decisions += 1;
    }
    attempt.last_action = Some(kind);
    if let Some(reason) = reason {
        let refusal = format!("refused: {reason}");
        attempt.causes.last = Some(refusal.clone());
        attempt.causes.refusal = Some(refusal);
    }
    let invalid = kind == DecisionKind::Invalid;
    job.usage.invalid_decisions = job
        .usage
        .invalid_decisions
        .saturating_add(u32::from(invalid));
    Ok(())
}

/// `provider_retry`: a provider call failed transiently; the job waits for
/// its provider.
pub(super) fn provider_retry(
    job: &mut Job,
    at: &At<'_>,
    event: &ProviderRetryRecord,
) -> Result<(), Illegal> {
    let ProviderRetryRecord {
        retry,
        reason,
        wait_ms,
        ..
    } = event;
    let (retry, wait_ms) = (*retry, *wait_ms);
    at.open_attempt(job)?;
    job.usage.time.wait_ms = job.usage.time.wait_ms.saturating_add(wait_ms);
    let since_ms = job.waiting.as_ref().map_or(at.record.ts_ms, |w| w.since_ms);
    job.waiting = Some(Waiting {
        reason: reason.to_string(),
        retries: retry,
        since_ms,
    });
    Ok(())
}

/// `provider_failed`: a provider call failed for good (billed tokens of an
/// unusable reply cost all the same).
pub(super) fn provider_failed(
    job: &mut Job,
    at: &At<'_>,
    event: &ProviderFailedRecord,
) -> Result<(), Illegal> {
    let ProviderFailedRecord {
        step,
        message,
        input_tokens,
        output_tokens,
    } = event;
    let (step, input_tokens, output_tokens) = (*step, *input_tokens, *output_tokens);
    let price = job.price;
    let attempt = at.open_attempt(job)?;
    // A failed provider call is a step too, as the agent counts.
    attempt.steps = attempt.steps.max(step);
    attempt.causes.last = Some(message.to_string());
    attempt.causes.provider = Some(message.to_string());
    if let Some(price) = price {
        job.cost_usd = add_usd(job.cost_usd, price.cost(input_tokens, 0, output_tokens));
    }
    Ok(())
}

/// `verify`: the verify command's verdict.
pub(super) fn verify(job: &mut Job, at: &At<'_>, event: &VerifyRecord) -> Result<(), Illegal> {
    let attempt = at.open_attempt(job)?;
    if let Some(cause) = &event.cause {
        attempt.causes.last = Some(cause.clone());
        attempt.causes.verify = Some(cause.clone());
    }
    Ok(())
}

/// `command`: a command ran; its time counts where it belongs, and what
/// it cost the machine joins the job's figures.
pub(super) fn command(job: &mut Job, at: &At<'_>, event: &CommandRecord) -> Result<(), Illegal> {
    let CommandRecord {
        role,
        duration_ms,
        resources,
        ..
    } = event;
    let (role, duration_ms, resources) = (*role, *duration_ms, resources.as_ref());
    at.open_attempt(job)?;
    if let Some(used) = resources {
        job.usage.resources.add(used);
    }
    let time = &mut job.usage.time;
    let spent = match role {
        CommandFor::Tool => &mut time.tool_ms,
        CommandFor::Verify => &mut time.verify_ms,
        CommandFor::Setup => &mut time.setup_ms,
        CommandFor::Baseline | CommandFor::Acceptance => &mut time.acceptance_ms,
    };
    *spent = spent.saturating_add(duration_ms);
    Ok(())
}

/// `edit`: a fact of the open attempt that changes no state.
pub(super) fn in_attempt(job: &mut Job, at: &At<'_>) -> Result<(), Illegal> {
    at.open_attempt(job).map(|_| ())
}
