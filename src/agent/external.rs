//! An external agent's attempt (leashed mode): its model calls and its
//! tool calls, as the model bridge passes them on, served one at a time on
//! the runner's thread through the same two seams as the runtime's own
//! loop. A model call is admitted and charged by the meter (one that
//! offers the gateway's tools is a step; any other is a side request of the
//! agent's own, charged but not a step); a tool call is a decision for the
//! hands, its observation the tool's result, a refusal a tool error. The
//! attempt ends when `finish` is accepted, a limit runs out, or the agent
//! exits; the agent is then stopped (its whole tree) and its exit awaited.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::agent_loop::{AgentError, AgentResult, AgentRun, Step, failed};
use super::commands::verify;
use super::hands::{Acted, Hands};
use super::meter::Meter;
use super::transcript::Transcript;
use crate::cancel::CancelToken;
use crate::decision::{KINDS, parse_decision};
use crate::protocol::{
    AgentMode, Conversation, FailureKind, Outcome, Reply, TranscriptLine, VerifyTrigger,
};
use crate::provider::ConverseTurn;

/// How an answer gets back to the request waiting for it.
pub(crate) type Answer<T> = Box<dyn FnOnce(T) + Send>;

/// What the bridge passes on, in the order it arrives.
pub(crate) enum Ask {
    /// A model call: the conversation (the gateway's tools under their
    /// plain names); answered with the reply, or the message of an error
    /// the agent is to see.
    Model {
        conversation: Conversation,
        answer: Answer<Result<Reply, String>>,
    },
    /// A call of one of the gateway's tools.
    Tool {
        name: String,
        input: Value,
        answer: Answer<ToolAnswer>,
    },
    /// A contained agent's driver says the agent has stopped and waits:
    /// answered with verify's output for the agent to go on with, or
    /// `None` for it to end.
    Stopped { answer: Answer<Option<String>> },
    /// The agent's process ended.
    Exited(AgentExit),
}

impl std::fmt::Debug for Ask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ask::Model { .. } => f.write_str("Ask::Model"),
            Ask::Tool { name, .. } => write!(f, "Ask::Tool({name})"),
            Ask::Stopped { .. } => f.write_str("Ask::Stopped"),
            Ask::Exited(exit) => write!(f, "Ask::Exited({exit:?})"),
        }
    }
}

/// A tool call's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolAnswer {
    pub(crate) text: String,
    /// The call was refused (or the attempt has ended).
    pub(crate) error: bool,
}

/// How the agent's process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AgentExit {
    /// Why it could not be started, when it was not.
    pub(crate) not_started: Option<String>,
    /// A sandbox layer its leash needs is missing on this machine.
    pub(crate) sandbox_unavailable: bool,
    pub(crate) code: Option<i32>,
    pub(crate) signal: Option<i32>,
    /// The last lines it wrote to stderr.
    pub(crate) stderr_tail: String,
    /// What it wrote to stdout (bounded): where an agent names its session.
    pub(crate) stdout: String,
}

/// Time an agent is given to end on its own after an accepted `finish`.
pub(crate) const FINISH_GRACE: Duration = Duration::from_secs(5);

/// How an external agent's attempt (or round) ended.
#[derive(Debug)]
pub(crate) struct ExternalEnd {
    pub(crate) result: AgentResult,
    /// Contained: the agent stopped on its own and the forced verify
    /// failed with this output, which a next round tells it.
    pub(crate) verify_failed: Option<String>,
    /// How long the agent's process ran, every round's (set by the runner).
    pub(crate) agent_ms: u64,
}

impl ExternalEnd {
    fn of(result: AgentResult) -> ExternalEnd {
        ExternalEnd {
            result,
            verify_failed: None,
            agent_ms: 0,
        }
    }
}

