//! The agent loop: the prompt builder, the workspace a model's file
//! actions are contained in, and the loop that asks for one decision at a
//! time (the union in [`crate::decision`]) and acts on it within the
//! attempt's limits.
//!
//! Never runs a command except through the [`CommandRunner`] it is given
//! (the executor), never writes outside the workspace, and reports
//! everything as events through a [`Recorder`]; it never prints.

mod agent_loop;
mod budget;
mod cause;
mod commands;
mod hands;
mod meter;
mod prompt;
mod transcript;
mod workspace;

pub use agent_loop::{
    AgentError, AgentResult, AgentRun, CommandRole, CommandRunner, LoopLimits, RecordError,
    Recorder, Used, VerifyGuard, run_agent,
};
pub use budget::Budget;
pub use cause::{CAUSE_CAP, first_cause};
pub use commands::{command_event, command_event_of_tests, describe_command};
pub use prompt::{ELIDED, PromptFacts, Turn, build_request, cap_text, system_prompt, task_message};
pub use transcript::{REDACTED, Transcript, redact, secret_values_from_env};
pub use workspace::{
    EditRecord, FileText, LIST_LIMIT, PathRefusal, Workspace, WorkspaceError, copy_tree,
    editable_set,
};
