//! The agent loop: ask the provider for one decision, check it, execute it
//! through the workspace or the executor, observe, repeat, within the
//! attempt's limits: a pipeline over the model-call seam (`meter.rs`) and
//! the decision seam (`hands.rs`), which an external agent's requests and
//! tool calls take too. Verification debt: a successful edit opens it;
//! only the runtime's own verify run (a `verify` decision, or the one a
//! `finish` triggers) closes it.
//!
//! Everything the loop does is reported as events through [`Recorder`]; it
//! never prints and never runs anything except through [`CommandRunner`].

use std::time::Instant;

use super::budget::Budget;
use super::hands::{Acted, Hands};
use super::meter::Meter;
use super::prompt::{PromptFacts, Turn, build_request, cap_text};
use super::transcript::Transcript;
use super::workspace::Workspace;
use crate::cancel::CancelToken;
use crate::decision::parse_decision;
use crate::exec::{ExecError, ExecOutcome};
use crate::protocol::Price;
use crate::protocol::{CommandFor, Event, FailureKind, Outcome, TranscriptLine};
use crate::provider::{Provider, ProviderReply};

/// Appends events for the attempt being run, and says what they add up
/// to, so the loop keeps no count of its own of what the log counts.
pub(crate) trait Recorder {
    fn record(&mut self, event: Event) -> Result<(), RecordError>;

    /// What the agent phase recorded so far used: its steps and tokens,
    /// as the state counts them.
    fn used(&self) -> Used;
}

/// Steps (provider calls, a failed one included) and tokens (input and
/// output, saturating) of the agent phase so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Used {
    pub(crate) steps: u32,
    pub(crate) tokens: u64,
}

/// What a command is run for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandRole {
    Tool,
    Verify,
}

impl CommandRole {
    /// The role as the log records it.
    pub(crate) fn logged(self) -> CommandFor {
        match self {
            CommandRole::Tool => CommandFor::Tool,
            CommandRole::Verify => CommandFor::Verify,
        }
    }
}

/// Runs commands in the attempt's workspace through the executor.
pub(crate) trait CommandRunner {
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
pub(crate) trait VerifyGuard {
    fn before_verify(&mut self, step: u32);
}

/// Limits and facts the loop needs besides the prompt facts.
#[derive(Debug, Clone)]
pub(crate) struct LoopLimits {
    pub(crate) max_steps: u32,
    pub(crate) max_invalid: u32,
    pub(crate) token_budget: u64,
    pub(crate) observation_cap: usize,
    pub(crate) context_budget: usize,
    /// When the whole attempt must end.
    pub(crate) deadline: Instant,
}

/// How the agent phase ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentResult {
    pub(crate) outcome: Outcome,
    pub(crate) failure_kind: Option<FailureKind>,
    pub(crate) steps: u32,
    pub(crate) summary: Option<String>,
    /// The attempt stopped for a fault of the infrastructure (the provider
    /// could not be reached, after its retries), not for anything the model
    /// did: the runner restarts the job without using an attempt.
    pub(crate) infra: Option<String>,
    /// How an external agent's process ended, when that ended the phase.
    pub(crate) cause: Option<String>,
}

/// What a stage of the loop leaves: the next stage's input, or how the
/// attempt ends.
#[derive(Debug)]
pub(crate) enum Step<T> {
    Next(T),
    End(AgentResult),
}

/// Why a [`Recorder`] could not append an event: its store's error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct RecordError(pub Box<dyn std::error::Error + Send + Sync>);

/// The loop could not go on for a reason that is not the model's doing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AgentError {
    #[error("failed to record an event: {0}")]
    Record(#[source] RecordError),
}

/// Everything one agent phase needs.
pub(crate) struct AgentRun<'a> {
    pub(crate) facts: &'a PromptFacts,
    pub(crate) limits: &'a LoopLimits,
    pub(crate) workspace: &'a Workspace,
    pub(crate) provider: &'a mut dyn Provider,
    pub(crate) commands: &'a mut dyn CommandRunner,
    pub(crate) recorder: &'a mut dyn Recorder,
    pub(crate) cancel: &'a CancelToken,
    pub(crate) transcript: Option<&'a mut Transcript>,
    pub(crate) attempt: u32,
    /// The batch's spending cap and this job's price, under `--max-cost`.
    pub(crate) budget: Option<(&'a Budget, Price)>,
    /// Called before every verify the loop runs.
    pub(crate) guard: Option<&'a mut dyn VerifyGuard>,
}

impl std::fmt::Debug for AgentRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRun")
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}

/// Runs the agent phase to its end: a pipeline, one stage a line, over
/// the two seams every path shares. The meter says whether a model call
/// may start and charges it ([`Meter`]); the hands check and execute what
/// it asked for ([`Hands`]).
pub(crate) fn run_agent(run: AgentRun<'_>) -> Result<AgentResult, AgentError> {
    let AgentRun {
        facts,
        limits,
        workspace,
        provider,
        commands,
        recorder,
        cancel,
        mut transcript,
        attempt,
        budget,
        guard,
    } = run;
    let meter = Meter {
        limits,
        budget,
        cancel,
    };
    let mut hands = Hands::new(
        workspace,
        commands,
        &facts.verify,
        limits.observation_cap,
        limits.deadline,
        cancel,
    );
    hands.guard = guard;
    let mut history: Vec<Turn> = Vec::new();
    let mut invalid_streak = 0u32;
    loop {
        // Limits: steps and tokens so far, as the log records them.
        let used = recorder.used();
        if let Err(end) = meter.admit(used, hands.last_verify_failed()) {
            return Ok(end);
        }
        let step = used.steps + 1;
        // Ask, and charge the call.
        let request = build_request(facts, &history, limits.context_budget, attempt);
        let reply = match meter.ask(
            recorder,
            provider,
            &request,
            step,
            hands.last_verify_failed(),
        )? {
            Step::Next(reply) => reply,
            Step::End(end) => return Ok(end),
        };
        // Parse, and act.
        let acted = hands.decide(recorder, step, parse_decision(&reply.text))?;
        // Observe.
        let (observation, invalid) = match acted {
            Acted::End(result) => {
                write_transcript(transcript.as_deref_mut(), step, &reply, None);
                return Ok(result);
            }
            Acted::Observe {
                observation,
                invalid,
            } => (cap_text(&observation, limits.observation_cap), invalid),
        };
        write_transcript(transcript.as_deref_mut(), step, &reply, Some(&observation));
        history.push(Turn {
            reply: reply.text,
            observation,
        });
        invalid_streak = match invalid {
            Some(_) => invalid_streak + 1,
            None => 0,
        };
        if invalid_streak >= limits.max_invalid {
            return Ok(failed(FailureKind::InvalidDecisions, step));
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
        cause: None,
    }
}

fn write_transcript(
    transcript: Option<&mut Transcript>,
    step: u32,
    reply: &ProviderReply,
    observation: Option<&str>,
) {
    if let Some(t) = transcript {
        // The transcript is a diagnostic artifact; failing to write it must
        // not fail the attempt.
        let _ = t.write(TranscriptLine {
            step,
            reply: reply.text.clone(),
            observation: observation.map(str::to_string),
            input_tokens: reply.input_tokens,
            output_tokens: reply.output_tokens,
        });
    }
}
