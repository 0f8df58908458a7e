//! The columns of the tables `report.md` and `report.html` both show: each
//! table's headers and which of them are numbers, aligned right, given once
//! as the one table model's columns (Markdown draws them with
//! [`crate::table::Table::markdown`], the page reads their headers and
//! alignment).

use std::ops::RangeInclusive;

use super::format::{JOB_HEADERS, TALLY_HEADERS, TIME_HEADERS};
use super::markdown::{COMPARISON_HEADERS, means_headers};
use crate::table::Column;

/// Columns named `headers`, the ones in `right` aligned right.
fn columns(headers: &[&str], right: RangeInclusive<usize>) -> Vec<Column> {
    headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let column = Column::new(h);
            if right.contains(&i) {
                column.right()
            } else {
                column
            }
        })
        .collect()
}

/// The per-job table (attempts to cost are figures).
pub(super) fn jobs() -> Vec<Column> {
    columns(&JOB_HEADERS, 4..=11)
}

/// Where each job's time went.
pub(super) fn time() -> Vec<Column> {
    columns(&TIME_HEADERS, 1..=TIME_HEADERS.len() - 1)
}

/// A family, its first-attempt gate and its tally.
pub(super) fn families() -> Vec<Column> {
    let mut headers = vec!["family", "first-attempt gate"];
    headers.extend(TALLY_HEADERS);
    columns(&headers, 2..=headers.len() - 1)
}

/// A provider, its tally, its calls and their mean latency.
pub(super) fn providers() -> Vec<Column> {
    let mut headers = vec!["provider"];
    headers.extend(TALLY_HEADERS);
    headers.extend(["calls", "mean latency"]);
    columns(&headers, 1..=headers.len() - 1)
}

/// Mean pass@1 and pass@k (named `at_k`) per group named by `keys`.
pub(super) fn means(keys: &[&str], at_k: &str) -> Vec<Column> {
    let mut headers = keys.to_vec();
    headers.extend(means_headers(at_k));
    columns(&headers, keys.len()..=headers.len() - 1)
}

/// pass@1 and pass@k (named `at_k`) per job and provider.
pub(super) fn passk_jobs(at_k: &str) -> Vec<Column> {
    columns(&["job", "provider", "n", "c", "pass@1", at_k], 2..=5)
}

/// The paired comparison of providers (`jobs` to `p` are figures).
pub(super) fn comparisons() -> Vec<Column> {
    columns(&COMPARISON_HEADERS, 2..=11)
}

/// Each provider's flip rates.
pub(super) fn noise() -> Vec<Column> {
    columns(
        &[
            "provider",
            "jobs run twice+",
            "flipping",
            "flip rate",
            "flipping jobs (succeeded/runs, rate)",
        ],
        1..=3,
    )
}

/// Each failure kind, its count and its instances.
pub(super) fn failures() -> Vec<Column> {
    columns(&["failure kind", "count", "instances"], 1..=1)
}
