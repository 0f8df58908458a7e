//! Inspect AI's log (`.eval`, log format version 2): a zip of
//! `header.json` (the eval's spec, plan, results and stats),
//! `summaries.json` (one summary per sample) and `samples/<id>_epoch_<n>.json`
//! (each sample whole). One log per family and model: a sample per job
//! instance, its id the job and its epoch the repeat; its messages the
//! task prompt, then per step the model's reply (with the decision as a
//! tool call) and what came back; its score `C` (succeeded) or `I`
//! (failed), with the patch as the answer. A failure of the
//! infrastructure, a cancelled or an unfinished job is a sample with an
//! `error` and no score, as Inspect records samples that could not be
//! scored, so they stay out of the accuracy. Pure: the members as bytes,
//! handed one at a time to whoever writes the zip.

use serde_json::{Map, Value, json};

use super::trace::{JobTrace, arguments};
use crate::protocol::{AttemptTimeline, ModelStep};
use crate::report::{JobOutcome, JobResult, iso8601};

/// The scorer's name in the log.
const SCORER: &str = "acceptance";

/// Takes one member of a log, `(name, bytes)`.
pub(crate) type Put<'a, E> = dyn FnMut(&str, &[u8]) -> Result<(), E> + 'a;

/// One log in the making: each sample is handed to `put` as it is
/// added, then [`EvalLog::finish`] writes `summaries.json` and
/// `header.json` (the order Inspect itself writes them). Only the
/// summaries and the header's figures are kept, so a sweep of thousands
/// never holds its samples, or their traces, in memory together.
#[derive(Debug, Default)]
pub(crate) struct EvalLog {
    /// The summaries as the JSON array they end up in, kept as text.
    summaries: Vec<u8>,
    /// The header's figures over the samples added so far.
    stats: HeaderStats,
}

impl EvalLog {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds `job`'s sample, putting it as `samples/<id>_epoch_<n>.json`.
    pub(crate) fn add<E>(&mut self, job: &JobTrace<'_>, put: &mut Put<'_, E>) -> Result<(), E> {
        let sample = sample(job);
        self.summaries.push(if self.summaries.is_empty() {
            b'['
        } else {
            b','
        });
        self.summaries
            .extend(bytes(&summary(&sample, job.row.outcome.is_terminal())));
        self.stats.count(job.row);
        let name = format!("samples/{}_epoch_{}.json", job.row.job, epoch(job.row));
        put(&name, &bytes(&sample))
    }

    /// Puts `summaries.json` and `header.json`. `family` and `model`
    /// name the log; `generated_ms` dates a log whose jobs never started.
    pub(crate) fn finish<E>(
        mut self,
        family: &str,
        model: &str,
        generated_ms: u64,
        put: &mut Put<'_, E>,
    ) -> Result<(), E> {
        if self.summaries.is_empty() {
            self.summaries.push(b'[');
        }
        self.summaries.push(b']');
        put("summaries.json", &self.summaries)?;
        put(
            "header.json",
            &bytes(&header(family, model, &self.stats, generated_ms)),
        )
    }
}

fn bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

fn epoch(row: &JobResult) -> u32 {
    row.repeat.unwrap_or(1).max(1)
}

/// `C`, `I`, or no score (and why, as the sample's error).
fn scored(row: &JobResult) -> Result<&'static str, Unscored> {
    match (row.outcome, row.failure_kind) {
        (JobOutcome::Succeeded, _) => Ok("C"),
        (JobOutcome::Failed, Some(kind)) if kind.is_infrastructure() => {
            Err(Unscored::Infrastructure {
                kind,
                cause: row
                    .cause
                    .clone()
                    .unwrap_or_else(|| "not the model's doing".to_string()),
            })
        }
        (JobOutcome::Failed, _) => Ok("I"),
        (JobOutcome::Cancelled, _) => Err(Unscored::Cancelled),
        (JobOutcome::Pending, _) => Err(Unscored::Pending),
    }
}

/// Why a sample has no score.
#[derive(Debug, thiserror::Error)]
enum Unscored {
    #[error("{kind}: {cause}")]
    Infrastructure {
        kind: crate::protocol::FailureKind,
        cause: String,
    },
    #[error("cancelled")]
    Cancelled,
    #[error("not finished")]
    Pending,
}

