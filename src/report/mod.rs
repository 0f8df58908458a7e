//! Reports for humans and CI, rendered from a [`Report`] derived from the event
//! log: `report.md`, `results.tsv`, `results.json`, `junit.xml` and a
//! self-contained `report.html`. Renderers are pure functions from the model to
//! text; only [`write_reports`] touches the filesystem. The statistics behind
//! the intervals and the paired comparison (`stats.rs`, `compare.rs`) are pure
//! arithmetic with a fixed-seed generator, so the same log always gives the
//! same figures.
//!
//! The model:
//!
//! - `model.rs`: the report model, a row per job instance.
//! - `from_log.rs`: the model taken from the state's summary and detail fold of
//!   each log and what `Artifacts` finds beside it: patches, transcripts, test
//!   excerpts, which logs are there; it keeps no fold of its own.
//!   `timeline.rs`: each attempt's timeline (the one type every view of a
//!   run reads), from the detail fold and a full trace's transcript.
//! - `summary.rs`: totals, per-family and per-provider summaries, the failure
//!   analysis; `passk.rs`: pass@k.
//! - `stats.rs`: the interval math: Wilson, exact sign test, seeded bootstrap;
//!   `compare.rs`: the paired provider comparison.
//! - `verdict_text.rs`, `integrity_text.rs`: the shared wording of per-test
//!   verdicts and of integrity evidence; `format.rs`: rounded quantities for
//!   the human reports.
//!
//! The five renderers:
//!
//! - `markdown.rs`: `report.md`, its tables drawn by `table/`, under the
//!   columns (headers and which are numbers, aligned right) it shares with the
//!   page's own tables (`columns.rs`).
//! - `tsv.rs`, `json.rs`, `junit.rs`.
//! - `html.rs`: `report.html`, with `chart.rs` (its bar charts) and `style.rs`
//!   (its style sheet); the page's data, its paged tables in `html_data.rs` and
//!   each job's details as blocks in `html_detail.rs`, drawn by the page's one
//!   script, `report.js`, with `textContent` only.
//!
//! The I/O edge: `write.rs` writes the files atomically, `from_data.rs` reads
//! the logs of data dirs and their artifacts, `error.rs` names the path that
//! failed. Tests: `fixture.rs`, `from_log_tests.rs`, `html_tests.rs`.
//!
//! Reports never read the workspaces or the network, and the HTML loads nothing
//! from outside itself (it links a job's logs beside its data dir, as relative
//! paths).

mod chart;
mod columns;
mod compare;
mod error;
#[cfg(test)]
mod fixture;
mod format;
mod from_data;
mod from_log;
mod html;
mod html_data;
mod html_detail;
mod integrity_text;
mod json;
mod junit;
mod markdown;
mod model;
mod noise;
mod passk;
mod stats;
mod style;
mod summary;
mod timeline;
mod tsv;
mod verdict_text;
mod write;

pub use compare::{Comparison, compare, comparisons};
pub use error::ReportError;
pub use format::iso8601;
pub use from_data::{FoldedLog, ReportBuildError, fold_logs, report_of};
pub use from_log::{Artifacts, LogSource, NoArtifacts, PROMPT_KEPT, report_from_logs};
pub use html::{render_html, render_html_linked};
pub(crate) use html_detail::{DETAIL_SCRIPT, JobDetail, job_detail};
pub use json::render_json;
pub use junit::render_junit;
pub use markdown::render_markdown;
pub use model::{
    AttemptRun, CheckResult, JobOutcome, JobResult, REPORT_SCHEMA_VERSION, Report, TEST_NAMES_KEPT,
    TestVerdict,
};
pub use noise::{Noise, TaskFlip};
pub use passk::{FamilyPass, PassAtK, PassGroup, PassMeans, ProviderPass, pass_at_k};
pub use stats::{
    BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, Interval, SIGNIFICANCE_LEVEL, Z_95, bootstrap_mean,
    bootstrap_mean_with, sign_test, wilson,
};
pub(crate) use style::DETAIL_STYLE;
pub use summary::{FailureSummary, FamilySummary, Figures, ProviderSummary, Summary};
pub(crate) use timeline::{Texts, attempts as attempt_timelines};
pub use tsv::{TSV_COLUMNS, render_tsv};
pub use write::{REPORT_FILES, write_atomic, write_atomic_with, write_replacing, write_reports};
