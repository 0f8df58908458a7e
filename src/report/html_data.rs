//! The data `report.html` renders on demand: the per-job tables (a page at
//! a time) and each job's details, as one JSON document embedded in the
//! page (`<script type="application/json" id="report-data">`), which the
//! page's script reads with `JSON.parse` and turns into elements with
//! `textContent`. Each job's details are a JSON document of their own,
//! held as a string: the page parses only the details it opens, so its
//! cost at load grows with the tables alone. Cells and rows are arrays,
//! which keeps a 10,000-job page small. Every string from a job passes the one escaping function
//! as it goes in (control and bidi characters as visible escapes), and the
//! document is written with `<`, `>` and `&` as `\u003c`, `\u003e` and
//! `\u0026`, so no text in it can end the element it lies in.

use serde::Serialize;

use super::format::{TIME_HEADERS, count, duration_ms, ratio, time_cells, usd};
use super::html_detail::details;
use super::markdown::patch_size;
use super::model::{CheckResult, JobResult, Report};
use super::summary::Summary;
use super::verdict_text::{self, NOT_VERIFIED};

/// One table cell: text, or text with a class and a line under it.
/// Written as `null` (a dash), a string, or `[text, class]` /
/// `[text, class, under]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    /// A dash.
    None,
    Text(String),
    Styled {
        t: String,
        c: &'static str,
        u: Option<Box<Cell>>,
    },
}

impl Serialize for Cell {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        match self {
            Cell::None => serializer.serialize_none(),
            Cell::Text(t) => serializer.serialize_str(t),
            Cell::Styled { t, c, u } => {
                let mut tuple = serializer.serialize_tuple(if u.is_some() { 3 } else { 2 })?;
                tuple.serialize_element(t)?;
                tuple.serialize_element(c)?;
                if let Some(u) = u {
                    tuple.serialize_element(u)?;
                }
                tuple.end()
            }
        }
    }
}

impl Cell {
    /// Text on one line, control and bidi characters made visible; empty
    /// text is a dash.
    pub(super) fn text(text: &str) -> Cell {
        if text.is_empty() {
            Cell::None
        } else {
            Cell::Text(crate::escape::line(text).into_owned())
        }
    }

    /// Text with a class (`badge succeeded`, `bad-text`, `muted`, `mono`).
    pub(super) fn styled(class: &'static str, text: &str) -> Cell {
        Cell::Styled {
            t: crate::escape::line(text).into_owned(),
            c: class,
            u: None,
        }
    }

    pub(super) fn badge(class: &'static str, text: &str) -> Cell {
        Cell::styled(class, text)
    }

    /// This cell with `under` on a line below it.
    pub(super) fn under(self, under: Cell) -> Cell {
        let (t, c) = match self {
            Cell::None => ("–".to_string(), "muted"),
            Cell::Text(t) => (t, ""),
            Cell::Styled { t, c, .. } => (t, c),
        };
        Cell::Styled {
            t,
            c,
            u: Some(Box::new(under)),
        }
    }
}

/// A sort key: a number, text, or nothing (sorted last).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(super) enum Key {
    Int(u64),
    Number(f64),
    Text(String),
    None,
}

impl Key {
    pub(super) fn num(n: impl Into<u64>) -> Key {
        Key::Int(n.into())
    }

    pub(super) fn text(t: &str) -> Key {
        Key::Text(t.to_lowercase())
    }
}

/// One row: the job it links to (its first cell), its cells, sort keys and
/// filter values; written as `[j, cells, keys, filters]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    pub j: Option<usize>,
    pub c: Vec<Cell>,
    pub s: Vec<Key>,
    pub f: Vec<String>,
}

impl Serialize for Row {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.j, &self.c, &self.s, &self.f).serialize(serializer)
    }
}

/// A table the script shows a page at a time, in the element
/// `#<id>-table`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Table {
    pub id: &'static str,
    pub cls: &'static str,
    pub noun: &'static str,
    pub headers: Vec<String>,
    /// Right-aligned columns.
    pub num: Vec<usize>,
    /// Names of the filters, one per entry of each row's `f`.
    pub filters: Vec<&'static str>,
    /// The search box's placeholder (it filters by the first column).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<&'static str>,
    pub rows: Vec<Row>,
}

/// Everything the script renders.
#[derive(Debug, Serialize)]
pub(super) struct PageData<'a> {
    pub tables: Vec<Table>,
    /// The names of a job's facts, in order.
    pub fact_names: &'static [&'static str],
    /// Paragraphs any job's details may show, by key.
    pub texts: std::collections::BTreeMap<&'static str, &'static str>,
    /// Per job, in the report's order: its details, a JSON list of blocks.
    pub details: JobDetails<'a>,
}

