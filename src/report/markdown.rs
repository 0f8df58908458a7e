//! `report.md`: totals, the per-job table, the test verdicts of failed jobs,
//! per-family and per-provider summaries with 95% intervals, pass@k, the
//! paired comparison of providers and the failure analysis, as
//! GitHub-flavoured Markdown.

use std::fmt::Write;

use super::format::{
    bytes, count, duration_ms, job_figures, p_value, percent, percent_ci, ratio, ratio_ci, signed,
    tally_cells, time_cells, usd, utc,
};
use super::model::{JobOutcome, JobResult, Report};
use super::passk::PassMeans;
use super::summary::{Figures, Summary};
use super::{columns, integrity_text, verdict_text};
use crate::protocol::AgentMode;
use crate::table::{Column, Table};

/// Renders `report.md`.
pub fn render_markdown(report: &Report) -> String {
    let summary = Summary::of(report);
    let mut out = String::new();
    out.push_str("# agent-runtime report\n\n");
    let _ = writeln!(
        out,
        "Generated {} from {}.\n",
        utc(report.generated_at_ms),
        sources(&report.sources)
    );
    let _ = writeln!(out, "{}\n", totals_line(&summary.totals));
    jobs(&mut out, report);
    time(&mut out, report);
    verdicts(&mut out, report);
    integrity(&mut out, report, &summary);
    families(&mut out, &summary);
    providers(&mut out, &summary);
    agents(&mut out, report);
    comparisons(&mut out, &summary);
    noise(&mut out, &summary);
    failures(&mut out, &summary);
    out
}

