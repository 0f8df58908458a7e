//! The decision seam: one decision checked and executed, whoever asked
//! for it (the runtime's loop today, an agent's tool call through the
//! gateway tomorrow). A decision passes the same checks on every path:
//! paths contained in the workspace, writes only where `editable` allows,
//! argv only where the allow rules do, commands only through the bounded
//! executor; an edit opens verification debt, and only the runtime's own
//! verify closes it. Each is recorded as a `decision` event and what it
//! did (`edit`, `command`, `verify`), and answered with an observation: a
//! refusal is an observation too, never a crash.

use std::time::Instant;

use super::agent_loop::{
    AgentError, AgentResult, CommandRole, CommandRunner, Recorder, Step, VerifyGuard, failed,
};
use super::commands::{Ran, describe_command, run_command, verify};
use super::workspace::{EditRecord, PathRefusal, Workspace};
use crate::cancel::CancelToken;
use crate::decision::{Decision, DecisionError};
use crate::protocol::DecisionRecord;
use crate::protocol::{DecisionKind, Event, FailureKind, Outcome, VerifyTrigger};

/// What one attempt's decisions act on, and what they have done so far.
pub(crate) struct Hands<'a> {
    pub(crate) workspace: &'a Workspace,
    pub(crate) commands: &'a mut dyn CommandRunner,
    /// Called before every verify the runtime runs.
    pub(crate) guard: Option<&'a mut dyn VerifyGuard>,
    /// The verify command (argv).
    pub(crate) verify: &'a [String],
    /// Bytes of a file an observation shows.
    pub(crate) observation_cap: usize,
    /// When the whole attempt must end.
    pub(crate) deadline: Instant,
    pub(crate) cancel: &'a CancelToken,
    pub(super) debt: Debt,
}

/// The attempt's edits and verification debt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Debt {
    pub(super) edits: u32,
    /// An edit since the last passing verify.
    pub(super) open: bool,
    pub(super) last_verify_failed: bool,
}

/// What acting on one decision came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Acted {
    /// The attempt goes on with this observation; `invalid` says why the
    /// decision was refused, when it was.
    Observe {
        observation: String,
        invalid: Option<String>,
    },
    /// The attempt ends.
    End(AgentResult),
}

impl Acted {
    fn seen(observation: String) -> Acted {
        Acted::Observe {
            observation,
            invalid: None,
        }
    }

    fn refused(reason: String) -> Acted {
        Acted::Observe {
            observation: invalid_observation(&reason),
            invalid: Some(reason),
        }
    }
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

pub(super) fn invalid_observation(reason: &str) -> String {
    format!(
        "invalid decision: {reason}\nReply with exactly one JSON object that matches the decision schema."
    )
}

impl<'a> Hands<'a> {
    /// Hands on `workspace` with no edit made yet.
    pub(crate) fn new(
        workspace: &'a Workspace,
        commands: &'a mut dyn CommandRunner,
        verify: &'a [String],
        observation_cap: usize,
        deadline: Instant,
        cancel: &'a CancelToken,
    ) -> Hands<'a> {
        Hands {
            workspace,
            commands,
            guard: None,
            verify,
            observation_cap,
            deadline,
            cancel,
            debt: Debt::default(),
        }
    }

    /// Whether the last verify failed (a step limit reached then is the
    /// model's `verify_failed`).
    pub(crate) fn last_verify_failed(&self) -> bool {
        self.debt.last_verify_failed
    }

    /// Checks and executes one decision at `step` (or the error that made
    /// a reply none), recording its `decision` event and what it did.
    pub(crate) fn decide(
        &mut self,
        recorder: &mut dyn Recorder,
        step: u32,
        parsed: Result<Decision, DecisionError>,
    ) -> Result<Acted, AgentError> {
        let decision = match parsed {
            Ok(decision) => decision,
            Err(e) => {
                let reason = e.to_string();
                record(
                    recorder,
                    decision_event(step, DecisionKind::Invalid, None, Some(reason.clone())),
                )?;
                return Ok(Acted::refused(reason));
            }
        };
        let kind = decision.logged_kind();
        // Refusals are found before the decision is recorded, so the
        // decision event says whether it was valid.
        if let Err(refused) = self.precheck(&decision) {
            let logged = format!("{kind}: {}", refused.logged);
            record(
                recorder,
                decision_event(step, DecisionKind::Invalid, None, Some(logged)),
            )?;
            return Ok(Acted::Observe {
                observation: invalid_observation(&format!(
                    "{kind} refused: {}",
                    refused.observation
                )),
                invalid: Some(refused.logged),
            });
        }
        let subject = decision.subject().map(str::to_string);
        record(recorder, decision_event(step, kind, subject, None))?;
        self.act(recorder, step, decision)
    }

