//! An attempt's timeline: every model call and every thing the runtime did,
//! in order. Built once from the log's events and the attempt's transcript
//! (where `trace = "full"` kept one) and read by every view that shows a
//! run: `results.json`, `report.html` and the live viewer (one renderer),
//! the Inspect and ATIF exports. No view reads the transcript again.

use serde::{Deserialize, Serialize};

use super::{DecisionKind, EntryKind, FailureKind, Outcome, Resources};

/// One attempt, from its start to its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptTimeline {
    pub attempt: u32,
    /// When its first and last events were recorded (ms since the epoch).
    pub started_ms: u64,
    pub ended_ms: u64,
    /// How it ended, once it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<FailureKind>,
    pub moments: Vec<Moment>,
}

/// A phase of the attempt outside the model's steps (its start, setup,
/// the baseline, the patch, acceptance), or one model step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Moment {
    Phase(Action),
    Step(ModelStep),
}

/// One model call and everything the runtime did for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelStep {
    pub step: u32,
    /// Milliseconds since the job's first attempt started, and since the
    /// epoch, of its first entry.
    pub at_ms: u64,
    pub ts_ms: u64,
    /// The call as its `decision` event recorded it; `None` for a step
    /// whose provider call failed (no decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ModelCall>,
    /// What the call cost at the job's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The step's headline in the log's words (`step 2: read_file
    /// src/lib.rs`).
    pub headline: String,
    /// The decision's kind, or the kind of what ended the step.
    pub kind: EntryKind,
    /// With a full trace: the decision's key fields in one line
    /// (`path=src/lib.rs`, `argv=cargo test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<String>,
    /// With a full trace: the model's reply as sent back, and the
    /// observation the runtime sent the model after acting on it (`None`
    /// when the attempt ended there). Cut where the view keeps excerpts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// With a full trace, for an edit: removed lines `-`, written `+`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Everything the log says of the step, the decision's own line
    /// included: refusals, provider retries, commands, edits, verify runs.
    pub actions: Vec<Action>,
}

/// One provider call's figures, as its `decision` event recorded them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCall {
    pub kind: DecisionKind,
    /// Why the reply was refused (an `invalid` decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub reply_bytes: u64,
    pub reply_hash: String,
    pub input_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
}

/// One thing the log records, in one line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// Milliseconds since the job's first attempt started.
    pub at_ms: u64,
    /// The decision kind (`read_file`, ...) or the runtime phase
    /// (`command`, `verify`, `edit`, `baseline`, `acceptance`, ...).
    pub kind: EntryKind,
    /// One line, free of secrets, as recorded: views escape it.
    pub text: String,
    pub ok: bool,
    /// On a command: its result in short (`exit 101`, `timed out`,
    /// `cancelled`, `killed by signal 9`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// On a command: what it cost the machine, where it was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
}

impl Action {
    /// A line with no resources told.
    pub fn new(at_ms: u64, kind: EntryKind, text: impl Into<String>, ok: bool) -> Action {
        Action {
            at_ms,
            kind,
            text: text.into(),
            ok,
            status: None,
            resources: None,
        }
    }
}

