//! A job's details in `report.html`, as blocks the page's script renders
//! when the job is opened: every field, the cause, the task prompt, each
//! failing or missing test with what it printed of its own, links to the
//! job's logs, the integrity evidence, the step trajectory and the patch.
//! Every string from the job goes through the one escaping function here
//! (as [`Cell`]s or [`Block::Pre`] text); the script only ever sets it as
//! text.

use serde::Serialize;

use super::format::{bytes, count, duration_ms};
use super::html_data::{
    Cell, baseline_cell, check_cell, integrity_cell, outcome_cell, outcome_class, patch_cell,
    tests_cell,
};
use super::model::{JobOutcome, JobResult};
use super::verdict_text;
use crate::protocol::{EntryKind, Moment};

/// Patch lines shown per job; the rest is summarized in one line.
pub(super) const PATCH_LINES: usize = 2_000;

/// One piece of a job's details.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) enum Block {
    /// The headline: outcome, instance, family, failure kind; steps and time.
    #[serde(rename = "top")]
    Top { left: Vec<Cell>, right: String },
    #[serde(rename = "h")]
    Heading {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        muted: Option<String>,
    },
    /// A paragraph.
    #[serde(rename = "n")]
    Note(Vec<Cell>),
    /// Preformatted text (`prompt`).
    #[serde(rename = "pre")]
    Pre { text: String, c: &'static str },
    /// A paragraph the page holds once for every job: `texts[key]`.
    #[serde(rename = "say")]
    Say { key: &'static str, c: &'static str },
    /// The values of [`FACT_NAMES`], in order.
    #[serde(rename = "facts")]
    Facts(Vec<Cell>),
    #[serde(rename = "ul")]
    List { c: &'static str, items: Vec<Item> },
    /// Files beside the log: `base` (the path from the report to the data
    /// dir, percent-encoded) and paths relative to the data dir, whose
    /// segments the script percent-encodes into the link.
    #[serde(rename = "links")]
    Links { base: String, paths: Vec<String> },
    /// A patch or an edit, coloured by line.
    #[serde(rename = "diff")]
    Diff(String),
    /// The trajectory.
    #[serde(rename = "steps")]
    Steps(Vec<Group>),
    /// Where the job's time went: `[what, milliseconds]`, the parts above
    /// zero, as one bar (the viewer draws the same).
    #[serde(rename = "time")]
    Time(Vec<(&'static str, u64)>),
}

/// A list item: a line of cells and, below it, preformatted text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Item {
    pub line: Vec<Cell>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c: Option<&'static str>,
}

impl Item {
    fn line(line: Vec<Cell>) -> Item {
        Item {
            line,
            pre: None,
            c: None,
        }
    }
}

/// A phase of the trajectory (no `step`), or a model step with what the
/// runtime did for it (its `lines`, built when the step is opened) and
/// what the model said and was told (`call`). Written as `[ok, at, kind,
/// text]` for a phase and `[ok, at, kind, text, [attempt, step], lines,
/// call]` for a step.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Group {
    pub ok: bool,
    pub at: String,
    pub kind: EntryKind,
    pub text: String,
    /// Its attempt and step.
    pub step: Option<(u32, u32)>,
    pub lines: Vec<Line>,
    pub call: Call,
}

impl Serialize for Group {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.step {
            None => (self.ok, &self.at, &self.kind, &self.text).serialize(serializer),
            Some(step) => (
                self.ok,
                &self.at,
                &self.kind,
                &self.text,
                step,
                &self.lines,
                &self.call,
            )
                .serialize(serializer),
        }
    }
}

/// One thing the runtime did for a step: `[ok, kind, text]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Line {
    pub ok: bool,
    pub kind: EntryKind,
    pub text: String,
}

impl Serialize for Line {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (self.ok, &self.kind, &self.text).serialize(serializer)
    }
}

