//! The loop's commands: running one through the [`CommandRunner`] and
//! recording it, the verify command and its debt, and what the model and
//! the log are told of an outcome.

use super::agent_loop::{AgentError, AgentResult, CommandRole, Recorder, Step, failed};
use super::cause::{cause_line, first_cause};
use super::hands::{Hands, record};
use crate::exec::{ExecError, ExecOutcome};
use crate::protocol::{CommandFor, Event, FailureKind, Resources, TestRuns, VerifyTrigger};
use crate::protocol::{CommandRecord, VerifyRecord};

/// Why a command of the loop did not give an outcome.
pub(super) enum Ran {
    /// It ran (whatever its exit).
    Out(Box<ExecOutcome>),
    /// Refused by the allow rules or containment: an invalid decision.
    Refused(String),
    /// The attempt cannot continue (sandbox unavailable, cancelled, deadline).
    End(AgentResult),
    /// It did not run (e.g. program not found); the model is told.
    NotRun(String),
}

/// Runs a command and records it.
pub(super) fn run_command(
    hands: &mut Hands<'_>,
    recorder: &mut dyn Recorder,
    step: u32,
    argv: &[String],
    role: CommandRole,
) -> Result<Ran, AgentError> {
    let result = hands.commands.run(argv, role, hands.cancel);
    let out = match result {
        Ok(out) => out,
        Err(ExecError::Refused(r)) => return Ok(Ran::Refused(r.to_string())),
        Err(ExecError::SandboxUnavailable { .. }) => {
            return Ok(Ran::End(failed(FailureKind::SandboxUnavailable, step)));
        }
        Err(e) => return Ok(Ran::NotRun(e.to_string())),
    };
    record(recorder, command_event(step, role.logged(), &out))?;
    if out.cancelled
        && let Some(end) = hands.stopped(step)
    {
        return Ok(Ran::End(end));
    }
    Ok(Ran::Out(Box::new(out)))
}

/// The `command` event for an outcome (counts only, never arguments or output).
pub(crate) fn command_event(step: u32, role: CommandFor, out: &ExecOutcome) -> Event {
    command_event_of_tests(step, role, out, None)
}

/// [`command_event`] of a test binary whose tests ran one per process:
/// the event stands for all of `tests`.
pub(crate) fn command_event_of_tests(
    step: u32,
    role: CommandFor,
    out: &ExecOutcome,
    tests: Option<TestRuns>,
) -> Event {
    Event::Command(CommandRecord {
        step,
        role,
        program: out.program.clone(),
        resolved: out.resolved.display().to_string(),
        argc: u32::try_from(out.argc).unwrap_or(u32::MAX),
        exit_code: out.exit_code,
        signal: out.signal,
        duration_ms: u64::try_from(out.duration.as_millis()).unwrap_or(u64::MAX),
        stdout_bytes: out.stdout.total_bytes,
        stderr_bytes: out.stderr.total_bytes,
        truncated: out.truncated(),
        timed_out: out.timed_out,
        cancelled: out.cancelled,
        oom: out.oom,
        sandbox: out.sandbox_layers.clone(),
        resources: resources(&out.resources),
        tests,
    })
}

/// The log's record of what a command cost; `None` when nothing is known.
fn resources(used: &Resources) -> Option<Resources> {
    (!used.is_empty()).then_some(*used)
}

/// Runs the verify command; Ok((passed, output text)) or the attempt's end.
pub(super) fn verify(
    hands: &mut Hands<'_>,
    recorder: &mut dyn Recorder,
    step: u32,
    trigger: VerifyTrigger,
) -> Result<Step<(bool, String)>, AgentError> {
    let argv = hands.verify.to_vec();
    if let Some(guard) = hands.guard.as_deref_mut() {
        guard.before_verify(step);
    }
    let out = match run_command(hands, recorder, step, &argv, CommandRole::Verify)? {
        Ran::Out(out) => out,
        Ran::End(result) => return Ok(Step::End(result)),
        Ran::Refused(message) | Ran::NotRun(message) => {
            record(
                recorder,
                Event::Verify(VerifyRecord {
                    step,
                    trigger,
                    passed: false,
                    cause: Some(cause_line(&message)),
                }),
            )?;
            hands.debt.last_verify_failed = true;
            return Ok(Step::Next((false, message)));
        }
    };
    let passed = out.success();
    let cause = (!passed)
        .then(|| first_cause(&out.stdout.to_text(), &out.stderr.to_text()))
        .flatten();
    record(
        recorder,
        Event::Verify(VerifyRecord {
            step,
            trigger,
            passed,
            cause,
        }),
    )?;
    hands.debt.last_verify_failed = !passed;
    if passed {
        hands.debt.open = false;
    }
    Ok(Step::Next((passed, describe_command(&argv, &out))))
}

/// What the model sees of a command: status line and captured output.
pub(crate) fn describe_command(argv: &[String], out: &ExecOutcome) -> String {
    let status = if out.oom {
        "was killed: out of memory (it hit the command's memory limit)".to_string()
    } else if out.timed_out {
        "timed out".to_string()
    } else if out.cancelled {
        "was cancelled".to_string()
    } else if let Some(code) = out.exit_code {
        format!("exited with {code}")
    } else if let Some(signal) = out.signal {
        format!("was killed by signal {signal}")
    } else {
        "ended".to_string()
    };
    let mut text = format!(
        "`{}` {status} after {} ms",
        argv.join(" "),
        out.duration.as_millis()
    );
    for (name, captured) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if captured.total_bytes > 0 {
            text.push_str(&format!("\n--- {name} ---\n{}", captured.to_text()));
        }
    }
    text
}