fn sample(job: &JobTrace<'_>) -> Value {
    let row = job.row;
    let messages = messages(job);
    let mut sample = Map::new();
    sample.insert("id".into(), json!(row.job));
    sample.insert("epoch".into(), json!(epoch(row)));
    sample.insert("input".into(), json!(job.prompt));
    sample.insert("target".into(), json!(""));
    sample.insert("metadata".into(), metadata(job));
    sample.insert("model_usage".into(), usage(job));
    if let (Some(start), Some(end)) = (row.started_ms, row.ended_ms) {
        sample.insert("started_at".into(), json!(iso8601(start)));
        sample.insert("completed_at".into(), json!(iso8601(end)));
    }
    sample.insert("total_time".into(), json!(row.wall_ms as f64 / 1000.0));
    sample.insert(
        "working_time".into(),
        json!(row.wall_ms.saturating_sub(row.time.wait_ms) as f64 / 1000.0),
    );
    match scored(row) {
        Ok(value) => {
            let mut explanation = match (row.failure_kind, &row.cause) {
                (None, _) => "accepted by the hidden tests".to_string(),
                (Some(kind), Some(cause)) => format!("{kind}: {cause}"),
                (Some(kind), None) => kind.to_string(),
            };
            if let Some(text) = &row.harness_output {
                explanation.push_str("\n\n");
                explanation.push_str(text);
            }
            let mut score = json!({
                "value": value,
                "explanation": explanation,
                "metadata": {
                    "acceptance": row.acceptance.as_str(),
                    "baseline": row.baseline.as_str(),
                    "f2p_passed": row.tests.f2p_passed,
                    "f2p_total": row.tests.f2p_total,
                    "p2p_passed": row.tests.p2p_passed,
                    "p2p_total": row.tests.p2p_total,
                },
                "history": [],
            });
            if let Some(patch) = &row.patch {
                score["answer"] = json!(patch);
            }
            sample.insert("scores".into(), json!({ SCORER: score }));
        }
        Err(why) => {
            sample.insert(
                "error".into(),
                json!({ "message": why.to_string(), "traceback": "", "traceback_ansi": "" }),
            );
        }
    }
    sample.insert(
        "output".into(),
        json!({ "model": job.model, "choices": [], "completion": row.patch.clone().unwrap_or_default() }),
    );
    sample.insert("messages".into(), Value::from(messages));
    sample.insert(
        "events".into(),
        Value::from(super::inspect_events::events(job)),
    );
    sample.insert("store".into(), json!({}));
    sample.insert("attachments".into(), json!({}));
    Value::Object(sample)
}

/// A sample's summary: the sample less its messages, output and events;
/// `completed` when its job has finished.
fn summary(sample: &Value, completed: bool) -> Value {
    let mut summary = Map::new();
    for key in [
        "id",
        "epoch",
        "input",
        "target",
        "metadata",
        "scores",
        "model_usage",
        "started_at",
        "completed_at",
        "total_time",
        "working_time",
    ] {
        if let Some(value) = sample.get(key) {
            summary.insert(key.into(), value.clone());
        }
    }
    if let Some(error) = sample.get("error") {
        summary.insert("error".into(), error["message"].clone());
    }
    let count = sample["messages"].as_array().map_or(0, Vec::len);
    summary.insert("message_count".into(), json!(count));
    summary.insert("completed".into(), json!(completed));
    Value::Object(summary)
}

/// The sample's facts beyond its score: the report row's figures and the
/// manifest's `[metadata]`.
fn metadata(job: &JobTrace<'_>) -> Value {
    let row = job.row;
    let mut meta = json!({
        "instance": row.instance,
        "job": row.job,
        "family": row.family,
        "provider": row.provider,
        "repeat": row.repeat,
        "outcome": row.outcome.as_str(),
        "failure_kind": row.failure_kind.map(|k| k.as_str()),
        "cause": row.cause,
        "harness_output": row.harness_output,
        "attempts": row.attempts,
        "steps": row.steps,
        "invalid_decisions": row.invalid_decisions,
        "patch_bytes": row.patch_bytes,
        "trace": if job.full { "full" } else { "metadata" },
    });
    if !job.row.metadata.is_empty() {
        meta["task"] = json!(job.row.metadata);
    }
    meta
}

