//! The agent loop: ask the provider for one decision, check it, execute it
//! through the workspace or the executor, observe, repeat, within the
//! attempt's limits. Verification debt: a successful edit opens it; only the
//! runtime's own verify run (a `verify` decision, or the one a `finish`
//! triggers) closes it.
//!
//! Everything the loop does is reported as events through [`Recorder`]; it
//! never prints and never runs anything except through [`CommandRunner`].

use std::time::Instant;

use super::budget::Budget;
use super::commands::{CommandFailure, describe_command, run_command, verify};
use super::prompt::{PromptFacts, Turn, build_request, cap_text};
use super::transcript::Transcript;
use super::workspace::{PathRefusal, Workspace};
use crate::cancel::CancelToken;
use crate::decision::Decision;
use crate::decision::parse_decision;
use crate::exec::{ExecError, ExecOutcome};
use crate::hash::short_hash;
use crate::protocol::Price;
use crate::protocol::{CommandFor, DecisionKind, Event, FailureKind, Outcome, VerifyTrigger};
use crate::provider::{Provider, ProviderError};

/// Appends events for the attempt being run, and says what they add up
/// to, so the loop keeps no count of its own of what the log counts.
pub trait Recorder {
    fn record(&mut self, event: Event) -> Result<(), RecordError>;

    /// What the agent phase recorded so far used: its steps and tokens,
    /// as the state counts them.
    fn used(&self) -> Used;
}

/// Steps (provider calls, a failed one included) and tokens (input and
/// output, saturating) of the agent phase so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Used {
    pub steps: u32,
    pub tokens: u64,
}

/// What a command is run for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandRole {
    Tool,
    Verify,
}

impl CommandRole {
    pub fn as_str(self) -> &'static str {
        self.logged().as_str()
    }

    /// The role as the log records it.
    pub fn logged(self) -> CommandFor {
        match self {
            CommandRole::Tool => CommandFor::Tool,
            CommandRole::Verify => CommandFor::Verify,
        }
    }
}

/// Runs commands in the attempt's workspace through the executor.
pub trait CommandRunner {
    /// Whether the allow rules let `argv` run, checked before anything is
    /// recorded or spawned (the executor checks again when it runs).
    fn allows(&self, argv: &[String]) -> Result<(), crate::exec::Refusal>;

    fn run(
        &mut self,
        argv: &[String],
        role: CommandRole,
        cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError>;
}

/// Looks at the workspace before each verify runs (the integrity
/// checks: which non-editable files commands changed, and in a
/// verify-only job putting them back), with the step of the verify.
pub trait VerifyGuard {
    fn before_verify(&mut self, step: u32);
}

/// Limits and facts the loop needs besides the prompt facts.
#[derive(Debug, Clone)]
pub struct LoopLimits {
    pub max_steps: u32,
    pub max_invalid: u32,
    pub token_budget: u64,
    pub observation_cap: usize,
    pub context_budget: usize,
    /// When the whole attempt must end.
    pub deadline: Instant,
}

/// How the agent phase ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentResult {
    pub outcome: Outcome,
    pub failure_kind: Option<FailureKind>,
    pub steps: u32,
    pub summary: Option<String>,
    /// The attempt stopped for a fault of the infrastructure (the provider
    /// could not be reached, after its retries), not for anything the model
    /// did: the runner restarts the job without using an attempt.
    pub infra: Option<String>,
}

/// Why a [`Recorder`] could not append an event: its store's error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RecordError(pub Box<dyn std::error::Error + Send + Sync>);

/// The loop could not go on for a reason that is not the model's doing.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("failed to record an event: {0}")]
    Record(#[source] RecordError),
}