/// A model step's call: what failed first (`exit 101`), its figures in
/// one line, and with a full trace the decision's key fields, the reply,
/// the observation and an edit's diff.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(super) struct Call {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obs: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Names of the facts of every job, in the order of [`Block::Facts`].
pub(super) const FACT_NAMES: [&str; 23] = [
    "outcome",
    "provider",
    "repeat",
    "attempts",
    "steps",
    "invalid decisions",
    "tokens in / out",
    "provider calls",
    "model time",
    "tool time",
    "verify time",
    "acceptance time",
    "wall time",
    "cpu time",
    "memory peak",
    "pids peak",
    "cost",
    "patch",
    "acceptance",
    "tests",
    "baseline",
    "integrity",
    "trace",
];

/// The paragraphs every job may show, by key ([`Block::Say`]).
pub(super) fn texts() -> std::collections::BTreeMap<&'static str, &'static str> {
    std::collections::BTreeMap::from([("not_available", NOT_AVAILABLE), ("trace", TRACE_HINT)])
}

/// Said where a job failed tests whose excerpts are not beside the log.
pub(super) const NOT_AVAILABLE: &str = "Their own output is not available here: the attempt's \
     tests/excerpts.json is not \
     beside this log (a shard merged without its runs/ directory, or a log written before \
     excerpts were kept)";

/// Said of a contained agent's job, beside its mode.
pub(crate) const CONTAINED_CAVEAT: &str = "its own tools ran inside the sandbox: `allow` and \
     `editable` were not checked per action, and its commands show only as tool calls in \
     bridge.jsonl (trace = \"full\"); the patch is judged on `editable` alone";

/// Said of a job whose trace is `metadata`, above its trajectory.
pub(super) const TRACE_HINT: &str = "trace = metadata: decisions kept, model text not. With \
     trace = \"full\" in its manifest, each step also shows the model call's input and output, \
     the observation it got and its edits as diffs.";

/// The renderer of a job's details, shared by `report.html` and the live
/// viewer.
pub(crate) const DETAIL_SCRIPT: &str = include_str!("detail.js");