fn usage(job: &JobTrace<'_>) -> Value {
    let row = job.row;
    let mut usage = json!({
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "total_tokens": row.input_tokens.saturating_add(row.output_tokens),
    });
    if let Some(cost) = row.cost_usd {
        usage["total_cost"] = json!(cost);
    }
    json!({ job.model.clone(): usage })
}

/// The conversation: the prompt, then each step's reply and what came
/// back, attempt after attempt (each starts afresh from the prompt).
fn messages(job: &JobTrace<'_>) -> Vec<Value> {
    let mut out = Vec::new();
    for attempt in &job.attempts {
        let id = |what: &str| format!("a{}-{what}", attempt.attempt);
        out.push(json!({
            "id": id("prompt"),
            "role": "user",
            "content": job.prompt,
            "source": "input",
            "metadata": { "attempt": attempt.attempt },
        }));
        for step in attempt.steps() {
            out.extend(step_messages(job, attempt, step));
        }
    }
    out
}

/// A step's messages: the reply and what came back to it.
pub(super) fn step_messages(
    job: &JobTrace<'_>,
    attempt: &AttemptTimeline,
    step: &ModelStep,
) -> Vec<Value> {
    let call_id = format!("a{}-s{}", attempt.attempt, step.step);
    let Some(call) = &step.call else {
        // The provider never answered: what the log says, as the runtime's.
        return vec![json!({
            "id": format!("{call_id}-error"),
            "role": "user",
            "content": step.observed(),
            "metadata": { "attempt": attempt.attempt, "step": step.step },
        })];
    };
    let meta = json!({
        "attempt": attempt.attempt,
        "step": step.step,
        "kind": call.kind.as_str(),
        "reply_bytes": call.reply_bytes,
        "latency_ms": call.latency_ms,
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
    });
    let mut assistant = json!({
        "id": format!("{call_id}-reply"),
        "role": "assistant",
        "content": step.reply.clone().unwrap_or_default(),
        "source": "generate",
        "model": job.model,
        "metadata": meta,
    });
    if call.reason.is_some() {
        // A refused reply calls nothing; the refusal comes back to it.
        return vec![
            assistant,
            json!({
                "id": format!("{call_id}-refused"),
                "role": "user",
                "content": step.observed(),
            }),
        ];
    }
    assistant["tool_calls"] = json!([{
        "id": call_id,
        "function": call.kind.as_str(),
        "arguments": arguments(step),
        "type": "function",
    }]);
    vec![
        assistant,
        json!({
            "id": format!("{call_id}-result"),
            "role": "tool",
            "content": step.observed(),
            "tool_call_id": call_id,
            "function": call.kind.as_str(),
        }),
    ]
}

/// What the header says of a log's samples, counted as they are added.
#[derive(Debug, Default)]
struct HeaderStats {
    started: Option<u64>,
    ended: Option<u64>,
    total: usize,
    scored: usize,
    correct: usize,
    finished: bool,
    input: u64,
    output: u64,
    epochs: u32,
    /// The job ids in order, a job's repeats once.
    ids: Vec<String>,
}

impl HeaderStats {
    fn count(&mut self, row: &JobResult) {
        self.started = self.started.into_iter().chain(row.started_ms).min();
        self.ended = self.ended.into_iter().chain(row.ended_ms).max();
        self.finished = (self.total == 0 || self.finished) && row.outcome.is_terminal();
        self.total += 1;
        if let Ok(value) = scored(row) {
            self.scored += 1;
            self.correct += usize::from(value == "C");
        }
        self.input = self.input.saturating_add(row.input_tokens);
        self.output = self.output.saturating_add(row.output_tokens);
        self.epochs = self.epochs.max(epoch(row));
        if self.ids.last() != Some(&row.job) {
            self.ids.push(row.job.clone());
        }
    }
}