/// Everything one agent phase needs.
pub struct AgentRun<'a> {
    pub facts: &'a PromptFacts,
    pub limits: &'a LoopLimits,
    pub workspace: &'a Workspace,
    pub provider: &'a mut dyn Provider,
    pub commands: &'a mut dyn CommandRunner,
    pub recorder: &'a mut dyn Recorder,
    pub cancel: &'a CancelToken,
    pub transcript: Option<&'a mut Transcript>,
    pub attempt: u32,
    /// The batch's spending cap and this job's price, under `--max-cost`.
    pub budget: Option<(&'a Budget, Price)>,
    /// Called before every verify the loop runs.
    pub guard: Option<&'a mut dyn VerifyGuard>,
}

impl std::fmt::Debug for AgentRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRun")
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}

/// What acting on one decision produced.
enum Step {
    /// Continue with this observation; `invalid` carries the refusal reason.
    Observe {
        observation: String,
        invalid: Option<String>,
    },
    /// The attempt ends.
    End(AgentResult),
}

pub(super) struct LoopState {
    pub(super) invalid_streak: u32,
    pub(super) edits: u32,
    pub(super) debt: bool,
    pub(super) last_verify_failed: bool,
}

/// Runs the agent phase to its end.
pub fn run_agent(mut run: AgentRun<'_>) -> Result<AgentResult, AgentError> {
    let mut history: Vec<Turn> = Vec::new();
    let mut st = LoopState {
        invalid_streak: 0,
        edits: 0,
        debt: false,
        last_verify_failed: false,
    };
    let limits = run.limits.clone();
    loop {
        // Steps and tokens so far, as the log records them.
        let used = run.recorder.used();
        if let Some(end) = stopped(&run, used.steps) {
            return Ok(end);
        }
        if used.steps >= limits.max_steps {
            let kind = if st.last_verify_failed {
                FailureKind::VerifyFailed
            } else {
                FailureKind::StepLimit
            };
            return Ok(failed(kind, used.steps));
        }
        // Counts are checked per reply by the provider; the state's sum
        // saturates all the same, so the budget trips instead of wrapping.
        if used.tokens >= limits.token_budget {
            return Ok(failed(FailureKind::TokenBudget, used.steps));
        }
        if run.budget.is_some_and(|(budget, _)| budget.exhausted()) {
            // No new model call once the batch's cap is reached.
            return Ok(failed(FailureKind::BudgetExceeded, used.steps));
        }
        let step = used.steps + 1;
        let request = build_request(run.facts, &history, limits.context_budget, run.attempt);
        // Retries are recorded as each wait begins, so an outage is on
        // record (and in the progress display) while it lasts.
        let mut live = 0usize;
        let mut live_error = None;
        let result = {
            let recorder = &mut *run.recorder;
            let mut watch = |r: &crate::provider::ProviderRetry| {
                live += 1;
                if live_error.is_none() {
                    live_error = recorder.record(retry_event(step, r)).err();
                }
            };
            run.provider
                .complete_watched(&request, run.cancel, &mut watch)
        };
        if let Some(e) = live_error {
            return Err(AgentError::Record(e));
        }
        if let Some((budget, price)) = run.budget {
            let (input, cached, output) = match &result {
                Ok(reply) => (
                    reply.input_tokens,
                    reply.cached_input_tokens,
                    reply.output_tokens,
                ),
                Err(e) => e.billed().map_or((0, 0, 0), |(i, o)| (i, 0, o)),
            };
            budget.charge(&price, input, cached, output);
        }
        let reply = match result {
            Ok(reply) => reply,
            Err(ProviderError::Cancelled) => {
                return Ok(
                    stopped(&run, step).unwrap_or_else(|| failed(FailureKind::Cancelled, step))
                );
            }
            Err(e) => {
                record_retries(&mut run, step, e.retries().get(live..).unwrap_or_default())?;
                record(
                    &mut run,
                    Event::ProviderFailed {
                        step,
                        message: e.to_string(),
                        input_tokens: e.billed().map_or(0, |b| b.0),
                        output_tokens: e.billed().map_or(0, |b| b.1),
                    },
                )?;
                // Precedence: an unreachable provider is the machine's
                // fault; a verify that failed before the provider ran out
                // is the model's; otherwise the provider's.
                if e.is_retryable() {
                    return Ok(AgentResult {
                        infra: Some(e.to_string()),
                        ..failed(FailureKind::ProviderError, step)
                    });
                }
                let kind = if st.last_verify_failed {
                    FailureKind::VerifyFailed
                } else {
                    FailureKind::ProviderError
                };
                return Ok(failed(kind, step));
            }
        };
        record_retries(
            &mut run,
            step,
            reply.retries.get(live..).unwrap_or_default(),
        )?;
        let parsed = parse_decision(&reply.text);
        let kind = match &parsed {
            Ok(d) => d.logged_kind(),
            Err(_) => DecisionKind::Invalid,
        };
        let decision_event = |kind: DecisionKind, reason: Option<String>| Event::Decision {
            step,
            kind,
            reason,
            reply_bytes: reply.text.len() as u64,
            reply_hash: short_hash(reply.text.as_bytes()),
            input_tokens: reply.input_tokens,
            cached_input_tokens: reply.cached_input_tokens,
            output_tokens: reply.output_tokens,
            latency_ms: u64::try_from(reply.latency.as_millis()).unwrap_or(u64::MAX),
        };
        let outcome = match parsed {
            Err(e) => {
                let reason = e.to_string();
                record(&mut run, decision_event(kind, Some(reason.clone())))?;
                Step::Observe {
                    observation: invalid_observation(&reason),
                    invalid: Some(reason),
                }
            }
            Ok(decision) => {
                // Refusals are found before the decision is recorded, so the
                // decision event says whether it was valid.
                match precheck(&run, &decision) {
                    Err(refused) => {
                        let logged = format!("{kind}: {}", refused.logged);
                        record(
                            &mut run,
                            decision_event(DecisionKind::Invalid, Some(logged)),
                        )?;
                        Step::Observe {
                            observation: invalid_observation(&format!(
                                "{kind} refused: {}",
                                refused.observation
                            )),
                            invalid: Some(refused.logged),
                        }
                    }
                    Ok(()) => {
                        record(&mut run, decision_event(kind, None))?;
                        act(&mut run, &mut st, step, decision)?
                    }
                }
            }
        };
        match outcome {
            Step::End(result) => {
                write_transcript(
                    &mut run,
                    step,
                    &reply.text,
                    None,
                    reply.input_tokens,
                    reply.output_tokens,
                );
                return Ok(result);
            }
            Step::Observe {
                observation,
                invalid,
            } => {
                let observation = cap_text(&observation, limits.observation_cap);
                write_transcript(
                    &mut run,
                    step,
                    &reply.text,
                    Some(&observation),
                    reply.input_tokens,
                    reply.output_tokens,
                );
                history.push(Turn {
                    reply: reply.text,
                    observation,
                });
                if invalid.is_some() {
                    st.invalid_streak += 1;
                    if st.invalid_streak >= limits.max_invalid {
                        return Ok(failed(FailureKind::InvalidDecisions, step));
                    }
                } else {
                    st.invalid_streak = 0;
                }
            }
        }
    }
}

