//! What every export shows of a job instance: its report row (with the
//! manifest's `[metadata]`), its task prompt, the model it ran under, and each attempt's
//! steps — the provider call the log recorded, what the step did in the
//! log's words, and, with `trace = "full"`, the model's reply and the
//! observation it got from the transcript. Pure: the caller hands in the
//! detail fold's timeline and the transcripts.

use crate::decision::parse_decision;
use crate::protocol::TranscriptLine;
use crate::protocol::{FailureKind, Outcome, Price, ProviderConfig, Trace};
use crate::report::JobResult;
use crate::state::{Call, Entry, Job};

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
    /// The attempts under the current manifest, in order.
    pub attempts: Vec<AttemptTrace>,
}

/// One attempt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttemptTrace {
    pub number: u32,
    /// When its first and last events were recorded (ms since the epoch).
    pub started_ms: u64,
    pub ended_ms: u64,
    /// How it ended, once it did.
    pub end: Option<(Outcome, Option<FailureKind>)>,
    pub steps: Vec<StepTrace>,
}

/// One step of an attempt: a provider call and what followed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepTrace {
    pub step: u32,
    pub ts_ms: u64,
    /// The call as its `decision` event recorded it; `None` for a step
    /// whose provider call failed (no decision).
    pub call: Option<Call>,
    /// What the call cost at the job's price.
    pub cost_usd: Option<f64>,
    /// The log's words for the rest of the step (provider retries or its
    /// failure, commands, edits, verify), one line each, in order.
    pub said: Vec<String>,
    /// With a full trace: the model's reply, as sent.
    pub reply: Option<String>,
    /// With a full trace: the observation the model got back.
    pub observation: Option<String>,
}