fn header(family: &str, model: &str, stats: &HeaderStats, generated_ms: u64) -> Value {
    let HeaderStats {
        started,
        ended,
        total,
        scored: n,
        correct,
        input,
        output,
        ..
    } = *stats;
    let finished = stats.finished || total == 0;
    let accuracy = if n == 0 {
        0.0
    } else {
        correct as f64 / n as f64
    };
    // The standard error of the mean of 0/1 scores, as Inspect's `stderr`.
    let stderr = if n > 1 {
        (accuracy * (1.0 - accuracy) / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let ids = &stats.ids;
    let id_text = format!("{family}@{model}\n{}", ids.join("\n"));
    let eval_id = crate::hash::short_hash(id_text.as_bytes());
    let epochs = stats.epochs.max(1);
    let created = iso8601(started.unwrap_or(generated_ms));
    json!({
        "version": 2,
        "status": if finished { "success" } else { "started" },
        "eval": {
            "eval_id": eval_id,
            "run_id": eval_id,
            "created": created,
            "task": family,
            "task_id": family,
            "task_version": 0,
            "task_attribs": {},
            "task_args": {},
            "task_args_passed": {},
            "solver": "agent-runtime",
            "dataset": { "name": family, "samples": ids.len(), "sample_ids": ids },
            "model": model,
            "model_generate_config": {},
            "model_args": {},
            "config": { "epochs": epochs },
            "packages": { "agent-runtime": env!("CARGO_PKG_VERSION") },
        },
        "plan": {
            "name": "plan",
            "steps": [{ "solver": "agent-runtime", "params": {} }],
            "config": {},
        },
        "results": {
            "total_samples": total,
            "completed_samples": n,
            "scores": [{
                "name": SCORER,
                "scorer": SCORER,
                "scored_samples": n,
                "unscored_samples": total - n,
                "params": {},
                "metrics": {
                    "accuracy": { "name": "accuracy", "value": accuracy, "params": {} },
                    "stderr": { "name": "stderr", "value": stderr, "params": {} },
                },
            }],
        },
        "stats": {
            "started_at": started.map(iso8601).unwrap_or_default(),
            "completed_at": ended.filter(|_| finished).map(iso8601).unwrap_or_default(),
            "model_usage": { model: {
                "input_tokens": input,
                "output_tokens": output,
                "total_tokens": input.saturating_add(output),
            }},
        },
        "invalidated": false,
        "tags": [],
        "metadata": {},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(job: &str, outcome: JobOutcome) -> JobResult {
        let mut row = JobResult::new(&format!("{job}@p"), job, "fam");
        row.outcome = outcome;
        row.provider = Some("p".into());
        row.input_tokens = 10;
        row.output_tokens = 5;
        row
    }

    fn trace(row: &JobResult) -> JobTrace<'_> {
        JobTrace {
            row,
            prompt: "Fix it.".into(),
            model: "p".into(),
            full: false,
            attempts: Vec::new(),
        }
    }

    #[test]
    fn one_sample_per_job_with_its_score_and_the_accuracy_in_the_header() {
        let succeeded = row("a", JobOutcome::Succeeded);
        let mut failed = row("b", JobOutcome::Failed);
        failed.failure_kind = Some(crate::protocol::FailureKind::VerifyFailed);
        let mut broken = row("c", JobOutcome::Pending);
        broken.failure_kind = Some(crate::protocol::FailureKind::InfraError);
        let jobs = [trace(&succeeded), trace(&failed), trace(&broken)];
        let mut members: Vec<(String, Vec<u8>)> = Vec::new();
        let mut put = |name: &str, bytes: &[u8]| {
            members.push((name.to_string(), bytes.to_vec()));
            Ok::<(), ()>(())
        };
        let mut log = EvalLog::new();
        for job in &jobs {
            log.add(job, &mut put).unwrap();
        }
        log.finish("fam", "p", 0, &mut put).unwrap();
        let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "samples/a_epoch_1.json",
                "samples/b_epoch_1.json",
                "samples/c_epoch_1.json",
                "summaries.json",
                "header.json",
            ]
        );
        let header: Value = serde_json::from_slice(&members[4].1).unwrap();
        assert_eq!(header["results"]["completed_samples"], 2);
        assert_eq!(
            header["results"]["scores"][0]["metrics"]["accuracy"]["value"],
            0.5
        );
        let c: Value = serde_json::from_slice(&members[2].1).unwrap();
        assert!(c.get("scores").is_none());
        assert_eq!(c["error"]["message"], "not finished");
        let summaries: Value = serde_json::from_slice(&members[3].1).unwrap();
        assert_eq!(summaries[0]["scores"]["acceptance"]["value"], "C");
        assert_eq!(summaries[1]["scores"]["acceptance"]["value"], "I");
        assert_eq!(summaries[2]["completed"], false);
    }
}