pub(super) fn failed(kind: FailureKind, steps: u32) -> AgentResult {
    AgentResult {
        outcome: Outcome::Failed,
        failure_kind: Some(kind),
        steps,
        summary: None,
        infra: None,
    }
}

/// A cancel or the wall deadline ends the attempt.
pub(super) fn stopped(run: &AgentRun<'_>, steps: u32) -> Option<AgentResult> {
    if Instant::now() >= run.limits.deadline {
        return Some(failed(FailureKind::WallTimeout, steps));
    }
    run.cancel
        .is_cancelled()
        .then(|| failed(FailureKind::Cancelled, steps))
}

pub(super) fn record(run: &mut AgentRun<'_>, event: Event) -> Result<(), AgentError> {
    run.recorder.record(event).map_err(AgentError::Record)
}

fn record_retries(
    run: &mut AgentRun<'_>,
    step: u32,
    retries: &[crate::provider::ProviderRetry],
) -> Result<(), AgentError> {
    for r in retries {
        record(run, retry_event(step, r))?;
    }
    Ok(())
}

fn retry_event(step: u32, r: &crate::provider::ProviderRetry) -> Event {
    Event::ProviderRetry {
        step,
        retry: r.attempt,
        reason: r.reason.clone(),
        wait_ms: r.wait_ms,
    }
}