/// Serves `asks` until the attempt ends and the agent's process is gone.
/// `rounds`: the forced-verify rounds left to a contained agent, spent
/// here when its driver asks before it ends ([`Ask::Stopped`]).
pub(crate) fn serve_agent(
    run: &mut AgentRun<'_>,
    mode: AgentMode,
    stop_agent: &CancelToken,
    asks: &Receiver<Ask>,
    rounds: &mut u32,
) -> Result<ExternalEnd, AgentError> {
    let (limits, cancel, attempt) = (run.limits, run.cancel, run.attempt);
    let meter = Meter {
        limits,
        budget: run.budget,
        cancel,
    };
    let provider = &mut *run.provider;
    let recorder = &mut *run.recorder;
    let mut hands = Hands::new(
        run.workspace,
        &mut *run.commands,
        &run.facts.verify,
        limits.observation_cap,
        limits.deadline,
        cancel,
    );
    hands.guard = match &mut run.guard {
        Some(guard) => Some(&mut **guard),
        None => None,
    };
    let transcript = run.transcript.as_deref_mut();
    let mut served = Served {
        transcript,
        pending: None,
        invalid_streak: 0,
        ending: None,
        stopped: false,
    };
    loop {
        if let Some((_, stop_at)) = &served.ending
            && !served.stopped
            && Instant::now() >= *stop_at
        {
            stop_agent.cancel();
            served.stopped = true;
        }
        if served.ending.is_none()
            && let Some(end) = hands.stopped(recorder.used().steps)
        {
            served.end(end, Duration::ZERO);
        }
        let ask = match asks.recv_timeout(Duration::from_millis(50)) {
            Ok(ask) => ask,
            Err(RecvTimeoutError::Timeout) => continue,
            // Nobody can ask anything any more: as if the agent exited.
            Err(RecvTimeoutError::Disconnected) => Ask::Exited(AgentExit::default()),
        };
        match ask {
            Ask::Exited(exit) => {
                let steps = recorder.used().steps;
                served.flush(None);
                if let Some((end, _)) = served.ending.take() {
                    return Ok(ExternalEnd::of(end));
                }
                // Contained, an agent that stops on its own is verified:
                // the runtime runs verify, and a failure is told back.
                if mode == AgentMode::Contained && exit.code == Some(0) {
                    return Ok(
                        match verify(&mut hands, recorder, steps, VerifyTrigger::Finish)? {
                            Step::Next((true, _)) => ExternalEnd::of(succeeded(steps)),
                            Step::Next((false, text)) => ExternalEnd {
                                result: failed(FailureKind::VerifyFailed, steps),
                                verify_failed: Some(text),
                                agent_ms: 0,
                            },
                            Step::End(end) => ExternalEnd::of(end),
                        },
                    );
                }
                return Ok(ExternalEnd::of(exit_result(&exit, steps)));
            }
            // Contained, a driver that asks before its agent ends: verify
            // now, and a failure goes back while rounds are left.
            Ask::Stopped { answer } => {
                if served.ending.is_some() || mode != AgentMode::Contained {
                    answer(None);
                    continue;
                }
                let steps = recorder.used().steps;
                match verify(&mut hands, recorder, steps, VerifyTrigger::Finish)? {
                    Step::Next((true, _)) => {
                        answer(None);
                        served.end(succeeded(steps), FINISH_GRACE);
                    }
                    Step::Next((false, text)) if *rounds > 0 => {
                        *rounds -= 1;
                        answer(Some(verify_failed_message(&text)));
                    }
                    Step::Next((false, _)) => {
                        answer(None);
                        served.end(failed(FailureKind::VerifyFailed, steps), FINISH_GRACE);
                    }
                    Step::End(end) => {
                        answer(None);
                        served.end(end, Duration::ZERO);
                    }
                }
            }
            Ask::Model {
                conversation,
                answer,
            } => {
                if let Some(message) = served.ended_message() {
                    answer(Err(message));
                    continue;
                }
                let used = recorder.used();
                // Leashed, a step is a request that offers the gateway's
                // tools; contained, one that offers any tool.
                let side = match mode {
                    AgentMode::Leashed => !offers_gateway(&conversation),
                    AgentMode::Contained => conversation.tools.is_empty(),
                };
                if !side && let Err(end) = meter.admit(used, hands.last_verify_failed()) {
                    answer(Err(ended(&end)));
                    served.end(end, Duration::ZERO);
                    continue;
                }
                let step = if side { used.steps } else { used.steps + 1 };
                let turn = ConverseTurn { attempt, side };
                match meter.converse(
                    recorder,
                    provider,
                    &conversation,
                    turn,
                    step,
                    hands.last_verify_failed(),
                )? {
                    Step::Next(reply) => {
                        if !side {
                            served.flush(Some(Pending {
                                step,
                                reply: shown(&reply),
                                observations: Vec::new(),
                                input_tokens: reply.input_tokens,
                                output_tokens: reply.output_tokens,
                            }));
                        }
                        answer(Ok(reply));
                    }
                    Step::End(end) => {
                        answer(Err(format!(
                            "agent-runtime: the model call failed ({})",
                            end.failure_kind.map_or("ended", FailureKind::as_str)
                        )));
                        served.end(end, Duration::ZERO);
                    }
                }
            }
            Ask::Tool {
                name,
                input,
                answer,
            } => {
                if let Some(message) = served.ended_message() {
                    answer(ToolAnswer {
                        text: message,
                        error: true,
                    });
                    continue;
                }
                let step = recorder.used().steps;
                let acted =
                    hands.decide(recorder, step, parse_decision(&call_text(&name, input)))?;
                match acted {
                    Acted::Observe {
                        observation,
                        invalid,
                    } => {
                        let error = invalid.is_some();
                        served.observe(&observation);
                        answer(ToolAnswer {
                            text: observation,
                            error,
                        });
                        served.invalid_streak = if error { served.invalid_streak + 1 } else { 0 };
                        if served.invalid_streak >= limits.max_invalid {
                            served.end(failed(FailureKind::InvalidDecisions, step), Duration::ZERO);
                        }
                    }
                    Acted::End(end) => {
                        let accepted = end.outcome == Outcome::Succeeded;
                        let text = if accepted {
                            "finish accepted: the attempt is over".to_string()
                        } else {
                            ended(&end)
                        };
                        served.observe(&text);
                        answer(ToolAnswer {
                            text,
                            error: !accepted,
                        });
                        let grace = if accepted {
                            FINISH_GRACE
                        } else {
                            Duration::ZERO
                        };
                        served.end(end, grace);
                    }
                }
            }
        }
    }
}