/// Every job's details, each serialized as its JSON text when the page is
/// written: a sweep's page never holds all of them at once.
#[derive(Debug)]
pub(super) struct JobDetails<'a> {
    report: &'a Report,
    links: &'a [String],
}

impl Serialize for JobDetails<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.report.jobs.len()))?;
        for j in &self.report.jobs {
            let blocks = details(j, self.links.get(j.source).map(String::as_str));
            let text = serde_json::to_string(&blocks).unwrap_or_else(|_| "[]".into());
            seq.serialize_element(&text)?;
        }
        seq.end()
    }
}

/// Columns of the jobs table of `report.html`: the figures of
/// [`super::format::JOB_HEADERS`], two to a column where they belong
/// together, so the table fits a 1000 px window.
pub(super) const HTML_JOB_HEADERS: [&str; 11] = [
    "instance / family",
    "outcome",
    "attempts",
    "steps / invalid",
    "tokens in / out",
    "wall / model",
    "cost",
    "patch",
    "acceptance / tests",
    "baseline",
    "integrity",
];

/// The page's data. `links[source]` is the path from the report to the
/// data dir of that source (`../`), for the links to a job's logs.
pub(super) fn page_data<'a>(
    report: &'a Report,
    summary: &Summary,
    links: &'a [String],
) -> PageData<'a> {
    let mut tables = vec![jobs_table(report)];
    if !report.jobs.is_empty() {
        tables.push(time_table(report));
    }
    if let Some(passk) = passk_jobs_table(summary) {
        tables.push(passk);
    }
    PageData {
        tables,
        fact_names: &super::html_detail::FACT_NAMES,
        texts: super::html_detail::texts(),
        details: JobDetails { report, links },
    }
}

/// Writes the page's data as the text of a `<script type="application/json">`
/// (no text in it can end the element), serialized as it goes.
pub(super) fn write_page_data(
    w: &mut dyn std::io::Write,
    data: &PageData<'_>,
) -> std::io::Result<()> {
    crate::escape::write_json_for_markup_to(w, data).map_err(std::io::Error::other)
}

pub(super) fn outcome_cell(j: &JobResult) -> Cell {
    let outcome = Cell::badge(outcome_class(j.outcome), j.outcome.as_str());
    match j.failure_kind {
        Some(kind) => outcome.under(Cell::badge("badge failed", kind.as_str())),
        None => outcome,
    }
}

/// The badge class of an outcome.
pub(super) fn outcome_class(outcome: super::model::JobOutcome) -> &'static str {
    use super::model::JobOutcome;
    match outcome {
        JobOutcome::Succeeded => "badge succeeded",
        JobOutcome::Failed => "badge failed",
        JobOutcome::Cancelled => "badge cancelled",
        JobOutcome::Pending => "badge pending",
    }
}

pub(super) fn check_cell(check: CheckResult) -> Cell {
    Cell::badge(check_class(check), &check.as_str().replace('_', " "))
}

fn check_class(check: CheckResult) -> &'static str {
    match check {
        CheckResult::Passed => "badge passed",
        CheckResult::Failed | CheckResult::Error => "badge failed",
        CheckResult::NotRun | CheckResult::Skipped => "badge",
    }
}

/// The baseline in the human words, red when it gives no usable baseline.
pub(super) fn baseline_cell(check: CheckResult) -> Cell {
    Cell::badge(check_class(check), check.baseline_words())
}

pub(super) fn patch_cell(j: &JobResult) -> Cell {
    if j.patch.is_none() && j.patch_bytes == 0 {
        Cell::None
    } else {
        Cell::text(&patch_size(j.patch_bytes, j.patch_files))
    }
}

/// `F2P 1/2, P2P 3/3` (red while a test fails or is missing), muted "not
/// verified per test", or a dash when acceptance did not run.
pub(super) fn tests_cell(j: &JobResult) -> Cell {
    match verdict_text::summary(j) {
        None => Cell::None,
        Some(text) if text == NOT_VERIFIED => Cell::styled("muted", &text),
        Some(text) if j.tests.failing_count + j.tests.missing_count > 0 => {
            Cell::styled("bad-text", &text)
        }
        Some(text) => Cell::text(&text),
    }
}

/// The integrity summary, red when there is anything in it.
pub(super) fn integrity_cell(j: &JobResult) -> Cell {
    match &j.integrity {
        None => Cell::None,
        Some(record) if record.is_clean() => Cell::text(&j.integrity_summary()),
        Some(_) => Cell::styled("bad-text", &j.integrity_summary()),
    }
}

