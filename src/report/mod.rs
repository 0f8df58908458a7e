//! Reports for humans and CI, rendered from a [`Report`] derived from the
//! event log: `report.md`, `results.tsv`, `results.json`, `junit.xml` and a
//! self-contained `report.html`. Renderers are pure functions from the model
//! to text; only [`write_reports`] touches the filesystem. The statistics
//! behind the intervals and the paired comparison (`stats.rs`,
//! `compare.rs`) are pure arithmetic with a fixed-seed generator, so the
//! same log always gives the same figures. Reports never read
//! the workspaces or the network, and the HTML loads nothing from outside
//! itself (it links a job's logs beside its data dir, as relative paths).

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
mod passk;
mod stats;
mod style;
mod summary;
mod trajectory;
mod tsv;
mod verdict_text;
mod write;

pub use compare::{Comparison, compare, comparisons};
pub use error::ReportError;
pub use format::iso8601;
pub use from_data::{FoldedLog, ReportBuildError, fold_logs, report_of};
pub use from_log::{Artifacts, LogSource, NoArtifacts, PROMPT_KEPT, report_from_logs};
pub use html::{render_html, render_html_linked};
pub use json::render_json;
pub use junit::render_junit;
pub use markdown::render_markdown;
pub use model::{
    AttemptRun, CheckResult, JobOutcome, JobResult, REPORT_SCHEMA_VERSION, Report, TEST_NAMES_KEPT,
    TestVerdict, TimelineEntry,
};
pub use passk::{FamilyPass, PassAtK, PassGroup, PassMeans, ProviderPass, pass_at_k};
pub use stats::{
    BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, Interval, SIGNIFICANCE_LEVEL, Z_95, bootstrap_mean,
    bootstrap_mean_with, sign_test, wilson,
};
pub use summary::{FailureSummary, FamilySummary, ProviderSummary, Summary, Tally};
pub use trajectory::{TranscriptStep, read_transcript};
pub use tsv::{TSV_COLUMNS, render_tsv};
pub use write::{REPORT_FILES, write_atomic, write_atomic_with, write_replacing, write_reports};
