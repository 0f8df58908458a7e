//! What every export shows of a job instance: its report row (with the
//! manifest's `[metadata]`), its task prompt, the model it ran under, and
//! each attempt's timeline — the one the report and the viewer read, its
//! texts whole: per step the provider call the log recorded, what the step
//! did in the log's words, and, with `trace = "full"`, the model's reply
//! and the observation it got. Pure: the caller hands in the detail fold's
//! entries and the transcripts.

use crate::decision::parse_decision;
use crate::protocol::{AttemptTimeline, ModelStep, ProviderConfig, Trace, TranscriptLine};
use crate::report::{JobResult, Texts, attempt_timelines};
use crate::state::{Entry, Job};

/// One job instance, ready to export.
#[derive(Debug, Clone)]
pub(crate) struct JobTrace<'a> {
    pub row: &'a JobResult,
    /// The task prompt (part of the manifest snapshot).
    pub prompt: String,
    /// The name of what answered: the sweep's provider, else the
    /// manifest provider's model (or its kind).
    pub model: String,
    /// Whether the job kept a transcript (`trace = "full"`).
    pub full: bool,
    /// The attempts under the current manifest, in order, with their
    /// texts whole.
    pub attempts: Vec<AttemptTimeline>,
}

/// The decision's own fields (`path`, `content`, `program`...), from the
/// step's reply: only with a full trace, and only for a valid decision.
pub(crate) fn arguments(step: &ModelStep) -> serde_json::Map<String, serde_json::Value> {
    let parsed = step
        .reply
        .as_deref()
        .and_then(|reply| parse_decision(reply).ok())
        .and_then(|d| serde_json::to_value(d).ok());
    match parsed {
        Some(serde_json::Value::Object(mut fields)) => {
            fields.remove("kind");
            fields
        }
        _ => serde_json::Map::new(),
    }
}

/// The name a job's model goes by in the exports.
pub(crate) fn model_label(job: &Job) -> String {
    let manifest = job.manifest.as_deref().and_then(|m| m.manifest());
    match (&job.provider, manifest.and_then(|m| m.provider.as_ref())) {
        (Some(provider), _) => provider.clone(),
        (None, Some(ProviderConfig::Openai(c))) => c.model.clone(),
        (None, Some(ProviderConfig::Anthropic(c))) => c.model.clone(),
        (None, Some(ProviderConfig::Command(c))) => {
            c.model.clone().unwrap_or_else(|| c.program.clone())
        }
        (None, Some(other)) => other.kind().as_str().to_string(),
        (None, None) => "none".to_string(),
    }
}

/// The name of the log `job`'s runs go in: its model's, and an external
/// agent's runs in a log of their own beside the runtime's on the same
/// model (`<model>+<agent>`).
pub(crate) fn log_label(job: &Job) -> String {
    let model = model_label(job);
    let manifest = job.manifest.as_deref().and_then(|m| m.manifest());
    match manifest.and_then(|m| m.agent.as_ref()) {
        Some(agent) => format!("{model}+{}", agent.name),
        None => model,
    }
}

/// The trace of `job`, whose report row is `row`, from its detail
/// timeline and `transcript(n)` (attempt `n`'s transcript, when kept).
pub(crate) fn job_trace<'a>(
    row: &'a JobResult,
    job: &Job,
    timeline: &[Entry],
    transcript: &dyn Fn(u32) -> Option<Vec<TranscriptLine>>,
) -> JobTrace<'a> {
    let manifest = job.manifest.as_deref().and_then(|m| m.manifest());
    let full = manifest.is_some_and(|m| m.trace == Trace::Full);
    let kept = |n: u32| if full { transcript(n) } else { None };
    let mut attempts: Vec<AttemptTimeline> = Vec::new();
    for segment in attempt_timelines(job, timeline, &kept, Texts::Whole) {
        if !job.attempts.iter().any(|a| a.number == segment.attempt) {
            continue;
        }
        // An attempt cut in two by lines of no attempt is one attempt.
        match attempts.iter_mut().find(|a| a.attempt == segment.attempt) {
            Some(earlier) => {
                earlier.ended_ms = segment.ended_ms;
                earlier.moments.extend(segment.moments);
            }
            None => attempts.push(segment),
        }
    }
    JobTrace {
        row,
        prompt: manifest.map(|m| m.prompt.clone()).unwrap_or_default(),
        model: model_label(job),
        full,
        attempts,
    }
}
