//! Harbor's Agent Trajectory Interchange Format (ATIF v1.4): one JSON
//! trajectory per attempt. Step 1 is the task prompt (`source: "user"`);
//! each provider call is an `agent` step with the decision as its one tool
//! call (`function_name` the decision kind), what came back as its
//! observation, and its tokens, cached tokens and cost as its metrics; a
//! call that failed is a `system` step. With `trace = "metadata"` (the
//! default) the model's messages were never kept: an agent step's
//! `message` is empty, its tool call has no arguments, its `extra` holds
//! the reply's size and hash, and its observation is what the log says the
//! step did (commands with their exit codes, edits with their sizes,
//! verify). Pure: the trajectory as a JSON value.

use serde_json::{Value, json};

use super::trace::{JobTrace, arguments};
use crate::protocol::{AttemptTimeline, ModelStep};
use crate::report::iso8601;

/// The ATIF version written.
pub(crate) const ATIF_VERSION: &str = "ATIF-v1.4";

/// What `notes` says of an attempt without a transcript.
const METADATA_NOTE: &str = "trace = \"metadata\": the model's messages were not kept; each agent step carries the decision's kind (the tool call's function_name), the reply's size and hash (extra), its tokens, and what the log recorded of the step as its observation";

/// The trajectory of `attempt` of `job`.
pub(crate) fn trajectory(job: &JobTrace<'_>, attempt: &AttemptTimeline) -> Value {
    let row = job.row;
    let mut steps = vec![json!({
        "step_id": 1,
        "timestamp": iso8601(attempt.started_ms),
        "source": "user",
        "message": job.prompt,
    })];
    for (i, step) in attempt.steps().enumerate() {
        steps.push(step_value(job, attempt, step, i + 2));
    }
    let (mut prompt, mut completion, mut cached, mut cost) = (0u64, 0u64, 0u64, None::<f64>);
    for step in attempt.steps() {
        if let Some(call) = &step.call {
            prompt = prompt.saturating_add(call.input_tokens);
            completion = completion.saturating_add(call.output_tokens);
            cached = cached.saturating_add(call.cached_input_tokens);
        }
        if let Some(c) = step.cost_usd {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
    }
    let outcome = attempt.outcome.map(|o| o.as_str());
    let failure_kind = attempt.failure_kind.map(|k| k.as_str());
    let mut final_metrics = json!({
        "total_prompt_tokens": prompt,
        "total_completion_tokens": completion,
        "total_cached_tokens": cached,
        "total_steps": steps.len(),
        "extra": { "outcome": outcome, "failure_kind": failure_kind },
    });
    if let Some(cost) = cost {
        final_metrics["total_cost_usd"] = json!(cost);
    }
    let mut value = json!({
        "schema_version": ATIF_VERSION,
        "session_id": format!("{}/{}", row.instance, attempt.attempt),
        "agent": match &row.agent {
            // An external agent, on the runtime's leash.
            Some(agent) => json!({
                "name": agent.name,
                "version": agent.version,
                "model_name": job.model,
                "extra": {
                    "trace": if job.full { "full" } else { "metadata" },
                    "mode": agent.mode.as_str(),
                    "harness": format!("agent-runtime {}", env!("CARGO_PKG_VERSION")),
                },
            }),
            None => json!({
                "name": "agent-runtime",
                "version": env!("CARGO_PKG_VERSION"),
                "model_name": job.model,
                "extra": { "trace": if job.full { "full" } else { "metadata" } },
            }),
        },
        "steps": steps,
        "final_metrics": final_metrics,
        "extra": {
            "instance": row.instance,
            "job": row.job,
            "family": row.family,
            "provider": row.provider,
            "repeat": row.repeat,
            "attempt": attempt.attempt,
            "outcome": outcome,
            "failure_kind": failure_kind,
            "task": job.row.metadata,
        },
    });
    if !job.full {
        value["notes"] = json!(METADATA_NOTE);
    }
    // The report row's excerpt is the last attempt's.
    let last = job.attempts.last().map(|a| a.attempt) == Some(attempt.attempt);
    if let Some(text) = row.harness_output.as_ref().filter(|_| last) {
        value["extra"]["harness_output"] = json!(text);
    }
    value
}

fn step_value(job: &JobTrace<'_>, attempt: &AttemptTimeline, step: &ModelStep, id: usize) -> Value {
    let timestamp = iso8601(step.ts_ms);
    let Some(call) = &step.call else {
        return json!({
            "step_id": id,
            "timestamp": timestamp,
            "source": "system",
            "message": step.observed(),
            "extra": { "step": step.step, "kind": step.kind_name() },
        });
    };
    let call_id = format!("a{}-s{}", attempt.attempt, step.step);
    let mut metrics = json!({
        "prompt_tokens": call.input_tokens,
        "completion_tokens": call.output_tokens,
        "cached_tokens": call.cached_input_tokens,
        "extra": { "latency_ms": call.latency_ms },
    });
    if let Some(cost) = step.cost_usd {
        metrics["cost_usd"] = json!(cost);
    }
    let mut value = json!({
        "step_id": id,
        "timestamp": timestamp,
        "source": "agent",
        "model_name": job.model,
        "message": step.reply.clone().unwrap_or_default(),
        "observation": { "results": [{ "content": step.observed() }] },
        "metrics": metrics,
        "extra": {
            "step": step.step,
            "kind": call.kind.as_str(),
            "reply_bytes": call.reply_bytes,
            "reply_hash": call.reply_hash,
        },
    });
    if call.reason.is_none() {
        value["tool_calls"] = json!([{
            "tool_call_id": call_id,
            "function_name": call.kind.as_str(),
            "arguments": arguments(step),
        }]);
        value["observation"]["results"][0]["source_call_id"] = json!(call_id);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::DecisionKind;
    use crate::protocol::{Action, EntryKind, ModelCall, Moment};
    use crate::report::JobResult;

    #[test]
    fn a_metadata_attempt_has_the_documented_keys_and_no_messages() {
        let row = JobResult::new("j@p", "j", "fam");
        let line = |kind, text: &str| Action::new(0, kind, text, true);
        let step = ModelStep {
            step: 1,
            at_ms: 1_000,
            ts_ms: 2_000,
            headline: "step 1: write_file src/lib.rs".into(),
            kind: EntryKind::WriteFile,
            fields: None,
            diff: None,
            actions: vec![
                line(EntryKind::WriteFile, "step 1: write_file src/lib.rs"),
                line(EntryKind::Edit, "edit src/lib.rs (12 bytes)"),
            ],
            call: Some(ModelCall {
                kind: DecisionKind::WriteFile,
                reason: None,
                reply_bytes: 42,
                reply_hash: "abc".into(),
                input_tokens: 100,
                cached_input_tokens: 40,
                output_tokens: 7,
                latency_ms: 3,
            }),
            cost_usd: Some(0.5),
            reply: None,
            observation: None,
        };
        let attempt = AttemptTimeline {
            attempt: 1,
            started_ms: 1_000,
            ended_ms: 3_000,
            outcome: None,
            failure_kind: None,
            moments: vec![Moment::Step(step)],
        };
        let job = JobTrace {
            row: &row,
            prompt: "Fix it.".into(),
            model: "p".into(),
            full: false,
            attempts: vec![attempt.clone()],
        };
        let t = trajectory(&job, &attempt);
        for key in [
            "schema_version",
            "session_id",
            "agent",
            "steps",
            "final_metrics",
            "notes",
        ] {
            assert!(t.get(key).is_some(), "{key}");
        }
        assert_eq!(t["schema_version"], "ATIF-v1.4");
        let agent = &t["steps"][1];
        for key in [
            "step_id",
            "source",
            "message",
            "tool_calls",
            "observation",
            "metrics",
        ] {
            assert!(agent.get(key).is_some(), "{key}");
        }
        assert_eq!(agent["message"], "");
        assert_eq!(agent["tool_calls"][0]["function_name"], "write_file");
        assert_eq!(agent["tool_calls"][0]["arguments"], json!({}));
        assert_eq!(
            agent["observation"]["results"][0]["content"],
            "edit src/lib.rs (12 bytes)"
        );
        assert_eq!(agent["metrics"]["cached_tokens"], 40);
        assert_eq!(t["final_metrics"]["total_prompt_tokens"], 100);
        assert_eq!(t["final_metrics"]["total_cost_usd"], 0.5);
        assert_eq!(t["final_metrics"]["total_steps"], 2);
    }
}
