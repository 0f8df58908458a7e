//! The per-family pass-rate bar chart of `report.html`, as inline SVG: one
//! horizontal bar per family with its name, percentage and counts. Grows in
//! height with the number of families; long names are shortened with the
//! full name kept in a tooltip.

use std::fmt::Write;

use super::format::percent;
use super::html::escape;
use super::summary::FamilySummary;

const WIDTH: u32 = 800;
const LABEL_W: u32 = 220;
const BAR_W: u32 = 420;
const ROW_H: u32 = 28;
const BAR_H: u32 = 18;
const TOP: u32 = 24;
const LABEL_CHARS: usize = 30;

/// The chart, or a short note when there are no families.
pub fn pass_rate_chart(families: &[FamilySummary]) -> String {
    if families.is_empty() {
        return "<p class=\"muted\">No jobs yet.</p>\n".to_string();
    }
    let rows = u32::try_from(families.len()).unwrap_or(u32::MAX);
    let height = TOP + rows.saturating_mul(ROW_H) + 8;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg class=\"chart\" role=\"img\" aria-label=\"Pass rate by family\" \
         viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\">"
    );
    // Gridlines at 0, 25, 50, 75 and 100 percent, labelled on top.
    for tick in [0u32, 25, 50, 75, 100] {
        let x = LABEL_W + BAR_W * tick / 100;
        let _ = writeln!(
            svg,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>\
             <text class=\"tick\" x=\"{x}\" y=\"14\" text-anchor=\"middle\">{tick}%</text>",
            TOP - 4,
            height - 4
        );
    }
    for (i, family) in (0u32..).zip(families) {
        let y = TOP + i * ROW_H + (ROW_H - BAR_H) / 2;
        let text_y = y + BAR_H / 2 + 5;
        let t = &family.tally;
        let name = shorten(&family.family, LABEL_CHARS);
        let _ = writeln!(
            svg,
            "<g><title>{}: {} accepted of {} finished ({} pending)</title>\
             <text class=\"label\" x=\"{}\" y=\"{text_y}\" text-anchor=\"end\">{}</text>\
             <rect class=\"track\" x=\"{LABEL_W}\" y=\"{y}\" width=\"{BAR_W}\" height=\"{BAR_H}\" rx=\"3\"/>",
            escape(&family.family),
            t.accepted,
            t.jobs - t.pending,
            t.pending,
            LABEL_W - 10,
            escape(&name),
        );
        if let Some(rate) = t.pass_rate {
            let w = (f64::from(BAR_W) * rate.clamp(0.0, 1.0)).round();
            let _ = writeln!(
                svg,
                "<rect class=\"bar {}\" x=\"{LABEL_W}\" y=\"{y}\" width=\"{w}\" height=\"{BAR_H}\" rx=\"3\"/>",
                rate_class(rate)
            );
        }
        let _ = writeln!(
            svg,
            "<text class=\"value\" x=\"{}\" y=\"{text_y}\">{} <tspan class=\"muted\">{}/{}</tspan></text></g>",
            LABEL_W + BAR_W + 10,
            percent(t.pass_rate),
            t.accepted,
            t.jobs - t.pending,
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// `good` from 80%, `fair` from 40%, `poor` below.
fn rate_class(rate: f64) -> &'static str {
    if rate >= 0.8 {
        "good"
    } else if rate >= 0.4 {
        "fair"
    } else {
        "poor"
    }
}

/// At most `max` characters, ending in `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;
    use crate::report::summary::{Summary, Tally};

    #[test]
    fn one_bar_per_family_with_its_percentage() {
        let s = Summary::of(&sample());
        let svg = pass_rate_chart(&s.families);
        assert_eq!(svg.matches("class=\"track\"").count(), 2);
        assert!(svg.contains("50.0%"));
        assert!(svg.contains("12.5%"));
        assert!(svg.contains("width=\"210\""));
    }

    #[test]
    fn many_families_grow_the_chart_and_long_names_are_shortened() {
        let families: Vec<FamilySummary> = (0..30)
            .map(|i| FamilySummary {
                family: format!("family_with_a_rather_long_name_{i}<x>"),
                tally: Tally::default(),
            })
            .collect();
        let svg = pass_rate_chart(&families);
        assert!(svg.contains(&format!("height=\"{}\"", TOP + 30 * ROW_H + 8)));
        assert!(svg.contains("family_with_a_rather_long_nam…"));
        assert!(svg.contains("_29&lt;x&gt;</title>") || svg.contains("_29&lt;x&gt;:"));
        assert!(svg.contains("n/a"));
        assert!(!svg.contains("<x>"));
    }

    #[test]
    fn no_families_no_chart() {
        assert!(!pass_rate_chart(&[]).contains("<svg"));
    }
}
