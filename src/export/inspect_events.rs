//! A sample's `events`, as `inspect view`'s Transcript tab shows them: per
//! step, a `ModelEvent` (the messages the model had been sent in its
//! attempt, its reply, tokens and latency; a provider that failed gives
//! one with its `error`) and, for a decision the runtime carried out, a
//! `ToolEvent` (the decision's kind as the function, its fields as the
//! arguments, the observation as the result). Built from the same
//! messages as the sample's `messages`, so the two never disagree.

use serde_json::{Value, json};

use super::inspect::step_messages;
use super::trace::{JobTrace, arguments};
use crate::protocol::{AttemptTimeline, ModelStep};
use crate::report::iso8601;

/// Every attempt's events, in order.
pub(super) fn events(job: &JobTrace<'_>) -> Vec<Value> {
    let start = job.row.started_ms.unwrap_or_default();
    let mut out = Vec::new();
    for attempt in &job.attempts {
        let mut sent = vec![json!({
            "id": format!("a{}-prompt", attempt.attempt),
            "role": "user",
            "content": job.prompt,
            "source": "input",
        })];
        for step in attempt.steps() {
            let messages = step_messages(job, attempt, step);
            out.push(model_event(job, attempt, step, &sent, &messages, start));
            if let Some(tool) = tool_event(attempt, step, &messages, start) {
                out.push(tool);
            }
            sent.extend(messages);
        }
    }
    out
}

/// Seconds from the sample's start to `ms`.
fn since(start: u64, ms: u64) -> f64 {
    ms.saturating_sub(start) as f64 / 1000.0
}

fn model_event(
    job: &JobTrace<'_>,
    attempt: &AttemptTimeline,
    step: &ModelStep,
    sent: &[Value],
    messages: &[Value],
    start: u64,
) -> Value {
    let mut event = json!({
        "event": "model",
        "timestamp": iso8601(step.ts_ms),
        "working_start": since(start, step.ts_ms),
        "model": job.model,
        "input": sent,
        "tools": [],
        "tool_choice": "auto",
        "config": {},
        "metadata": { "attempt": attempt.attempt, "step": step.step },
    });
    let Some(call) = &step.call else {
        event["output"] = json!({ "model": job.model, "choices": [] });
        event["error"] = json!(step.observed());
        return event;
    };
    let reply = messages.first().cloned().unwrap_or_else(|| json!({}));
    let stop = if reply.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    let mut usage = json!({
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
        "total_tokens": call.input_tokens.saturating_add(call.output_tokens),
    });
    if let Some(cost) = step.cost_usd {
        usage["total_cost"] = json!(cost);
    }
    let seconds = call.latency_ms as f64 / 1000.0;
    event["output"] = json!({
        "model": job.model,
        "choices": [{ "message": reply, "stop_reason": stop }],
        "usage": usage,
        "time": seconds,
    });
    event["working_time"] = json!(seconds);
    event
}

/// The decision the runtime carried out, when it did (a refused reply
/// calls nothing).
fn tool_event(
    attempt: &AttemptTimeline,
    step: &ModelStep,
    messages: &[Value],
    start: u64,
) -> Option<Value> {
    let call = step.call.as_ref().filter(|c| c.reason.is_none())?;
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    Some(json!({
        "event": "tool",
        "timestamp": iso8601(step.ts_ms),
        "working_start": since(start, step.ts_ms),
        "type": "function",
        "id": format!("a{}-s{}", attempt.attempt, step.step),
        "function": call.kind.as_str(),
        "arguments": arguments(step),
        "result": result,
        "events": [],
        "metadata": { "attempt": attempt.attempt, "step": step.step },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::DecisionKind;
    use crate::protocol::{Action, EntryKind, ModelCall, Moment};
    use crate::report::JobResult;

    fn step(n: u32, reason: Option<&str>, call: bool) -> Moment {
        let line = |kind, text: String| Action::new(0, kind, text, true);
        let headline = format!("step {n}: run_tool");
        let mut actions = vec![line(EntryKind::Command, format!("said {n}"))];
        if call {
            actions.insert(0, line(EntryKind::RunTool, headline.clone()));
        }
        Moment::Step(ModelStep {
            step: n,
            at_ms: 0,
            ts_ms: 1_000 + u64::from(n) * 1_000,
            headline,
            kind: EntryKind::RunTool,
            fields: None,
            diff: None,
            actions,
            call: call.then(|| ModelCall {
                kind: DecisionKind::RunTool,
                reason: reason.map(String::from),
                reply_bytes: 10,
                reply_hash: "h".into(),
                input_tokens: 100,
                cached_input_tokens: 0,
                output_tokens: 5,
                latency_ms: 1_500,
            }),
            cost_usd: None,
            reply: None,
            observation: None,
        })
    }

    #[test]
    fn each_step_is_a_model_event_and_each_decision_carried_out_a_tool_event() {
        let mut row = JobResult::new("j", "j", "fam");
        row.started_ms = Some(1_000);
        let job = JobTrace {
            row: &row,
            prompt: "Fix it.".into(),
            model: "m".into(),
            full: false,
            attempts: vec![AttemptTimeline {
                attempt: 1,
                started_ms: 1_000,
                ended_ms: 5_000,
                outcome: None,
                failure_kind: None,
                moments: vec![
                    step(1, None, true),
                    step(2, Some("not allowed"), true),
                    step(3, None, false),
                ],
            }],
        };
        let events = events(&job);
        let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
        assert_eq!(kinds, ["model", "tool", "model", "model"]);
        // The first call was sent the prompt; the second also the first
        // step's reply and result.
        assert_eq!(events[0]["input"].as_array().map(Vec::len), Some(1));
        assert_eq!(events[2]["input"].as_array().map(Vec::len), Some(3));
        assert_eq!(events[0]["output"]["stop_reason"], Value::Null);
        assert_eq!(
            events[0]["output"]["choices"][0]["stop_reason"],
            "tool_calls"
        );
        assert_eq!(events[0]["working_time"], 1.5);
        assert_eq!(events[0]["working_start"], 1.0);
        assert_eq!(events[1]["function"], "run_tool");
        assert_eq!(events[1]["result"], "said 1");
        // A refused reply calls nothing; a failed call has its error.
        assert_eq!(events[2]["output"]["choices"][0]["stop_reason"], "stop");
        assert_eq!(events[3]["error"], "said 3");
        assert_eq!(events[3]["output"]["choices"], json!([]));
    }
}
