//! The agent loop: the prompt builder, the workspace a model's file
//! actions are contained in, and the loop that asks for one decision at a
//! time (the union in [`crate::decision`]) and acts on it within the
//! attempt's limits.
//!
//! - `prompt.rs`: the prompt builder.
//! - `workspace.rs`: the workspace and its containment rules: a root descriptor
//!   opened once, every file action through `beneath/`.
//! - `agent_loop.rs`: the loop, a pipeline over two seams every path shares:
//!   limits, ask, charge, parse, act, observe.
//! - `hands.rs`: the decision seam: one decision checked and executed with
//!   verification debt, its events and its observation, with the `VerifyGuard`
//!   hook it calls before every verify.
//! - `meter.rs`: the model-call seam: the limits before a call and its charges
//!   after (steps, tokens, cost cap, wall time, retries, the `model_call`
//!   event).
//! - `budget.rs`: the spending cap a batch's workers share (`--max-cost`).
//! - `commands.rs`: the loop's commands through the [`CommandRunner`], the
//!   verify command and its debt, and what the model and the log are told of an
//!   outcome.
//! - `external.rs`: an external agent's attempt: its model calls and tool
//!   calls, as the model bridge passes them on, served through the same
//!   two seams.
//! - `transcript.rs`: the redacted transcript (`trace = "full"`).
//! - `cause.rs`: the one-line cause of a failed build or test run.
//! - `hands_tests.rs`, `workspace_tests.rs`: tests of the seam and the
//!   workspace.
//!
//! Never runs a command except through the [`CommandRunner`] it is given
//! (the executor), never writes outside the workspace, and reports
//! everything as events through a [`Recorder`]; it never prints.

mod agent_loop;
mod budget;
mod cause;
mod commands;
mod external;
mod hands;
mod meter;
mod prompt;
mod transcript;
mod workspace;

pub(crate) use agent_loop::{
    AgentError, AgentRun, CommandRole, CommandRunner, LoopLimits, RecordError, Recorder, Used,
    VerifyGuard, run_agent,
};
pub(crate) use budget::Budget;
#[cfg(test)]
pub(crate) use cause::CAUSE_CAP;
pub(crate) use cause::{cap as cap_cause, first_cause};
pub(crate) use commands::{command_event, command_event_of_tests};
pub(crate) use external::{
    AgentExit, Ask, ExternalEnd, ToolAnswer, serve_agent, unavailable_sandbox,
    verify_failed_message,
};
pub(crate) use prompt::PromptFacts;
pub(crate) use transcript::{Transcript, secret_values_from_env};
pub(crate) use workspace::{Workspace, WorkspaceError, copy_tree, editable_set};