fn invalid_observation(reason: &str) -> String {
    format!(
        "invalid decision: {reason}\nReply with exactly one JSON object that matches the decision schema."
    )
}

/// Why a decision was refused: the text the model sees, and the text the
/// log keeps (which never holds command arguments).
struct Refused {
    observation: String,
    logged: String,
}

impl Refused {
    fn same(text: String) -> Refused {
        Refused {
            observation: text.clone(),
            logged: text,
        }
    }
}

/// Checks that do not touch anything: paths, and commands against the
/// allow rules. A failure makes the decision invalid.
fn precheck(run: &AgentRun<'_>, decision: &Decision) -> Result<(), Refused> {
    let path = |r: Result<(), PathRefusal>| r.map_err(|e| Refused::same(e.to_string()));
    match decision {
        Decision::RunTool { program, args } => {
            let mut argv = vec![program.clone()];
            argv.extend(args.iter().cloned());
            run.commands.allows(&argv).map_err(|e| Refused {
                observation: e.to_string(),
                logged: match e {
                    crate::exec::Refusal::NoMatch { .. } => format!(
                        "`{program}` with {} does not match any allow rule",
                        crate::words::count(args.len(), "argument")
                    ),
                    other => other.to_string(),
                },
            })
        }
        Decision::ReadFile { path: p } | Decision::ListFiles { path: p } => {
            path(run.workspace.check_read(p))
        }
        Decision::WriteFile { path: p, .. } | Decision::ReplaceText { path: p, .. } => {
            path(run.workspace.check_write(p))
        }
        Decision::Verify {} | Decision::Finish { .. } => Ok(()),
    }
}

