//! The pass-rate bar charts of `report.html` (per family, per provider), as
//! inline SVG: one horizontal bar per row with its name, percentage, counts
//! and 95% interval, the interval also drawn as an error bar (a whisker with
//! end caps) over the bar. Grows in height with the number of rows; long
//! names are shortened with the full name kept in a tooltip.

use std::fmt::Write;

use super::format::{percent, percent_ci};
use super::html::escape;
use super::summary::Figures;

const WIDTH: u32 = 900;
const LABEL_W: u32 = 220;
const BAR_W: u32 = 420;
const ROW_H: u32 = 28;
const BAR_H: u32 = 18;
const TOP: u32 = 24;
const LABEL_CHARS: usize = 30;

/// Half the height of an error bar's end caps.
const CAP: u32 = 5;

/// The x coordinate of a rate in [0, 1] on the bar.
fn x_of(rate: f64) -> f64 {
    f64::from(LABEL_W) + (f64::from(BAR_W) * rate.clamp(0.0, 1.0)).round()
}

/// The chart titled `title` (for screen readers), one bar per `(name,
/// tally)`, or a short note when there are none.
pub(super) fn pass_rate_chart(title: &str, rows: &[(&str, &Figures)]) -> String {
    if rows.is_empty() {
        return "<p class=\"muted\">No jobs yet.</p>\n".to_string();
    }
    let count = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    let height = TOP + count.saturating_mul(ROW_H) + 8;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" \
         viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\">",
        escape(title)
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
    for (i, (label, t)) in (0u32..).zip(rows) {
        let y = TOP + i * ROW_H + (ROW_H - BAR_H) / 2;
        let text_y = y + BAR_H / 2 + 5;
        let name = shorten(label, LABEL_CHARS);
        let _ = writeln!(
            svg,
            "<g><title>{}: {} succeeded of {} finished ({} pending), 95% CI {}</title>\
             <text class=\"label\" x=\"{}\" y=\"{text_y}\" text-anchor=\"end\">{}</text>\
             <rect class=\"track\" x=\"{LABEL_W}\" y=\"{y}\" width=\"{BAR_W}\" height=\"{BAR_H}\" rx=\"3\"/>",
            escape(label),
            t.tally.succeeded,
            t.tally.finished(),
            t.tally.pending,
            percent_ci(t.pass_rate_ci),
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
        if let Some(ci) = t.pass_rate_ci {
            // The whisker across the interval, with a cap at each end.
            let (x1, x2) = (x_of(ci.low), x_of(ci.high));
            let mid = y + BAR_H / 2;
            let (top, bottom) = (mid - CAP, mid + CAP);
            let _ = writeln!(
                svg,
                "<path class=\"ci\" d=\"M{x1} {mid}H{x2}M{x1} {top}V{bottom}M{x2} {top}V{bottom}\"/>"
            );
        }
        let _ = writeln!(
            svg,
            "<text class=\"value\" x=\"{}\" y=\"{text_y}\">{} <tspan class=\"muted\">{}/{} {}</tspan></text></g>",
            LABEL_W + BAR_W + 10,
            percent(t.pass_rate),
            t.tally.succeeded,
            t.tally.finished(),
            percent_ci(t.pass_rate_ci),
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
    use crate::report::summary::{FamilySummary, Summary};

    fn family_rows(families: &[FamilySummary]) -> Vec<(&str, &Figures)> {
        families
            .iter()
            .map(|f| (f.family.as_str(), &f.figures))
            .collect()
    }

    #[test]
    fn one_bar_per_family_with_its_percentage() {
        let s = Summary::of(&sample());
        let svg = pass_rate_chart("Pass rate by family", &family_rows(&s.families));
        assert_eq!(svg.matches("class=\"track\"").count(), 2);
        assert!(svg.contains("50.0%"));
        assert!(svg.contains("12.5%"));
        assert!(svg.contains("width=\"210\""));
        assert!(svg.contains("aria-label=\"Pass rate by family\""));
    }

    #[test]
    fn every_finished_row_has_an_error_bar_at_its_interval() {
        let s = Summary::of(&sample());
        let svg = pass_rate_chart("x", &family_rows(&s.families));
        assert_eq!(svg.matches("class=\"ci\"").count(), 2);
        // `parsing`: 1 of 8, Wilson [0.0224, 0.4709] on a 420-wide bar from 220.
        let ci = s.families[1].figures.pass_rate_ci.unwrap();
        let (x1, x2) = (x_of(ci.low), x_of(ci.high));
        assert_eq!((x1, x2), (229.0, 418.0));
        assert!(
            svg.contains(&format!("d=\"M{x1} 66H{x2}M{x1} 61V71M{x2} 61V71\"")),
            "{svg}"
        );
        assert!(svg.contains("95% CI [2.2%, 47.1%]</title>"));
        assert!(svg.contains("1/8 [2.2%, 47.1%]</tspan>"));
        // No interval, no whisker: nothing has finished.
        let empty = Figures::default();
        let svg = pass_rate_chart("x", &[("waiting", &empty)]);
        assert!(!svg.contains("class=\"ci\""));
    }

    #[test]
    fn many_families_grow_the_chart_and_long_names_are_shortened() {
        let families: Vec<FamilySummary> = (0..30)
            .map(|i| FamilySummary {
                family: format!("family_with_a_rather_long_name_{i}<x>"),
                figures: Figures::default(),
                first_attempt_gate: false,
            })
            .collect();
        let svg = pass_rate_chart("Pass rate by family", &family_rows(&families));
        assert!(svg.contains(&format!("height=\"{}\"", TOP + 30 * ROW_H + 8)));
        assert!(svg.contains("family_with_a_rather_long_nam…"));
        assert!(svg.contains("_29&lt;x&gt;</title>") || svg.contains("_29&lt;x&gt;:"));
        assert!(svg.contains("n/a"));
        assert!(!svg.contains("<x>"));
    }

    #[test]
    fn no_families_no_chart() {
        assert!(!pass_rate_chart("x", &[]).contains("<svg"));
    }
}
