//! Rounded, human-readable quantities for the human reports (Markdown and
//! HTML). Machine reports (TSV, JSON, JUnit) keep raw numbers.

use super::stats::Interval;

/// Columns of the per-job tables of `report.md` and `report.html`.
pub(super) const JOB_HEADERS: [&str; 17] = [
    "instance",
    "family",
    "outcome",
    "failure kind",
    "attempts",
    "steps",
    "invalid",
    "tokens in",
    "tokens out",
    "provider latency",
    "wall",
    "cost",
    "patch",
    "acceptance",
    "tests",
    "baseline",
    "integrity",
];

/// The plain figures of a job shared by the tables (columns `attempts` to
/// `cost`); they hold no markup, so no renderer needs to escape them.
pub(super) fn job_figures(j: &super::model::JobResult) -> [String; 8] {
    [
        format!("{}/{}", j.attempts, j.max_attempts),
        j.steps.to_string(),
        j.invalid_decisions.to_string(),
        count(j.input_tokens),
        count(j.output_tokens),
        duration_ms(j.provider_latency_ms),
        duration_ms(j.wall_ms),
        usd(j.cost_usd),
    ]
}

/// Columns of the "where the time went" table.
pub(super) const TIME_HEADERS: [&str; 8] = [
    "instance",
    "model",
    "tools",
    "setup",
    "verify",
    "acceptance",
    "waiting",
    "wall",
];

/// A job's time by where it went (after its instance cell).
pub(super) fn time_cells(j: &super::model::JobResult) -> [String; 7] {
    [
        duration_ms(j.provider_latency_ms),
        duration_ms(j.time.tool_ms),
        duration_ms(j.time.setup_ms),
        duration_ms(j.time.verify_ms),
        duration_ms(j.time.acceptance_ms),
        duration_ms(j.time.wait_ms),
        duration_ms(j.wall_ms),
    ]
}

/// `$0.0123`, or `-` without a price.
pub(super) fn usd(cost: Option<f64>) -> String {
    match cost {
        None => "-".to_string(),
        Some(c) if c >= 100.0 => format!("${c:.2}"),
        Some(c) => format!("${c:.4}"),
    }
}

/// Columns of a tally (per family, per provider) in `report.md` and `report.html`.
pub(super) const TALLY_HEADERS: [&str; 14] = [
    "jobs",
    "succeeded",
    "failed",
    "cancelled",
    "pending",
    "pass rate",
    "95% CI",
    "tokens in",
    "tokens out",
    "median wall",
    "cost",
    "cost / success",
    "tampered",
    "signalled",
];

/// A tally's cells; `missing` stands for a median that does not exist.
pub(super) fn tally_cells(missing: &str, t: &super::summary::Figures) -> Vec<String> {
    vec![
        t.tally.jobs.to_string(),
        t.tally.succeeded.to_string(),
        t.tally.failed.to_string(),
        t.tally.cancelled.to_string(),
        t.tally.pending.to_string(),
        percent(t.pass_rate),
        percent_ci(t.pass_rate_ci),
        count(t.input_tokens),
        count(t.output_tokens),
        t.median_wall_ms
            .map_or_else(|| missing.to_string(), duration_ms),
        usd(t.cost_usd),
        usd(t.cost_per_success_usd),
        t.tampered.to_string(),
        t.signalled.to_string(),
    ]
}

/// `850 ms`, `4.2 s`, `3 m 05 s`, `1 h 02 m`.
pub(super) fn duration_ms(ms: u64) -> String {
    if ms < 1_000 {
        return format!("{ms} ms");
    }
    if ms < 60_000 {
        return format!("{:.1} s", ms as f64 / 1_000.0);
    }
    let secs = ms / 1_000;
    if secs < 3_600 {
        return format!("{} m {:02} s", secs / 60, secs % 60);
    }
    format!("{} h {:02} m", secs / 3_600, secs % 3_600 / 60)
}

/// `0 B`, `512 B`, `1.2 KiB`, `3.4 MiB`.
pub(super) fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    if n < 1024 {
        return format!("{n} B");
    }
    let n = n as f64;
    if n < KIB * KIB {
        format!("{:.1} KiB", n / KIB)
    } else if n < KIB * KIB * KIB {
        format!("{:.1} MiB", n / (KIB * KIB))
    } else {
        format!("{:.1} GiB", n / (KIB * KIB * KIB))
    }
}