/// A contained agent's attempt that ends with its verify passing.
fn succeeded(steps: u32) -> AgentResult {
    AgentResult {
        outcome: Outcome::Succeeded,
        failure_kind: None,
        steps,
        summary: None,
        infra: None,
        cause: None,
    }
}

/// What a contained agent is told when the forced verify fails.
pub(crate) fn verify_failed_message(output: &str) -> String {
    format!("The runtime ran the verify command and it failed:\n{output}\nFix it, then stop.")
}

/// What the serving loop keeps between requests.
struct Served<'a> {
    transcript: Option<&'a mut Transcript>,
    /// The last step's reply, its tool results gathered until the next.
    pending: Option<Pending>,
    invalid_streak: u32,
    /// How the attempt ends, and when the agent is stopped if it has not
    /// exited by then.
    ending: Option<(AgentResult, Instant)>,
    stopped: bool,
}

struct Pending {
    step: u32,
    reply: String,
    observations: Vec<String>,
    input_tokens: u64,
    output_tokens: u64,
}

impl Served<'_> {
    fn end(&mut self, end: AgentResult, grace: Duration) {
        if self.ending.is_none() {
            self.ending = Some((end, Instant::now() + grace));
        }
    }

    fn ended_message(&self) -> Option<String> {
        self.ending.as_ref().map(|(end, _)| ended(end))
    }

    fn observe(&mut self, observation: &str) {
        if let Some(pending) = &mut self.pending {
            pending.observations.push(observation.to_string());
        }
    }

    /// Writes the pending step to the transcript, and keeps `next`.
    fn flush(&mut self, next: Option<Pending>) {
        if let (Some(pending), Some(transcript)) = (self.pending.take(), self.transcript.as_mut()) {
            let observation =
                (!pending.observations.is_empty()).then(|| pending.observations.join("\n\n"));
            // A diagnostic artifact: failing to write it must not fail the
            // attempt.
            let _ = transcript.write(TranscriptLine {
                step: pending.step,
                reply: pending.reply,
                observation,
                input_tokens: pending.input_tokens,
                output_tokens: pending.output_tokens,
            });
        }
        self.pending = next;
    }
}