    /// Checks that do not touch anything: paths, and commands against the
    /// allow rules. A failure makes the decision invalid.
    fn precheck(&self, decision: &Decision) -> Result<(), Refused> {
        let path = |r: Result<(), PathRefusal>| r.map_err(|e| Refused::same(e.to_string()));
        match decision {
            Decision::RunTool { program, args } => {
                let mut argv = vec![program.clone()];
                argv.extend(args.iter().cloned());
                self.commands.allows(&argv).map_err(|e| Refused {
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
                path(self.workspace.check_read(p))
            }
            Decision::WriteFile { path: p, .. } | Decision::ReplaceText { path: p, .. } => {
                path(self.workspace.check_write(p))
            }
            Decision::Verify {} | Decision::Finish { .. } => Ok(()),
        }
    }

    /// Executes a checked decision.
    fn act(
        &mut self,
        recorder: &mut dyn Recorder,
        step: u32,
        decision: Decision,
    ) -> Result<Acted, AgentError> {
        let refused = |e: PathRefusal| Acted::refused(e.to_string());
        Ok(match decision {
            Decision::ReadFile { path } => match self.workspace.read(&path, self.observation_cap) {
                Ok(file) => {
                    let note = if file.truncated {
                        format!(" (first {} of {} bytes)", file.text.len(), file.total_bytes)
                    } else {
                        String::new()
                    };
                    Acted::seen(format!("{path}{note}:\n{}", file.text))
                }
                Err(
                    e @ (PathRefusal::NotFound(_)
                    | PathRefusal::IsDirectory(_)
                    | PathRefusal::NotRegular { .. }
                    | PathRefusal::NotText { .. }),
                ) => Acted::seen(format!("read_file failed: {e}")),
                Err(e) => refused(e),
            },
            Decision::ListFiles { path } => match self.workspace.list(&path) {
                Ok((files, complete)) => {
                    let mut text = files.join("\n");
                    if !complete {
                        text.push_str("\n[listing cut short]");
                    }
                    Acted::seen(format!("files under {path}:\n{text}"))
                }
                Err(e @ (PathRefusal::NotFound(_) | PathRefusal::NotDirectory(_))) => {
                    Acted::seen(format!("list_files failed: {e}"))
                }
                Err(e) => refused(e),
            },
            Decision::WriteFile { path, content } => match self.workspace.write(&path, &content) {
                Ok(edit) => {
                    let observation = format!(
                        "wrote {} ({} bytes); verification is now required before finish",
                        edit.path, edit.bytes
                    );
                    self.edited(recorder, step, edit)?;
                    Acted::seen(observation)
                }
                Err(
                    e @ (PathRefusal::Io { .. }
                    | PathRefusal::NotRegular { .. }
                    | PathRefusal::TooLarge { .. }),
                ) => Acted::seen(format!("write_file failed: {e}")),
                Err(e) => refused(e),
            },
            Decision::ReplaceText {
                path,
                expected,
                replacement,
            } => match self.workspace.replace(&path, &expected, &replacement) {
                Ok(edit) => {
                    let observation = format!(
                        "replaced 1 occurrence in {}; verification is now required before finish",
                        edit.path
                    );
                    self.edited(recorder, step, edit)?;
                    Acted::seen(observation)
                }
                Err(
                    e @ (PathRefusal::Occurrences { .. }
                    | PathRefusal::NotFound(_)
                    | PathRefusal::NotText { .. }
                    | PathRefusal::NotRegular { .. }
                    | PathRefusal::TooLarge { .. }
                    | PathRefusal::Io { .. }),
                ) => Acted::seen(format!("replace_text failed: {e}")),
                Err(e) => refused(e),
            },
            Decision::RunTool { program, args } => {
                let mut argv = vec![program];
                argv.extend(args);
                match run_command(self, recorder, step, &argv, CommandRole::Tool)? {
                    Ran::Out(out) => Acted::seen(describe_command(&argv, &out)),
                    Ran::Refused(reason) => Acted::refused(reason),
                    Ran::End(result) => Acted::End(result),
                    Ran::NotRun(message) => Acted::seen(format!("run_tool failed: {message}")),
                }
            }
            Decision::Verify {} => match verify(self, recorder, step, VerifyTrigger::Decision)? {
                Step::Next((true, _)) => Acted::seen("verify passed".into()),
                Step::Next((false, text)) => Acted::seen(format!("verify failed:\n{text}")),
                Step::End(result) => Acted::End(result),
            },
            Decision::Finish { summary } => {
                if self.debt.edits == 0 {
                    return Ok(Acted::End(failed(FailureKind::NoEdit, step)));
                }
                let done = AgentResult {
                    outcome: Outcome::Succeeded,
                    failure_kind: None,
                    steps: step,
                    summary: Some(summary),
                    infra: None,
                    cause: None,
                };
                if !self.debt.open {
                    return Ok(Acted::End(done));
                }
                match verify(self, recorder, step, VerifyTrigger::Finish)? {
                    Step::Next((true, _)) => Acted::End(done),
                    Step::Next((false, text)) => Acted::seen(format!(
                        "finish refused: the runtime ran verify and it failed:\n{text}"
                    )),
                    Step::End(result) => Acted::End(result),
                }
            }
        })
    }

    fn edited(
        &mut self,
        recorder: &mut dyn Recorder,
        step: u32,
        edit: EditRecord,
    ) -> Result<(), AgentError> {
        self.debt.edits += 1;
        self.debt.open = true;
        record(
            recorder,
            Event::Edit(crate::protocol::EditRecord {
                step,
                path: edit.path,
                before: edit.before,
                after: edit.after,
                bytes: edit.bytes,
            }),
        )
    }

    /// A cancel or the wall deadline ends the attempt.
    pub(super) fn stopped(&self, steps: u32) -> Option<AgentResult> {
        if Instant::now() >= self.deadline {
            return Some(failed(FailureKind::WallTimeout, steps));
        }
        self.cancel
            .is_cancelled()
            .then(|| failed(FailureKind::Cancelled, steps))
    }
}

/// The `decision` event: what was asked at `step` and what it names, or
/// why it was refused.
fn decision_event(
    step: u32,
    kind: DecisionKind,
    subject: Option<String>,
    reason: Option<String>,
) -> Event {
    let subject = subject.map(|s| super::cause::cap_to(&s, crate::protocol::SUBJECT_CHARS));
    Event::Decision(DecisionRecord {
        step,
        kind,
        subject,
        reason,
        call: None,
    })
}

pub(super) fn record(recorder: &mut dyn Recorder, event: Event) -> Result<(), AgentError> {
    recorder.record(event).map_err(AgentError::Record)
}

#[cfg(test)]
#[path = "hands_tests.rs"]
mod tests;