/// A job's details as the live viewer's job page carries them: the
/// blocks, and the texts and fact names a report holds once for every
/// job.
#[derive(Debug, Serialize)]
pub(crate) struct JobDetail {
    blocks: Vec<Block>,
    texts: std::collections::BTreeMap<&'static str, &'static str>,
    fact_names: [&'static str; 23],
}

/// The details of `j` for a page whose links to the data dir's files
/// start with `base` (`/data/0/`).
pub(crate) fn job_detail(j: &JobResult, base: &str) -> JobDetail {
    JobDetail {
        blocks: details(j, Some(base)),
        texts: texts(),
        fact_names: FACT_NAMES,
    }
}

/// The details of `j`; `base` is the path from the report to its data dir
/// (`../`), for the links to its logs.
pub(super) fn details(j: &JobResult, base: Option<&str>) -> Vec<Block> {
    let mut out = vec![top(j), Block::Facts(facts(j))];
    let t = &j.time;
    let parts: Vec<(&'static str, u64)> = [
        ("model", j.provider_latency_ms),
        ("tools", t.tool_ms),
        ("verify", t.verify_ms),
        ("setup", t.setup_ms),
        ("baseline + acceptance", t.acceptance_ms),
        ("waiting", t.wait_ms),
    ]
    .into_iter()
    .filter(|(_, ms)| *ms > 0)
    .collect();
    if !parts.is_empty() {
        out.push(Block::Time(parts));
    }
    if let Some((agent, mode)) = j.agent_words() {
        let mut note = vec![
            Cell::styled("muted", "agent:"),
            Cell::styled("mono", &agent),
            Cell::text(&format!("mode: {}", mode.as_str())),
        ];
        if mode == crate::protocol::AgentMode::Contained {
            note.push(Cell::styled("muted", CONTAINED_CAVEAT));
        }
        out.push(Block::Note(note));
    }
    if let Some(cause) = j.cause.as_ref().filter(|_| j.outcome == JobOutcome::Failed) {
        out.push(Block::Note(vec![
            Cell::styled("muted", "cause:"),
            Cell::text(cause),
        ]));
    }
    if let Some(reason) = &j.baseline_reason {
        out.push(Block::Note(vec![
            Cell::styled("muted", "baseline:"),
            Cell::text(reason),
        ]));
    }
    if let Some(prompt) = &j.prompt {
        out.push(heading("Task", None));
        out.push(Block::Pre {
            text: crate::escape::block(prompt).into_owned(),
            c: "prompt",
        });
    }
    tests(&mut out, j);
    logs(&mut out, j, base);
    integrity(&mut out, j);
    timeline(&mut out, j);
    out.push(heading("Patch", None));
    match &j.patch {
        Some(patch) if !patch.is_empty() => patch_blocks(&mut out, patch),
        _ => out.push(Block::Note(vec![Cell::styled("muted", "No patch.")])),
    }
    out
}

fn heading(text: &str, muted: Option<String>) -> Block {
    Block::Heading {
        text: text.to_string(),
        muted,
    }
}

fn top(j: &JobResult) -> Block {
    let mut left = vec![
        Cell::badge(outcome_class(j.outcome), j.outcome.as_str()),
        Cell::styled("strong", &j.instance),
        Cell::styled("muted", &j.family),
    ];
    if let Some(kind) = j.failure_kind {
        left.push(Cell::badge("badge failed", kind.as_str()));
    }
    Block::Top {
        left,
        right: format!("{} steps · {}", j.steps, duration_ms(j.wall_ms)),
    }
}

/// The values of [`FACT_NAMES`].
fn facts(j: &JobResult) -> Vec<Cell> {
    let t = &j.time;
    vec![
        outcome_cell(j),
        Cell::text(j.provider.as_deref().unwrap_or("")),
        j.repeat.map_or(Cell::None, |r| Cell::text(&r.to_string())),
        Cell::text(&format!("{} of {}", j.attempts, j.max_attempts)),
        Cell::text(&j.steps.to_string()),
        Cell::text(&j.invalid_decisions.to_string()),
        Cell::text(&format!(
            "{} / {}",
            count(j.input_tokens),
            count(j.output_tokens)
        )),
        Cell::text(&j.provider_calls.to_string()),
        Cell::text(&duration_ms(j.provider_latency_ms)),
        Cell::text(&duration_ms(t.tool_ms)),
        Cell::text(&duration_ms(t.verify_ms)),
        Cell::text(&duration_ms(t.acceptance_ms)),
        Cell::text(&duration_ms(j.wall_ms)),
        figure(j.resources.cpu_ms.map(duration_ms)),
        figure(j.resources.peak_memory_bytes.map(bytes)),
        figure(j.resources.pids_peak.map(|n| n.to_string())),
        Cell::text(&super::format::usd(j.cost_usd)),
        patch_cell(j),
        check_cell(j.acceptance),
        tests_cell(j),
        baseline_cell(j.baseline),
        integrity_cell(j),
        Cell::text(j.trace.as_deref().unwrap_or("")),
    ]
}

/// A figure of what the commands cost, a dash where none told it.
fn figure(text: Option<String>) -> Cell {
    text.map_or(Cell::None, |t| Cell::text(&t))
}

/// The failing and missing tests, each with what it printed of its own
/// when the excerpts are here, else by name; then how many more.
fn tests(out: &mut Vec<Block>, j: &JobResult) {
    if let Some(text) = &j.harness_output {
        out.push(heading("Why the tests did not run", None));
        out.push(Block::List {
            c: "excerpts",
            items: vec![Item {
                line: vec![Cell::styled(
                    "muted",
                    "the first error of the acceptance run (harness_output.txt)",
                )],
                pre: Some(text.clone()),
                c: None,
            }],
        });
    }
    let (shown, rest) = verdict_text::names(&j.tests);
    if shown.is_empty() && rest == 0 {
        return;
    }
    out.push(heading(
        "Failing and missing tests",
        Some(format!(
            "({} failing, {} missing)",
            j.tests.failing_count, j.tests.missing_count
        )),
    ));
    let mut items = Vec::new();
    let class = if j.test_excerpts.is_some() {
        "excerpts"
    } else {
        "tests"
    };
    let more = match &j.test_excerpts {
        Some(excerpts) => {
            for test in &excerpts.tests {
                let class = if test.status == "missing" {
                    "badge missing"
                } else {
                    "badge failing"
                };
                let mut line = vec![
                    Cell::badge(class, &test.status),
                    Cell::styled("mono", &test.name),
                ];
                if test.timed_out {
                    line.push(Cell::styled("bad-text", "timed out"));
                }
                let pre = test
                    .excerpt
                    .as_deref()
                    .map(|t| crate::escape::block(t).into_owned());
                if pre.is_none() {
                    line.push(Cell::styled(
                        "muted",
                        "no output of its own: see the acceptance log",
                    ));
                }
                items.push(Item { line, pre, c: None });
            }
            let listed = (excerpts.tests.len() as u64).saturating_add(u64::from(excerpts.left_out));
            let total = u64::from(j.tests.failing_count) + u64::from(j.tests.missing_count);
            u32::try_from(total.max(listed) - excerpts.tests.len() as u64).unwrap_or(u32::MAX)
        }
        None => {
            out.push(Block::Say {
                key: "not_available",
                c: "note muted",
            });
            for (name, mark) in shown {
                items.push(Item::line(vec![
                    Cell::badge(
                        match mark {
                            verdict_text::Mark::Failing => "badge failing",
                            verdict_text::Mark::Missing => "badge missing",
                        },
                        mark.as_str(),
                    ),
                    Cell::styled("mono", &name),
                ]));
            }
            rest
        }
    };
    if let Some(more) = verdict_text::more(more) {
        items.push(Item {
            c: Some("muted"),
            ..Item::line(vec![Cell::text(&more)])
        });
    }
    out.push(Block::List { c: class, items });
}

/// Links to the job's logs and artifacts, relative to the report.
fn logs(out: &mut Vec<Block>, j: &JobResult, base: Option<&str>) {
    if j.logs.is_empty() {
        return;
    }
    out.push(heading("Logs", None));
    out.push(Block::Links {
        base: href(base.unwrap_or(""), ""),
        paths: j
            .logs
            .iter()
            .map(|path| crate::escape::line(path).into_owned())
            .collect(),
    });
}

/// Characters kept as they are in a path segment of a link.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `base` (a relative path to a data dir, `/`-separated) joined with
/// `path` (relative to the data dir), every segment percent-encoded, so
/// the link is a relative path whatever a job id or directory holds; it
/// ends with `/` when `path` is empty and `base` is not.
pub(super) fn href(base: &str, path: &str) -> String {
    let joined = base
        .split('/')
        .chain(path.split('/'))
        .filter(|s| !s.is_empty())
        .map(|s| percent_encoding::utf8_percent_encode(s, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/");
    if path.is_empty() && !joined.is_empty() {
        format!("{joined}/")
    } else {
        joined
    }
}

/// The last attempt's tamper signals and canary evidence, if any.
fn integrity(out: &mut Vec<Block>, j: &JobResult) {
    if !j.stray_files().is_empty() {
        out.push(Block::Note(vec![
            Cell::styled(
                "muted",
                "stray files (a note, not a signal; not in the patch):",
            ),
            Cell::styled("mono", &j.stray_files().join(" ")),
        ]));
    }
    let Some(record) = j.integrity.as_ref().filter(|r| !r.is_clean()) else {
        return;
    };
    out.push(heading("Integrity", None));
    let mut items: Vec<Item> = record
        .forged
        .iter()
        .map(|forged| Item::line(vec![Cell::styled("bad-text", "forged"), Cell::text(forged)]))
        .collect();
    for signal in &record.signals {
        let mut line = vec![
            Cell::styled("muted", signal.kind.as_str()),
            Cell::styled("mono", &format!("{}:", signal.subject)),
            Cell::text(&signal.evidence),
        ];
        match signal.steps {
            Some([a, b]) if a == b => line.push(Cell::styled("muted", &format!("step {a}"))),
            Some([a, b]) => line.push(Cell::styled("muted", &format!("steps {a}-{b}"))),
            None => {}
        }
        items.push(Item::line(line));
    }
    let hidden = super::integrity_text::left_out(record);
    if hidden > 0 {
        items.push(Item {
            c: Some("muted"),
            ..Item::line(vec![Cell::text(&format!("and {hidden} more"))])
        });
    }
    out.push(Block::List { c: "tests", items });
}

/// The attempt step by step: phases (baseline, patch, acceptance) as
/// lines, each model step as a collapsed section holding everything the
/// runtime did for it (commands, edits, verify results, refusals, retries
/// and waits) and, with a full trace, the model call: the decision's key
/// fields, the reply, the observation the model got, an edit as a diff.
fn timeline(out: &mut Vec<Block>, j: &JobResult) {
    out.push(heading("Trajectory", None));
    if j.timeline.iter().all(|a| a.moments.is_empty()) {
        out.push(Block::Note(vec![Cell::styled(
            "muted",
            "No steps recorded.",
        )]));
        return;
    }
    let steps = j.timeline.iter().map(|a| a.steps().count()).sum::<usize>();
    let traced = j
        .timeline
        .iter()
        .any(|a| a.steps().any(|s| s.reply.is_some()));
    let open = if traced {
        "the model call (its input and output) and what the runtime did"
    } else {
        "what the runtime did for it"
    };
    out.push(Block::Note(vec![Cell::styled(
        "muted",
        &format!("{steps} model step(s), collapsed: open one for {open}."),
    )]));
    if j.trace.as_deref() == Some("metadata") && steps > 0 {
        out.push(Block::Say {
            key: "trace",
            c: "note hint",
        });
    }
    let mut groups = Vec::new();
    for attempt in &j.timeline {
        for moment in &attempt.moments {
            groups.push(group(attempt.attempt, moment));
        }
    }
    out.push(Block::Steps(groups));
}

fn group(attempt: u32, moment: &Moment) -> Group {
    let text = |t: &str| crate::escape::line(t).into_owned();
    let block = |t: &str| crate::escape::block(t).into_owned();
    match moment {
        Moment::Phase(action) => Group {
            ok: action.ok,
            at: duration_ms(action.at_ms),
            kind: action.kind,
            text: text(&action.text),
            step: None,
            lines: Vec::new(),
            call: Call::default(),
        },
        Moment::Step(step) => {
            // The headline without its `step N: `, which the page shows,
            // nor its call's figures, which the opened step shows.
            let prefix = format!("step {}: ", step.step);
            let headline = step
                .headline
                .strip_prefix(&prefix)
                .unwrap_or(&step.headline);
            let headline = match headline.rsplit_once(" (") {
                Some((words, figures))
                    if step.call.is_some()
                        && figures.ends_with(')')
                        && figures.contains(" in / ")
                        && figures.contains(" out, ") =>
                {
                    words
                }
                _ => headline,
            };
            Group {
                ok: step.ok(),
                at: duration_ms(step.at_ms),
                kind: step.kind,
                text: text(headline),
                step: Some((attempt, step.step)),
                lines: step
                    .actions
                    .iter()
                    .map(|a| Line {
                        ok: a.ok,
                        kind: a.kind,
                        text: text(&a.text),
                    })
                    .collect(),
                call: Call {
                    failed: step.failure(),
                    figures: step.call.as_ref().map(|c| {
                        let mut words = format!(
                            "{} in / {} out · {}",
                            count(c.input_tokens),
                            count(c.output_tokens),
                            duration_ms(c.latency_ms)
                        );
                        if let Some(cost) = step.cost_usd {
                            words.push_str(&format!(" · {}", super::format::usd(Some(cost))));
                        }
                        words
                    }),
                    fields: step.fields.as_deref().map(text),
                    reply: step.reply.as_deref().map(block),
                    obs: step.observation.as_deref().map(block),
                    diff: step.diff.as_deref().map(block),
                },
            }
        }
    }
}

/// The patch, cut to [`PATCH_LINES`] lines with a note of the rest.
fn patch_blocks(out: &mut Vec<Block>, patch: &str) {
    let total = patch.lines().count();
    let shown: Vec<&str> = patch.lines().take(PATCH_LINES).collect();
    out.push(Block::Diff(
        crate::escape::block(&shown.join("\n")).into_owned(),
    ));
    let rest = total.saturating_sub(shown.len());
    if rest > 0 {
        out.push(Block::Note(vec![Cell::styled(
            "muted",
            &format!(
                "{rest} more lines not shown ({} in total).",
                bytes(patch.len() as u64)
            ),
        )]));
    }
}