/// What the agent is told of a call made once the attempt has ended.
fn ended(end: &AgentResult) -> String {
    format!(
        "agent-runtime: the attempt has ended ({})",
        end.failure_kind
            .map_or("finish accepted", FailureKind::as_str)
    )
}

/// Whether a model request offers any of the gateway's tools (named by
/// the bridge with their plain names, the decision kinds).
pub(crate) fn offers_gateway(conversation: &Conversation) -> bool {
    conversation
        .tools
        .iter()
        .any(|tool| KINDS.iter().any(|spec| spec.kind == tool.name))
}

/// A tool call as the decision text the parser reads: the tool's name is
/// the kind, its input the fields.
fn call_text(name: &str, input: Value) -> String {
    match input {
        Value::Object(mut fields) => {
            fields.insert("kind".to_string(), Value::String(name.to_string()));
            Value::Object(fields).to_string()
        }
        Value::Null => serde_json::json!({ "kind": name }).to_string(),
        other => serde_json::json!({ "kind": name, "input": other }).to_string(),
    }
}

/// A reply as the transcript shows it: its text, then each call.
fn shown(reply: &Reply) -> String {
    let mut parts = Vec::new();
    if !reply.text.is_empty() {
        parts.push(reply.text.clone());
    }
    for call in &reply.calls {
        parts.push(serde_json::json!({ "tool": call.name, "input": call.input }).to_string());
    }
    parts.join("\n")
}

/// How an attempt ends when its agent's sandbox cannot be made.
pub(crate) fn unavailable_sandbox() -> AgentResult {
    failed(FailureKind::SandboxUnavailable, 0)
}

/// How an attempt ends when its agent exits before anything ended it.
fn exit_result(exit: &AgentExit, steps: u32) -> AgentResult {
    if exit.sandbox_unavailable {
        return failed(FailureKind::SandboxUnavailable, steps);
    }
    if let Some(why) = &exit.not_started {
        return AgentResult {
            infra: Some(format!("the agent could not be started: {why}")),
            ..failed(FailureKind::AgentError, steps)
        };
    }
    let kind = if exit.code == Some(0) {
        FailureKind::NoFinish
    } else {
        FailureKind::AgentError
    };
    let status = match (exit.code, exit.signal) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "an unknown status".to_string(),
    };
    let mut cause = format!("the agent ended with {status} before finish");
    if !exit.stderr_tail.trim().is_empty() {
        cause.push_str(": ");
        cause.push_str(exit.stderr_tail.trim());
    }
    AgentResult {
        cause: Some(super::cause::cap_to(&cause, 400)),
        ..failed(kind, steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_is_the_decision_of_its_name() {
        let text = call_text("read_file", serde_json::json!({"path": "src/lib.rs"}));
        let decision = parse_decision(&text).unwrap();
        assert_eq!(decision.logged_kind().to_string(), "read_file");
        assert!(parse_decision(&call_text("verify", Value::Null)).is_ok());
        // Arguments that are not an object are refused by the parser, not
        // taken apart here.
        assert!(parse_decision(&call_text("read_file", Value::from(3))).is_err());
    }

    #[test]
    fn an_exit_before_any_end_is_no_finish_or_the_agent_s_error() {
        let clean = AgentExit {
            code: Some(0),
            ..AgentExit::default()
        };
        assert_eq!(
            exit_result(&clean, 2).failure_kind,
            Some(FailureKind::NoFinish)
        );
        let crashed = AgentExit {
            code: Some(1),
            ..AgentExit::default()
        };
        assert_eq!(
            exit_result(&crashed, 2).failure_kind,
            Some(FailureKind::AgentError)
        );
        let unstarted = AgentExit {
            not_started: Some("no such file".into()),
            ..AgentExit::default()
        };
        assert!(exit_result(&unstarted, 0).infra.is_some());
    }
}