fn jobs_table(report: &Report) -> Table {
    let rows = report
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let acceptance = match tests_cell(j) {
                Cell::None => check_cell(j.acceptance),
                tests => check_cell(j.acceptance).under(tests),
            };
            Row {
                j: Some(i),
                c: vec![
                    Cell::text(&j.instance).under(Cell::styled("muted", &j.family)),
                    outcome_cell(j),
                    Cell::text(&format!("{}/{}", j.attempts, j.max_attempts)),
                    Cell::text(&format!("{} / {}", j.steps, j.invalid_decisions)),
                    Cell::text(&format!(
                        "{} / {}",
                        count(j.input_tokens),
                        count(j.output_tokens)
                    )),
                    Cell::text(&duration_ms(j.wall_ms))
                        .under(Cell::styled("muted", &duration_ms(j.provider_latency_ms))),
                    Cell::text(&usd(j.cost_usd)),
                    patch_cell(j),
                    acceptance,
                    baseline_cell(j.baseline),
                    integrity_cell(j),
                ],
                s: vec![
                    Key::text(&j.instance),
                    Key::text(&format!("{} {}", j.outcome.as_str(), j.failure_str())),
                    Key::num(j.attempts),
                    Key::num(j.steps),
                    Key::num(j.input_tokens),
                    Key::num(j.wall_ms),
                    j.cost_usd.map_or(Key::None, Key::Number),
                    Key::num(j.patch_bytes),
                    Key::text(&format!(
                        "{} {}",
                        j.acceptance.as_str(),
                        j.tests.failing_count + j.tests.missing_count
                    )),
                    Key::text(j.baseline.baseline_words()),
                    Key::num(j.integrity.as_ref().map_or(0, |r| r.signal_count)),
                ],
                f: vec![
                    j.outcome.as_str().to_string(),
                    j.failure_str().to_string(),
                    crate::escape::line(&j.family).into_owned(),
                    crate::escape::line(j.provider.as_deref().unwrap_or("")).into_owned(),
                ],
            }
        })
        .collect();
    Table {
        id: "jobs",
        cls: "jobs",
        noun: "jobs",
        headers: HTML_JOB_HEADERS.iter().map(|h| h.to_string()).collect(),
        num: vec![2, 3, 4, 5, 6],
        filters: vec!["outcome", "failure kind", "family", "provider"],
        search: Some("instance contains…"),
        rows,
    }
}

/// Where each job's time went.
fn time_table(report: &Report) -> Table {
    let rows = report
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let mut c = vec![Cell::text(&j.instance)];
            c.extend(time_cells(j).iter().map(|t| Cell::text(t)));
            let t = &j.time;
            let mut s = vec![Key::text(&j.instance)];
            s.extend(
                [
                    j.provider_latency_ms,
                    t.tool_ms,
                    t.setup_ms,
                    t.verify_ms,
                    t.acceptance_ms,
                    t.wait_ms,
                    j.wall_ms,
                ]
                .map(Key::num),
            );
            Row {
                j: Some(i),
                c,
                s,
                f: Vec::new(),
            }
        })
        .collect();
    Table {
        id: "time",
        cls: "",
        noun: "jobs",
        headers: TIME_HEADERS.iter().map(|h| h.to_string()).collect(),
        num: vec![1, 2, 3, 4, 5, 6, 7],
        filters: Vec::new(),
        search: Some("instance contains…"),
        rows,
    }
}

/// pass@k per job and provider (one row per group of runs).
fn passk_jobs_table(summary: &Summary) -> Option<Table> {
    let pass = summary.pass_at_k.as_ref()?;
    let ratio = |r: Option<f64>| (ratio(r), r.map_or(Key::None, Key::Number));
    let rows = pass
        .groups
        .iter()
        .map(|g| {
            let (one, one_key) = ratio(g.pass_at_1);
            let (k, k_key) = ratio(g.pass_at_k);
            Row {
                j: None,
                c: vec![
                    Cell::text(&g.job),
                    Cell::text(g.provider.as_deref().unwrap_or("")),
                    Cell::text(&g.n.to_string()),
                    Cell::text(&g.c.to_string()),
                    Cell::text(&one),
                    Cell::text(&k),
                ],
                s: vec![
                    Key::text(&g.job),
                    Key::text(g.provider.as_deref().unwrap_or("")),
                    Key::num(g.n),
                    Key::num(g.c),
                    one_key,
                    k_key,
                ],
                f: Vec::new(),
            }
        })
        .collect();
    Some(Table {
        id: "passk",
        cls: "",
        noun: "groups",
        headers: vec![
            "job".into(),
            "provider".into(),
            "n".into(),
            "c".into(),
            "pass@1".into(),
            format!("pass@{}", pass.k),
        ],
        num: vec![2, 3, 4, 5],
        filters: Vec::new(),
        search: Some("job contains…"),
        rows,
    })
}