impl ModelStep {
    /// The decision kind's name (`invalid` for a refused reply,
    /// `provider_error` for a failed call).
    pub fn kind_name(&self) -> &'static str {
        self.call
            .as_ref()
            .map_or("provider_error", |c| c.kind.as_str())
    }

    /// Whether everything the step did went as it should.
    pub fn ok(&self) -> bool {
        self.actions.iter().all(|a| a.ok)
    }

    /// What went wrong first, in short: a failed command's status (`exit
    /// 101`, `timed out`), else the failing action's kind; `None` when the
    /// step went well.
    pub fn failure(&self) -> Option<String> {
        let bad = self.actions.iter().find(|a| !a.ok)?;
        Some(
            bad.status
                .clone()
                .unwrap_or_else(|| bad.kind.as_str().to_string()),
        )
    }

    /// What the model was told after the step: the transcript's
    /// observation, else the refusal of an invalid reply and the log's
    /// words for the rest of the step.
    pub fn observed(&self) -> String {
        if let Some(text) = &self.observation {
            return text.clone();
        }
        let refusal = self.call.as_ref().and_then(|c| c.reason.clone());
        refusal
            .into_iter()
            .chain(
                self.actions
                    .iter()
                    .filter(|a| self.call.is_none() || a.text != self.headline)
                    .map(|a| a.text.clone()),
            )
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl AttemptTimeline {
    /// Timelines from a flat list of `(attempt, step, action)` in order
    /// (step 0 for a phase): one per run of one attempt, a step per run of
    /// one step number, headed by its last action that can head one. No
    /// call figures or texts: a list of lines holds none (a `results.json`
    /// written before schema 10, a test's fixture).
    pub fn from_flat(items: impl IntoIterator<Item = (u32, u32, Action)>) -> Vec<AttemptTimeline> {
        let mut out: Vec<AttemptTimeline> = Vec::new();
        for (attempt, step, action) in items {
            if out.last().is_none_or(|a| a.attempt != attempt) {
                out.push(AttemptTimeline {
                    attempt,
                    started_ms: 0,
                    ended_ms: 0,
                    outcome: None,
                    failure_kind: None,
                    moments: Vec::new(),
                });
            }
            let Some(current) = out.last_mut() else {
                continue;
            };
            if step == 0 {
                current.moments.push(Moment::Phase(action));
                continue;
            }
            match current.moments.last_mut() {
                Some(Moment::Step(open)) if open.step == step => {
                    if action.kind.heads_a_step() {
                        open.headline.clone_from(&action.text);
                        open.kind = action.kind;
                    }
                    open.actions.push(action);
                }
                _ => current.moments.push(Moment::Step(ModelStep {
                    step,
                    at_ms: action.at_ms,
                    ts_ms: 0,
                    call: None,
                    cost_usd: None,
                    headline: action.text.clone(),
                    kind: action.kind,
                    fields: None,
                    reply: None,
                    observation: None,
                    diff: None,
                    actions: vec![action],
                })),
            }
        }
        out
    }

    /// Its model steps, in order.
    pub fn steps(&self) -> impl Iterator<Item = &ModelStep> {
        self.moments.iter().filter_map(|m| match m {
            Moment::Step(step) => Some(step),
            Moment::Phase(_) => None,
        })
    }

    /// Every line the log holds of it, in order, with its step (0 for a
    /// phase).
    pub fn actions(&self) -> impl Iterator<Item = (u32, &Action)> {
        self.moments.iter().flat_map(|m| {
            let (step, actions) = match m {
                Moment::Phase(action) => (0, std::slice::from_ref(action)),
                Moment::Step(step) => (step.step, step.actions.as_slice()),
            };
            actions.iter().map(move |a| (step, a))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(kind: EntryKind, text: &str, ok: bool) -> Action {
        Action::new(0, kind, text, ok)
    }

    fn command(status: &str) -> Action {
        Action {
            status: Some(status.into()),
            ..action(
                EntryKind::Command,
                &format!("tool `x` (0 args) {status}"),
                false,
            )
        }
    }

    fn step(actions: Vec<Action>) -> ModelStep {
        ModelStep {
            step: 1,
            at_ms: 0,
            ts_ms: 0,
            call: None,
            cost_usd: None,
            headline: "step 1: run_tool".into(),
            kind: EntryKind::RunTool,
            fields: None,
            reply: None,
            observation: None,
            diff: None,
            actions,
        }
    }

    #[test]
    fn a_step_names_what_failed_first() {
        let ok = step(vec![action(EntryKind::RunTool, "step 1: run_tool", true)]);
        assert_eq!(ok.failure(), None);
        assert!(ok.ok());
        let exit = step(vec![
            action(EntryKind::RunTool, "step 1: run_tool cargo", true),
            command("exit 101"),
            command("timed out"),
        ]);
        assert_eq!(exit.failure().as_deref(), Some("exit 101"));
        let slow = step(vec![command("timed out")]);
        assert_eq!(slow.failure().as_deref(), Some("timed out"));
        let refused = step(vec![action(EntryKind::Invalid, "step 1: invalid", false)]);
        assert_eq!(refused.failure().as_deref(), Some("invalid"));
        assert_eq!(refused.kind_name(), "provider_error");
    }

    #[test]
    fn a_timeline_reads_back_as_written() {
        let timeline = AttemptTimeline {
            attempt: 1,
            started_ms: 10,
            ended_ms: 20,
            outcome: Some(Outcome::Failed),
            failure_kind: Some(FailureKind::TestsFailed),
            moments: vec![
                Moment::Phase(action(EntryKind::Attempt, "attempt 1 started", true)),
                Moment::Step(step(vec![action(EntryKind::RunTool, "x", true)])),
            ],
        };
        let text = serde_json::to_string(&timeline).unwrap();
        assert!(text.contains(r#""type":"phase""#), "{text}");
        let back: AttemptTimeline = serde_json::from_str(&text).unwrap();
        assert_eq!(back, timeline);
        assert_eq!(back.steps().count(), 1);
        assert_eq!(back.actions().count(), 2);
    }

    #[test]
    fn a_flat_list_groups_into_attempts_and_steps() {
        let flat = [
            (1, 0, action(EntryKind::Attempt, "attempt 1 started", true)),
            (1, 1, action(EntryKind::Retry, "provider retry", true)),
            (1, 1, action(EntryKind::RunTool, "step 1: run_tool", true)),
            (1, 1, action(EntryKind::Command, "tool exit 1", false)),
            (1, 2, action(EntryKind::Finish, "step 2: finish", true)),
            (0, 0, action(EntryKind::Retry, "retried", true)),
            (2, 1, action(EntryKind::Finish, "step 1: finish", true)),
        ];
        let timelines = AttemptTimeline::from_flat(flat);
        let shape: Vec<(u32, usize)> = timelines
            .iter()
            .map(|a| (a.attempt, a.moments.len()))
            .collect();
        assert_eq!(shape, [(1, 3), (0, 1), (2, 1)]);
        let first = timelines[0].steps().next().unwrap();
        assert_eq!(
            (first.headline.as_str(), first.kind),
            ("step 1: run_tool", EntryKind::RunTool)
        );
        assert_eq!(first.actions.len(), 3);
        assert!(!first.ok());
    }
}