/// `12,400`: digits grouped by thousands.
pub(super) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `66.7%`, or `n/a` when undefined.
pub(super) fn percent(rate: Option<f64>) -> String {
    match rate {
        Some(r) => format!("{:.1}%", r * 100.0),
        None => "n/a".to_string(),
    }
}

/// `0.333`, or `n/a` when undefined.
pub(super) fn ratio(rate: Option<f64>) -> String {
    match rate {
        Some(r) => format!("{r:.3}"),
        None => "n/a".to_string(),
    }
}

/// `[35.4%, 88.7%]`, or `n/a` when undefined.
pub(super) fn percent_ci(ci: Option<Interval>) -> String {
    match ci {
        Some(i) => format!("[{:.1}%, {:.1}%]", i.low * 100.0, i.high * 100.0),
        None => "n/a".to_string(),
    }
}

/// `[0.354, 0.887]`, `[-0.100, 0.500]`, or `n/a` when undefined.
pub(super) fn ratio_ci(ci: Option<Interval>) -> String {
    match ci {
        Some(i) => format!("[{:.3}, {:.3}]", i.low, i.high),
        None => "n/a".to_string(),
    }
}

/// `+0.700`, `-0.250`, `0.000`: a difference with its sign.
pub(super) fn signed(value: f64) -> String {
    if value.abs() < 0.0005 {
        "0.000".to_string()
    } else {
        format!("{value:+.3}")
    }
}

/// A p-value to 4 decimals: `0.0391`, `1.0000`, `< 0.0001`.
pub(super) fn p_value(p: f64) -> String {
    if p < 0.0001 {
        "< 0.0001".to_string()
    } else {
        format!("{p:.4}")
    }
}

/// `2026-01-01 00:00:00 UTC` from milliseconds since the Unix epoch.
pub(super) fn utc(ms: u64) -> String {
    timestamp(ms).strftime("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// ISO 8601 in UTC with milliseconds, `2026-01-01T00:00:00.000+00:00`,
/// from milliseconds since the Unix epoch (what other tools' formats read).
pub fn iso8601(ms: u64) -> String {
    timestamp(ms)
        .strftime("%Y-%m-%dT%H:%M:%S%.3f+00:00")
        .to_string()
}

/// The instant `ms` after the epoch; one past what a timestamp can hold
/// (year 9999) reads as the last instant it can.
fn timestamp(ms: u64) -> jiff::Timestamp {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .unwrap_or(jiff::Timestamp::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_to_a_readable_unit() {
        assert_eq!(duration_ms(0), "0 ms");
        assert_eq!(duration_ms(850), "850 ms");
        assert_eq!(duration_ms(4_210), "4.2 s");
        assert_eq!(duration_ms(185_000), "3 m 05 s");
        assert_eq!(duration_ms(3_720_000), "1 h 02 m");
    }

    #[test]
    fn sizes_and_counts() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1_536), "1.5 KiB");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(12_400), "12,400");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn rates() {
        assert_eq!(percent(Some(2.0 / 3.0)), "66.7%");
        assert_eq!(percent(None), "n/a");
        assert_eq!(ratio(Some(1.0 / 3.0)), "0.333");
        let ci = Interval {
            low: 0.354_2,
            high: 0.886_9,
        };
        assert_eq!(percent_ci(Some(ci)), "[35.4%, 88.7%]");
        assert_eq!(ratio_ci(Some(ci)), "[0.354, 0.887]");
        assert_eq!(percent_ci(None), "n/a");
        assert_eq!(
            ratio_ci(Some(Interval {
                low: -0.1,
                high: 0.5
            })),
            "[-0.100, 0.500]"
        );
        assert_eq!(signed(0.7), "+0.700");
        assert_eq!(signed(-0.25), "-0.250");
        assert_eq!(signed(-0.0001), "0.000");
        assert_eq!(p_value(20.0 / 512.0), "0.0391");
        assert_eq!(p_value(1.0), "1.0000");
        assert_eq!(p_value(1e-7), "< 0.0001");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_767_225_600_000), "2026-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000 + 3_661_000), "2000-02-29 01:01:01 UTC");
        assert_eq!(
            iso8601(951_782_400_000 + 3_661_042),
            "2000-02-29T01:01:01.042+00:00"
        );
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000+00:00");
        assert!(utc(u64::MAX).starts_with("9999-12-"), "{}", utc(u64::MAX));
    }
}