impl StepTrace {
    /// The decision kind (`invalid` for a refused reply, `provider_error`
    /// for a failed call).
    pub(crate) fn kind(&self) -> &'static str {
        self.call
            .as_ref()
            .map_or("provider_error", |c| c.kind.as_str())
    }

    /// The decision's own fields (`path`, `content`, `program`...), from
    /// the reply: only with a full trace, and only for a valid decision.
    pub(crate) fn arguments(&self) -> serde_json::Map<String, serde_json::Value> {
        let parsed = self
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

    /// What the step's observation holds in the export: the transcript's
    /// observation, else the refusal of an invalid reply and the log's
    /// words for the rest of the step.
    pub(crate) fn observed(&self) -> String {
        if let Some(text) = &self.observation {
            return text.clone();
        }
        let refusal = self.call.as_ref().and_then(|c| c.reason.clone());
        refusal
            .into_iter()
            .chain(self.said.iter().cloned())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The name a job's model goes by in the exports.
pub(crate) fn model_label(job: &Job) -> String {
    if let Some(provider) = &job.provider {
        return provider.clone();
    }
    let manifest = job.manifest.as_deref().and_then(|m| m.manifest());
    match manifest.and_then(|m| m.provider.as_ref()) {
        Some(ProviderConfig::Openai(c)) => c.model.clone(),
        Some(ProviderConfig::Anthropic(c)) => c.model.clone(),
        Some(ProviderConfig::Command(c)) => c.model.clone().unwrap_or_else(|| c.program.clone()),
        Some(other) => other.kind().as_str().to_string(),
        None => "none".to_string(),
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
    let attempts = job
        .attempts
        .iter()
        .map(|attempt| {
            let entries: Vec<&Entry> = timeline
                .iter()
                .filter(|e| e.attempt == attempt.number)
                .collect();
            let transcript = if full {
                transcript(attempt.number).unwrap_or_default()
            } else {
                Vec::new()
            };
            AttemptTrace {
                number: attempt.number,
                started_ms: entries.first().map_or(0, |e| e.ts_ms),
                ended_ms: entries.last().map_or(0, |e| e.ts_ms),
                end: attempt.finished(),
                steps: steps_of(&entries, &transcript, job.price.as_ref()),
            }
        })
        .collect();
    JobTrace {
        row,
        prompt: manifest.map(|m| m.prompt.clone()).unwrap_or_default(),
        model: model_label(job),
        full,
        attempts,
    }
}

/// The steps of one attempt's entries: one per step number, holding its
/// decision (if the provider answered) and the rest of what the log says
/// of that step.
fn steps_of(
    entries: &[&Entry],
    transcript: &[TranscriptLine],
    price: Option<&Price>,
) -> Vec<StepTrace> {
    let mut steps: Vec<StepTrace> = Vec::new();
    for entry in entries.iter().filter(|e| e.said.step > 0) {
        let n = entry.said.step;
        if steps.last().is_none_or(|s| s.step != n) {
            let recorded = transcript.iter().find(|t| t.step == n);
            steps.push(StepTrace {
                step: n,
                ts_ms: entry.ts_ms,
                call: None,
                cost_usd: None,
                said: Vec::new(),
                reply: recorded.map(|t| t.reply.clone()),
                observation: recorded.and_then(|t| t.observation.clone()),
            });
        }
        let Some(step) = steps.last_mut() else {
            continue;
        };
        match &entry.call {
            Some(call) => {
                step.ts_ms = entry.ts_ms;
                step.cost_usd = price.map(|p| {
                    p.cost(
                        call.input_tokens,
                        call.cached_input_tokens,
                        call.output_tokens,
                    )
                });
                step.call = Some(Call::clone(call));
            }
            None => step.said.push(entry.said.text.clone()),
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::DecisionKind;
    use crate::state::Said;

    fn entry(step: u32, kind: &'static str, text: &str, call: Option<Call>) -> Entry {
        Entry {
            attempt: 1,
            at_ms: 0,
            ts_ms: 1_000 + u64::from(step),
            said: Said {
                kind: kind.parse().expect("a timeline kind"),
                step,
                text: text.into(),
                ok: true,
            },
            call: call.map(Box::new),
            resources: None,
        }
    }

    fn call(step: u32, kind: DecisionKind) -> Option<Call> {
        Some(Call {
            step,
            kind,
            reason: None,
            reply_bytes: 10,
            reply_hash: "h".into(),
            input_tokens: 100,
            cached_input_tokens: 0,
            output_tokens: 20,
            latency_ms: 5,
        })
    }

    #[test]
    fn each_decision_starts_a_step_and_its_commands_follow_it() {
        let entries = [
            entry(0, "attempt", "attempt 1 started", None),
            entry(
                1,
                "run_tool",
                "step 1: run_tool",
                call(1, DecisionKind::RunTool),
            ),
            entry(1, "command", "tool: cargo (2 args) exit 0", None),
            entry(2, "retry", "provider retry", None),
            entry(2, "finish", "step 2: finish", call(2, DecisionKind::Finish)),
        ];
        let refs: Vec<&Entry> = entries.iter().collect();
        let transcript = [TranscriptLine {
            step: 1,
            reply: r#"{"kind":"run_tool","program":"cargo","args":["test"]}"#.into(),
            observation: Some("exit 0".into()),
            ..TranscriptLine::default()
        }];
        let steps = steps_of(&refs, &transcript, None);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].kind(), "run_tool");
        assert_eq!(steps[0].said, ["tool: cargo (2 args) exit 0"]);
        assert_eq!(steps[0].observed(), "exit 0");
        assert_eq!(steps[0].arguments()["program"], "cargo");
        assert_eq!(steps[1].kind(), "finish");
        assert_eq!(steps[1].said, ["provider retry"]);
        assert!(steps[1].arguments().is_empty());
        assert_eq!(steps[1].observed(), "provider retry");
        let failed = [entry(3, "provider_error", "provider failed", None)];
        let steps = steps_of(&[&failed[0]], &[], None);
        assert_eq!(steps[0].kind(), "provider_error");
        assert_eq!(steps[0].observed(), "provider failed");
    }
}