/// Makes text safe for one table cell: control and bidi characters (line
/// breaks too) as visible escapes, pipes escaped, and `&`, `<`, `>` as
/// entities so nothing is read as inline HTML.
pub(super) fn cell(text: &str) -> String {
    let text = crate::escape::line(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn sources(sources: &[String]) -> String {
    if sources.is_empty() {
        return "no log".to_string();
    }
    sources
        .iter()
        .map(|s| cell(s))
        .collect::<Vec<_>>()
        .join(", ")
}

fn totals_line(t: &Figures) -> String {
    format!(
        "**{} jobs**: {} succeeded, {} failed, {} cancelled, {} pending. \
         Pass rate {} (95% CI {}). Tokens {} in / {} out, cost {} ({} per success). \
         Elapsed {}, job time {} in total.",
        t.tally.jobs,
        t.tally.succeeded,
        t.tally.failed,
        t.tally.cancelled,
        t.tally.pending,
        percent(t.pass_rate),
        percent_ci(t.pass_rate_ci),
        count(t.input_tokens),
        count(t.output_tokens),
        usd(t.cost_usd),
        usd(t.cost_per_success_usd),
        duration_ms(t.elapsed_ms),
        duration_ms(t.wall_ms),
    )
}

/// Writes a table, then a blank line. Cells are escaped already.
fn table(out: &mut String, columns: Vec<Column>, rows: &[Vec<String>]) {
    let mut table = Table::new(columns);
    for row in rows {
        table.push(row.iter().map(String::as_str));
    }
    out.push_str(&table.markdown());
    out.push('\n');
}

fn dash(text: &str) -> String {
    if text.is_empty() {
        "-".to_string()
    } else {
        cell(text)
    }
}

fn jobs(out: &mut String, report: &Report) {
    out.push_str("## Jobs\n\n");
    if report.jobs.is_empty() {
        out.push_str("No jobs.\n\n");
        return;
    }
    let rows: Vec<Vec<String>> = report
        .jobs
        .iter()
        .map(|j| {
            let mut row = vec![
                cell(&j.instance),
                cell(&j.family),
                j.outcome.as_str().to_string(),
                dash(j.failure_str()),
            ];
            row.extend(job_figures(j));
            row.extend([
                if j.patch_bytes == 0 && j.patch_files == 0 {
                    "-".to_string()
                } else {
                    patch_size(j.patch_bytes, j.patch_files)
                },
                j.acceptance.as_str().to_string(),
                verdict_text::summary(j).map_or_else(|| "-".to_string(), |s| cell(&s)),
                j.baseline.baseline_words().to_string(),
                j.integrity_summary(),
            ]);
            row
        })
        .collect();
    table(out, columns::jobs(), &rows);
}

/// One line per job whose last attempt has tamper signals or forged
/// results: the evidence, each signal with what it concerns.
fn integrity(out: &mut String, report: &Report, summary: &Summary) {
    let lines: Vec<String> = report
        .jobs
        .iter()
        .filter_map(|j| {
            let record = j.integrity.as_ref().filter(|r| !r.is_clean())?;
            let mut items: Vec<String> = integrity_text::evidence(record)
                .iter()
                .map(|line| cell(line))
                .collect();
            match integrity_text::left_out(record) {
                0 => {}
                n => items.push(format!("and {n} more")),
            }
            Some(format!(
                "**{}** {}: {}",
                cell(&j.instance),
                j.integrity_summary(),
                items.join("; ")
            ))
        })
        .collect();
    out.push_str("## Integrity\n\n");
    let _ = writeln!(
        out,
        "{} in {}; signals are facts with their evidence, not verdicts \
         (a canary reported passed or dropped fails an attempt as tampered).\n",
        crate::words::count(summary.totals.signals as usize, "tamper signal"),
        crate::words::count(lines.len(), "job")
    );
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
    for j in report.jobs.iter().filter(|j| !j.stray_files().is_empty()) {
        let files: Vec<String> = j
            .stray_files()
            .iter()
            .map(|f| format!("`{}`", cell(f)))
            .collect();
        let _ = writeln!(
            out,
            "- **{}** stray files (a note, not a signal; not in the patch): {}",
            cell(&j.instance),
            files.join(", ")
        );
    }
    if !report.jobs.is_empty() {
        out.push('\n');
    }
}

/// The external agents that drove jobs, each with its mode and how many
/// jobs it drove; a contained one with what the runtime did not check.
fn agents(out: &mut String, report: &Report) {
    let mut seen: std::collections::BTreeMap<(String, AgentMode), usize> =
        std::collections::BTreeMap::new();
    for key in report.jobs.iter().filter_map(JobResult::agent_words) {
        *seen.entry(key).or_default() += 1;
    }
    if seen.is_empty() {
        return;
    }
    out.push_str("## Agents\n\n");
    for ((name, mode), jobs) in seen {
        let _ = write!(
            out,
            "- **{}**, mode: {}: {}",
            cell(&name),
            mode.as_str(),
            crate::words::count(jobs, "job")
        );
        if mode == AgentMode::Contained {
            let _ = write!(out, "; {}", super::html_detail::CONTAINED_CAVEAT);
        }
        out.push('\n');
    }
    out.push('\n');
}

/// Where each job's time went.
fn time(out: &mut String, report: &Report) {
    if report.jobs.is_empty() {
        return;
    }
    out.push_str(
        "## Where the time went

",
    );
    let rows: Vec<Vec<String>> = report
        .jobs
        .iter()
        .map(|j| {
            let mut row = vec![cell(&j.instance)];
            row.extend(time_cells(j));
            row
        })
        .collect();
    table(out, columns::time(), &rows);
}

/// Text as an inline code span: shown literally (no markup, no entities),
/// on one line, fenced by more backticks than it holds in a row.
pub(super) fn code(text: &str) -> String {
    let text = crate::escape::line(text);
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A space on both sides keeps a leading or trailing backtick apart from
    // the fence; Markdown strips one such space from each side.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// One line per failed job whose acceptance ran (its counts, then its
/// failing and missing tests) and per job whose baseline left a note; under
/// the line of one whose tests did not build or collect, the first error.
fn verdicts(out: &mut String, report: &Report) {
    let lines: Vec<(String, Option<&str>)> = report
        .jobs
        .iter()
        .filter_map(|j| {
            let harness = j
                .harness_output
                .as_deref()
                .filter(|_| j.outcome == JobOutcome::Failed);
            verdict_line(j).map(|line| (line, harness))
        })
        .collect();
    if lines.is_empty() {
        return;
    }
    out.push_str("## Test verdicts\n\n");
    for (line, harness) in lines {
        let _ = writeln!(out, "- {line}");
        if let Some(text) = harness {
            out.push_str(&indented_block(text));
        }
    }
    out.push('\n');
}

/// `text` as a fenced block inside a list item: indented two spaces, its
/// fence longer than any run of backticks it holds.
fn indented_block(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = format!("\n  {fence}text\n");
    for line in text.lines() {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(out, "  {fence}\n");
    out
}

fn verdict_line(j: &JobResult) -> Option<String> {
    let failed = j.outcome == JobOutcome::Failed;
    let summary = verdict_text::summary(j).filter(|_| failed);
    if summary.is_none() && j.baseline_reason.is_none() {
        return None;
    }
    let kind = match j.failure_kind {
        Some(kind) if failed => kind.as_str(),
        _ => j.outcome.as_str(),
    };
    let mut line = format!("**{}** {kind}", cell(&j.instance));
    if let Some(summary) = summary {
        line.push_str(&format!(": {}", cell(&summary)));
        let (shown, rest) = verdict_text::names(&j.tests);
        let mut names: Vec<String> = shown
            .iter()
            .map(|(name, mark)| format!("{} ({})", code(name), mark.as_str()))
            .collect();
        names.extend(verdict_text::more(rest));
        if !names.is_empty() {
            line.push_str(&format!("; {}", names.join(", ")));
        }
    }
    if let Some(reason) = &j.baseline_reason {
        line.push_str(&format!("; baseline: {}", cell(reason)));
    }
    Some(line)
}

/// `1.2 KiB, 1 file`.
pub(super) fn patch_size(patch_bytes: u64, files: u32) -> String {
    let noun = if files == 1 { "file" } else { "files" };
    format!("{}, {files} {noun}", bytes(patch_bytes))
}

fn families(out: &mut String, summary: &Summary) {
    out.push_str("## Families\n\n");
    if summary.families.is_empty() {
        out.push_str("No families.\n\n");
        return;
    }
    let rows: Vec<Vec<String>> = summary
        .families
        .iter()
        .map(|f| {
            let gate = if f.first_attempt_gate { "pass" } else { "fail" };
            let mut row = vec![cell(&f.family), gate.to_string()];
            row.extend(tally_cells("-", &f.figures));
            row
        })
        .collect();
    out.push_str(
        "The first-attempt gate passes when every instance of the family succeeded on its \
         first attempt, run in one go; the pass rate counts every attempt.\n\n",
    );
    table(out, columns::families(), &rows);
}

fn providers(out: &mut String, summary: &Summary) {
    if !summary.providers.is_empty() {
        out.push_str("## Providers\n\n");
        let rows: Vec<Vec<String>> = summary
            .providers
            .iter()
            .map(|p| {
                let mut row = vec![cell(&p.provider)];
                row.extend(tally_cells("-", &p.figures));
                row.push(count(p.figures.provider_calls));
                row.push(
                    p.figures
                        .mean_latency_ms()
                        .map_or_else(|| "-".to_string(), duration_ms),
                );
                row
            })
            .collect();
        table(out, columns::providers(), &rows);
    }
    let Some(pass) = &summary.pass_at_k else {
        return;
    };
    let _ = writeln!(
        out,
        "## pass@k (k = {})\n\nUnbiased estimates from n runs with c succeeded, each run's \
         sample its first attempt (a retry's success does not count; a restart after a \
         fault of the infrastructure is the same attempt); pass@{} is n/a until k runs of a \
         group have a sample. Means over jobs, with 95% percentile bootstrap intervals over \
         the jobs.\n",
        pass.k, pass.k
    );
    let at_k = format!("pass@{}", pass.k);
    let rows: Vec<Vec<String>> = pass
        .providers
        .iter()
        .map(|p| {
            let mut row = vec![dash(p.provider.as_deref().unwrap_or(""))];
            row.extend(means_cells(&p.means));
            row
        })
        .collect();
    table(out, columns::means(&["provider"], &at_k), &rows);
    let rows: Vec<Vec<String>> = pass
        .families
        .iter()
        .map(|f| {
            let mut row = vec![cell(&f.family), dash(f.provider.as_deref().unwrap_or(""))];
            row.extend(means_cells(&f.means));
            row
        })
        .collect();
    table(out, columns::means(&["family", "provider"], &at_k), &rows);
    let rows: Vec<Vec<String>> = pass
        .groups
        .iter()
        .map(|g| {
            vec![
                cell(&g.job),
                dash(g.provider.as_deref().unwrap_or("")),
                g.n.to_string(),
                g.c.to_string(),
                ratio(g.pass_at_1),
                ratio(g.pass_at_k),
            ]
        })
        .collect();
    table(out, columns::passk_jobs(&at_k), &rows);
}

/// Column names of a [`PassMeans`], pass@k named `at_k`.
pub(super) fn means_headers(at_k: &str) -> [&str; 6] {
    ["jobs", "complete", "pass@1", "95% CI", at_k, "95% CI"]
}

/// The cells of a [`PassMeans`]; plain text, nothing to escape.
pub(super) fn means_cells(m: &PassMeans) -> [String; 6] {
    [
        m.groups.to_string(),
        m.complete.to_string(),
        ratio(m.pass_at_1),
        ratio_ci(m.pass_at_1_ci),
        ratio(m.pass_at_k),
        ratio_ci(m.pass_at_k_ci),
    ]
}

/// Column names of the paired comparison.
pub(super) const COMPARISON_HEADERS: [&str; 14] = [
    "a",
    "b",
    "jobs",
    "a wins",
    "b wins",
    "ties",
    "pass@1 a",
    "pass@1 b",
    "difference",
    "95% CI",
    "p",
    "MDE",
    "noise",
    "verdict",
];

/// The plain figures of a comparison (columns `jobs` to `p`), shared by
/// the Markdown and HTML tables; they hold no markup.
pub(super) fn comparison_figures(c: &super::compare::Comparison) -> [String; 11] {
    [
        c.jobs.to_string(),
        c.a_wins.to_string(),
        c.b_wins.to_string(),
        c.ties.to_string(),
        format!("{:.3}", c.a_pass_at_1),
        format!("{:.3}", c.b_pass_at_1),
        signed(c.difference),
        ratio_ci(c.difference_ci),
        p_value(c.p_value),
        c.mde.map_or_else(|| "-".to_string(), |m| format!("{m:.3}")),
        if c.within_noise {
            "within noise".to_string()
        } else {
            "-".to_string()
        },
    ]
}

/// What the paired comparison means, in one paragraph.
pub(super) const COMPARISON_NOTE: &str = "Each pair of providers on the jobs both finished: \
     a provider wins a job when its pass fraction over the job's runs is higher. \
     p is the two-sided exact sign test (McNemar's exact test) on wins against losses, \
     ties left out; significant below 0.05. The difference is the mean per-job \
     difference in pass@1 (a − b), with a 95% paired bootstrap interval over the jobs; \
     \"within noise\" when that interval holds 0. MDE is the smallest difference the \
     runs' own noise lets the comparison tell (α = 0.05, power 0.8, from each job's flip \
     rate under both; it needs every shared job run at least twice, `--repeat`).";

fn comparisons(out: &mut String, summary: &Summary) {
    if summary.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Paired comparison\n\n{COMPARISON_NOTE}\n");
    let rows: Vec<Vec<String>> = summary
        .comparisons
        .iter()
        .map(|c| {
            let mut row = vec![cell(&c.a), cell(&c.b)];
            row.extend(comparison_figures(c));
            row.push(cell(&c.verdict()));
            row
        })
        .collect();
    table(out, columns::comparisons(), &rows);
}

/// Each provider's flip rates over the jobs it ran more than once.
fn noise(out: &mut String, summary: &Summary) {
    if summary.noise.is_empty() {
        return;
    }
    out.push_str(
        "## Noise\n\nHow often a job's outcome flips between identical runs of one provider \
         (the rate two of its runs disagree), over the jobs it ran at least twice.\n\n",
    );
    let rows: Vec<Vec<String>> = summary
        .noise
        .iter()
        .map(|n| {
            let flips: Vec<String> = n
                .flips
                .iter()
                .map(|f| {
                    format!(
                        "{} {}/{} ({:.2})",
                        code(&f.job),
                        f.succeeded,
                        f.runs,
                        f.flip_rate
                    )
                })
                .collect();
            vec![
                cell(&n.provider),
                n.tasks.to_string(),
                n.flipping.to_string(),
                format!("{:.3}", n.flip_rate),
                if flips.is_empty() {
                    "-".to_string()
                } else {
                    flips.join(", ")
                },
            ]
        })
        .collect();
    table(out, columns::noise(), &rows);
}

fn failures(out: &mut String, summary: &Summary) {
    out.push_str("## Failure analysis\n\n");
    if summary.failures.is_empty() {
        out.push_str("No failures.\n");
        return;
    }
    // Failures of the machine or of a job's setup are not the model's:
    // named apart, so a pass rate is read against the model's own.
    let infrastructure: u32 = summary
        .failures
        .iter()
        .filter(|f| f.kind.is_infrastructure())
        .map(|f| f.count)
        .sum();
    if infrastructure > 0 {
        out.push_str(&format!(
            "{} of the infrastructure (not the model's): {}.\n\n",
            crate::words::count(infrastructure as usize, "failure"),
            summary
                .failures
                .iter()
                .filter(|f| f.kind.is_infrastructure())
                .map(|f| format!("{} {}", f.count, f.kind))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // Forged results are the model's, but not a failed fix: named apart.
    if let Some(tampered) = summary
        .failures
        .iter()
        .find(|f| f.kind == crate::protocol::FailureKind::Tampered)
    {
        let instances: Vec<String> = tampered.instances.iter().map(|i| cell(i)).collect();
        out.push_str(&format!(
            "{} (forged results or, under strict integrity, tamper signals): {}.\n\n",
            crate::words::count(tampered.count as usize, "tampered job"),
            instances.join(", ")
        ));
    }
    let rows: Vec<Vec<String>> = summary
        .failures
        .iter()
        .map(|f| {
            let instances: Vec<String> = f.instances.iter().map(|i| cell(i)).collect();
            let kind = if f.kind.is_infrastructure() {
                format!("{} (infrastructure)", f.kind)
            } else if f.kind == crate::protocol::FailureKind::Tampered {
                format!("{} (forged results)", f.kind)
            } else {
                f.kind.to_string()
            };
            vec![kind, f.count.to_string(), instances.join(", ")]
        })
        .collect();
    table(out, columns::failures(), &rows);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample;

    #[test]
    fn cells_escape_pipes_markup_and_line_breaks() {
        assert_eq!(cell("a | b"), "a \\| b");
        assert_eq!(cell("<script>&"), "&lt;script&gt;&amp;");
        assert_eq!(
            cell("one\r\ntwo\nthree\tfour"),
            "one\\u{d}\\u{a}two\\u{a}three\\u{9}four"
        );
        assert_eq!(cell("x\x1b[2J\u{202e}y"), "x\\u{1b}[2J\\u{202e}y");
    }

    #[test]
    fn every_table_row_has_as_many_cells_as_its_header() {
        let md = render_markdown(&sample());
        let mut expected = None;
        for line in md.lines() {
            if !line.starts_with('|') {
                expected = None;
                continue;
            }
            let cells = line.replace("\\|", "").matches('|').count();
            match expected {
                None => expected = Some(cells),
                Some(n) => assert_eq!(cells, n, "{line}"),
            }
        }
    }

    #[test]
    fn markdown_has_every_section() {
        let md = render_markdown(&sample());
        for heading in [
            "## Jobs",
            "## Test verdicts",
            "## Families",
            "## Providers",
            "## pass@k (k = 3)",
            "## Paired comparison",
            "## Failure analysis",
        ] {
            assert!(md.contains(heading), "{heading}");
        }
        // Markup from jobs is escaped, except inside code spans (test
        // names), where Markdown shows it literally.
        assert_eq!(md.matches("<script>").count(), 1);
        assert!(md.contains("``render::`tick` & <script>\\u{a}next``"));
    }

    #[test]
    fn a_contained_agent_s_jobs_say_their_mode_and_their_stray_files() {
        let mut report = sample();
        assert!(!render_markdown(&report).contains("## Agents"));
        let job = &mut report.jobs[0];
        job.agent = Some(crate::protocol::AgentChoice {
            name: "claude-code".into(),
            version: Some("2.1.197".into()),
            mode: crate::protocol::AgentMode::Contained,
            command: Vec::new(),
            verify_rounds: None,
            memory: None,
        });
        job.integrity
            .get_or_insert_with(Default::default)
            .stray_files = vec!["reproduce.py".into()];
        let md = render_markdown(&report);
        assert!(
            md.contains("- **claude-code@2.1.197**, mode: contained: 1 job; its own tools"),
            "{md}"
        );
        assert!(
            md.contains("stray files (a note, not a signal; not in the patch): `reproduce.py`")
        );
        let html = crate::report::html_detail::details(&report.jobs[0], None);
        let text = serde_json::to_string(&html).unwrap();
        assert!(text.contains("mode: contained"), "{text}");
        assert!(text.contains("reproduce.py"), "{text}");
    }

    #[test]
    fn a_harness_excerpt_is_a_block_no_backtick_run_closes() {
        assert_eq!(
            indented_block("error[E0425]: cannot find `reply`\n --> a.rs"),
            "\n  ```text\n  error[E0425]: cannot find `reply`\n   --> a.rs\n  ```\n\n"
        );
        let block = indented_block("```\nx");
        assert!(block.starts_with("\n  ````text\n"), "{block}");
    }

    #[test]
    fn code_spans_hold_any_text_literally() {
        assert_eq!(code("a::b"), "`a::b`");
        assert_eq!(code("a `b` c"), "``a `b` c``");
        assert_eq!(code("`x``"), "``` `x`` ```");
        assert_eq!(code("a\nb"), "`a\\u{a}b`");
        assert_eq!(code("a\u{202e}b"), "`a\\u{202e}b`");
    }

    #[test]
    fn failed_jobs_have_a_verdict_line_with_marked_names() {
        let md = render_markdown(&sample());
        assert!(md.contains(
            "- **tokenize@alpha#1** tests_failed: F2P 1/2, P2P 3/3; `test/acceptance::sums_to_n` (failing)\n"
        ));
        assert!(md.contains("`test/acceptance::case_20` (missing), and 4 more\n"));
        assert!(!md.contains("case_21"));
        assert!(md.contains("- **tokenize@beta#3** acceptance_failed: not verified per test\n"));
        assert!(md.contains(
            "- **parse_header** invalid_baseline; baseline: every test passes at baseline: the task is already solved\n"
        ));
        assert!(md.contains("- **tokenize@alpha#2** succeeded; baseline: the tests do not build"));
        // A name with markup stays literal inside its code span.
        assert!(md.contains("``render::`tick` & <script>\\u{a}next`` (failing)"));
        // No line for a job that failed before acceptance and has no note.
        assert!(!md.contains("- **tokenize@beta#1**"));
    }

    #[test]
    fn rates_carry_their_intervals() {
        let md = render_markdown(&sample());
        // Totals: 2 of 10 finished, Wilson [5.7%, 51.0%].
        assert!(
            md.contains("Pass rate 20.0% (95% CI [5.7%, 51.0%])."),
            "{md}"
        );
        // The family `parsing`: 1 of 8 finished. (Cells are padded to
        // their column: the rows are read with runs of spaces as one.)
        let rows = md
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| {
                l.split(' ')
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(rows.contains("| 12.5% | [2.2%, 47.1%] |"), "{md}");
        assert!(rows.contains(
            "| alpha | beta | 1 | 1 | 0 | 0 | 0.333 | 0.000 | +0.333 | [0.333, 0.333] | 1.0000 | 0.934 | within noise | no significant difference |"
        ));
    }

    #[test]
    fn tables_align_numbers_right_and_pad_every_row_alike() {
        let md = render_markdown(&sample());
        assert!(md.contains("| failure kind "), "{md}");
        let failures = md
            .lines()
            .skip_while(|l| !l.starts_with("| failure kind "))
            .take_while(|l| l.starts_with('|'))
            .collect::<Vec<_>>();
        assert!(failures.len() > 2, "{md}");
        // `count` is a number: its delimiter ends in `:`.
        let delimiter: Vec<&str> = failures[1].split('|').map(str::trim).collect();
        assert!(delimiter[1].starts_with("---") && !delimiter[1].ends_with(':'));
        assert!(delimiter[2].ends_with(':'), "{}", failures[1]);
        // Every line of a table is as wide on a terminal as its header.
        for table in md.split("\n\n").filter(|t| t.starts_with('|')) {
            let widths: Vec<usize> = table.lines().map(crate::table::width).collect();
            assert!(widths.iter().all(|w| *w == widths[0]), "{table}");
        }
    }

    #[test]
    fn empty_report_renders() {
        let md = render_markdown(&Report::new(0, vec![]));
        assert!(md.contains("No jobs."));
        assert!(md.contains("No failures."));
        assert!(!md.contains("## Providers"));
        assert!(!md.contains("## Paired comparison"));
    }

    #[test]
    fn markdown_snapshot() {
        insta::assert_snapshot!(render_markdown(&sample()));
    }
}