/// Executes a checked decision.
fn act(
    run: &mut AgentRun<'_>,
    st: &mut LoopState,
    step: u32,
    decision: Decision,
) -> Result<Step, AgentError> {
    let cap = run.limits.observation_cap;
    let refused = |e: PathRefusal| Step::Observe {
        observation: invalid_observation(&e.to_string()),
        invalid: Some(e.to_string()),
    };
    Ok(match decision {
        Decision::ReadFile { path } => match run.workspace.read(&path, cap) {
            Ok(file) => {
                let note = if file.truncated {
                    format!(" (first {} of {} bytes)", file.text.len(), file.total_bytes)
                } else {
                    String::new()
                };
                Step::Observe {
                    observation: format!("{path}{note}:\n{}", file.text),
                    invalid: None,
                }
            }
            Err(
                e @ (PathRefusal::NotFound(_)
                | PathRefusal::IsDirectory(_)
                | PathRefusal::NotRegular { .. }
                | PathRefusal::NotText { .. }),
            ) => Step::Observe {
                observation: format!("read_file failed: {e}"),
                invalid: None,
            },
            Err(e) => refused(e),
        },
        Decision::ListFiles { path } => match run.workspace.list(&path) {
            Ok((files, complete)) => {
                let mut text = files.join("\n");
                if !complete {
                    text.push_str("\n[listing cut short]");
                }
                Step::Observe {
                    observation: format!("files under {path}:\n{text}"),
                    invalid: None,
                }
            }
            Err(e @ (PathRefusal::NotFound(_) | PathRefusal::NotDirectory(_))) => Step::Observe {
                observation: format!("list_files failed: {e}"),
                invalid: None,
            },
            Err(e) => refused(e),
        },
        Decision::WriteFile { path, content } => match run.workspace.write(&path, &content) {
            Ok(edit) => {
                let observation = format!(
                    "wrote {} ({} bytes); verification is now required before finish",
                    edit.path, edit.bytes
                );
                record_edit(run, st, step, edit)?;
                Step::Observe {
                    observation,
                    invalid: None,
                }
            }
            Err(
                e @ (PathRefusal::Io { .. }
                | PathRefusal::NotRegular { .. }
                | PathRefusal::TooLarge { .. }),
            ) => Step::Observe {
                observation: format!("write_file failed: {e}"),
                invalid: None,
            },
            Err(e) => refused(e),
        },
        Decision::ReplaceText {
            path,
            expected,
            replacement,
        } => match run.workspace.replace(&path, &expected, &replacement) {
            Ok(edit) => {
                let observation = format!(
                    "replaced 1 occurrence in {}; verification is now required before finish",
                    edit.path
                );
                record_edit(run, st, step, edit)?;
                Step::Observe {
                    observation,
                    invalid: None,
                }
            }
            Err(
                e @ (PathRefusal::Occurrences { .. }
                | PathRefusal::NotFound(_)
                | PathRefusal::NotText { .. }
                | PathRefusal::NotRegular { .. }
                | PathRefusal::TooLarge { .. }
                | PathRefusal::Io { .. }),
            ) => Step::Observe {
                observation: format!("replace_text failed: {e}"),
                invalid: None,
            },
            Err(e) => refused(e),
        },
        Decision::RunTool { program, args } => {
            let mut argv = vec![program];
            argv.extend(args);
            match run_command(run, step, &argv, CommandRole::Tool)? {
                Ok(out) => Step::Observe {
                    observation: describe_command(&argv, &out),
                    invalid: None,
                },
                Err(CommandFailure::Refused(reason)) => Step::Observe {
                    observation: invalid_observation(&reason),
                    invalid: Some(reason),
                },
                Err(CommandFailure::Fatal(result)) => Step::End(result),
                Err(CommandFailure::Other(message)) => Step::Observe {
                    observation: format!("run_tool failed: {message}"),
                    invalid: None,
                },
            }
        }
        Decision::Verify {} => match verify(run, st, step, VerifyTrigger::Decision)? {
            Ok((true, _)) => Step::Observe {
                observation: "verify passed".into(),
                invalid: None,
            },
            Ok((false, text)) => Step::Observe {
                observation: format!("verify failed:\n{text}"),
                invalid: None,
            },
            Err(result) => Step::End(result),
        },
        Decision::Finish { summary } => {
            if st.edits == 0 {
                return Ok(Step::End(failed(FailureKind::NoEdit, step)));
            }
            if !st.debt {
                return Ok(Step::End(AgentResult {
                    outcome: Outcome::Succeeded,
                    failure_kind: None,
                    steps: step,
                    summary: Some(summary),
                    infra: None,
                }));
            }
            match verify(run, st, step, VerifyTrigger::Finish)? {
                Ok((true, _)) => Step::End(AgentResult {
                    outcome: Outcome::Succeeded,
                    failure_kind: None,
                    steps: step,
                    summary: Some(summary),
                    infra: None,
                }),
                Ok((false, text)) => Step::Observe {
                    observation: format!(
                        "finish refused: the runtime ran verify and it failed:\n{text}"
                    ),
                    invalid: None,
                },
                Err(result) => Step::End(result),
            }
        }
    })
}

fn record_edit(
    run: &mut AgentRun<'_>,
    st: &mut LoopState,
    step: u32,
    edit: super::workspace::EditRecord,
) -> Result<(), AgentError> {
    st.edits += 1;
    st.debt = true;
    record(
        run,
        Event::Edit {
            step,
            path: edit.path,
            before: edit.before,
            after: edit.after,
            bytes: edit.bytes,
        },
    )
}

fn write_transcript(
    run: &mut AgentRun<'_>,
    step: u32,
    reply: &str,
    observation: Option<&str>,
    input_tokens: u64,
    output_tokens: u64,
) {
    if let Some(t) = run.transcript.as_deref_mut() {
        // The transcript is a diagnostic artifact; failing to write it must
        // not fail the attempt.
        let _ = t.write(serde_json::json!({
            "step": step,
            "reply": reply,
            "observation": observation,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
        }));
    }
}
