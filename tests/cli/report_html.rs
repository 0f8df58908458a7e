//! report.html in a real browser (headless Chromium over the DevTools
//! protocol): a report of 10,000 jobs opens quickly and stays usable (a
//! page of the jobs table, its pager, a job's details on demand), its jobs
//! table fits a 1000 px window, and text from jobs that holds markup stays
//! text. The reports are synthetic report models, written as the runtime
//! writes them. Each test skips, saying why, where there is no Chromium.

use std::path::Path;
use std::time::Duration;

use agent_runtime::protocol::{Action, AttemptTimeline, FailureKind, Moment};
use agent_runtime::report::{
    CheckResult, JobOutcome, JobResult, Report, TestVerdict, write_reports,
};
use agent_runtime::verdict::{EXCERPTS_VERSION, TestExcerpt, TestExcerpts, Verdict};

use agent_runtime_test_support::require_tool;

use crate::browser::{Browser, chromium};

fn entry(attempt: u32, step: u32, at: u64, kind: &str, text: &str, ok: bool) -> (u32, u32, Action) {
    let kind = kind.parse().expect("a timeline kind");
    (attempt, step, Action::new(at, kind, text, ok))
}

/// A job as a sweep makes many of: a dozen timeline entries, a short
/// patch, and, for one in three, two failing tests with their output.
fn synthetic_job(i: usize) -> JobResult {
    let family = format!("family_{}", i % 12);
    let provider = ["alpha", "beta"][i % 2];
    let instance = format!("task_{:05}@{provider}#{}", i / 2, 1 + i % 3);
    let mut j = JobResult::new(&instance, &format!("task_{:05}", i / 2), &family);
    j.provider = Some(provider.into());
    j.repeat = Some(1 + (i % 3) as u32);
    j.attempts = 1;
    j.max_attempts = 2;
    j.steps = 6 + (i % 7) as u32;
    j.provider_calls = j.steps;
    j.input_tokens = 20_000 + (i as u64 * 37) % 9_000;
    j.output_tokens = 900 + (i as u64 * 13) % 400;
    j.provider_latency_ms = 5_000 + (i as u64 * 101) % 3_000;
    j.wall_ms = 30_000 + (i as u64 * 997) % 20_000;
    j.cost_usd = Some(0.01 + (i % 50) as f64 / 1000.0);
    j.baseline = CheckResult::Passed;
    j.acceptance = CheckResult::Passed;
    j.outcome = JobOutcome::Succeeded;
    j.prompt = Some(format!(
        "Fix the defect in src/lib.rs of task {i}: the function must return the sum of 1..=n, \
         and every hidden test must pass. Do not change the tests."
    ));
    j.trace = Some("metadata".into());
    let patch = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,6 +1,6 @@\n pub fn sum_up_to(n: u64) -> u64 {\n     let mut total = 0;\n-    for i in 1..n {\n+    for i in 1..=n {\n         total += i;\n     }\n     total\n";
    j.patch = Some(patch.into());
    j.patch_bytes = patch.len() as u64;
    j.patch_files = 1;
    j.logs = vec![
        format!("runs/{instance}/1/baseline.log"),
        format!("runs/{instance}/1/verify-1.log"),
        format!("runs/{instance}/1/acceptance.log"),
        format!("runs/{instance}/1/patch.diff"),
    ];
    let mut timeline = vec![entry(
        1,
        0,
        0,
        "baseline",
        "baseline fails as required (2 fail-to-pass, 3 pass-to-pass)",
        true,
    )];
    for step in 1..=5u32 {
        let at = u64::from(step) * 4_000;
        timeline.push(entry(
            1,
            step,
            at,
            "read_file",
            "step: read_file (3,100 in / 120 out, 900 ms)",
            true,
        ));
        timeline.push(entry(
            1,
            step,
            at + 500,
            "command",
            "cargo exit 0 in 2.1 s",
            true,
        ));
    }
    timeline.push(entry(1, 0, 28_000, "patch", "patch 212 B, 1 file", true));
    timeline.push(entry(
        1,
        0,
        29_000,
        "acceptance",
        "acceptance passed: F2P 2/2, P2P 3/3",
        true,
    ));
    j.timeline = AttemptTimeline::from_flat(timeline);
    j.tests = TestVerdict::of(&Verdict {
        f2p_passed: 2,
        f2p_total: 2,
        p2p_passed: 3,
        p2p_total: 3,
        ..Verdict::default()
    });
    if i.is_multiple_of(3) {
        j.outcome = JobOutcome::Failed;
        j.failure_kind = Some(FailureKind::TestsFailed);
        j.acceptance = CheckResult::Failed;
        j.cause = Some("2 tests failed: test/acceptance::matches_the_closed_form, …".into());
        let failing = [
            "test/acceptance::matches_the_closed_form",
            "test/acceptance::zero_and_one",
        ];
        j.tests = TestVerdict::of(&Verdict {
            f2p_passed: 0,
            f2p_total: 2,
            p2p_passed: 3,
            p2p_total: 3,
            failing: failing.iter().map(|s| s.to_string()).collect(),
            ..Verdict::default()
        });
        j.test_excerpts = Some(TestExcerpts {
            version: EXCERPTS_VERSION,
            tests: failing
                .iter()
                .map(|name| TestExcerpt {
                    name: name.to_string(),
                    status: "failing".into(),
                    timed_out: false,
                    excerpt: Some(format!(
                        "thread '{name}' panicked at tests/acceptance.rs:12:9:\nassertion `left == right` failed: n = 1\n  left: 0\n right: 1\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
                    )),
                })
                .collect(),
            left_out: 0,
        });
    }
    j
}

fn synthetic_report(jobs: usize) -> Report {
    let mut report = Report::new(1_767_225_600_000, vec!["data/events.log".into()]);
    report.jobs = (0..jobs).map(synthetic_job).collect();
    report
}

/// A function of the page that opens job `i`'s details (as a click on its
/// link does) and resolves to the details element once the page's own
/// `hashchange` handler has drawn them.
const OPEN_JOB: &str = "(function(i){return new Promise(function(done){\
    window.addEventListener('hashchange',function(){done(document.getElementById('job-detail'));},{once:true});\
    location.hash='#job-'+i;});})";

/// What opening a report measured.
struct Opened {
    bytes: u64,
    load: Duration,
    first_paint_ms: f64,
    ready_ms: f64,
}

/// Writes `report` into `data/report/` as the runtime does (the report of
/// a log `data/events.log`) and opens it.
fn open(browser: &mut Browser, session: &str, report: &mut Report, data: &Path) -> Opened {
    report.sources = vec![data.join("events.log").display().to_string()];
    let files = write_reports(report, &data.join("report")).unwrap();
    let html = files.iter().find(|f| f.ends_with("report.html")).unwrap();
    if let Ok(keep) = std::env::var("KEEP_REPORT_HTML") {
        std::fs::copy(html, format!("{keep}-{}.html", report.jobs.len())).unwrap();
    }
    let bytes = std::fs::metadata(html).unwrap().len();
    let load = browser.open(session, html).unwrap();
    let paint = browser
        .eval(
            session,
            "(performance.getEntriesByName('first-contentful-paint')[0] || {startTime: -1}).startTime",
        )
        .unwrap();
    // Everything the page's script does at load is done by then.
    let ready = browser
        .eval(
            session,
            "performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd",
        )
        .unwrap();
    Opened {
        bytes,
        load,
        first_paint_ms: paint.as_f64().unwrap_or(-1.0),
        ready_ms: ready.as_f64().unwrap_or(-1.0),
    }
}

#[test]
fn a_report_of_ten_thousand_jobs_opens_quickly_and_stays_usable() {
    if require_tool(
        "a_report_of_ten_thousand_jobs_opens_quickly_and_stays_usable",
        chromium(),
    )
    .is_none()
    {
        return;
    }
    let mut browser = Browser::launch().unwrap();
    let page = browser.page(1000, 800).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for jobs in [1_000, 10_000] {
        let mut report = synthetic_report(jobs);
        let opened = open(
            &mut browser,
            &page,
            &mut report,
            &tmp.path().join(jobs.to_string()),
        );
        eprintln!(
            "REPORT html jobs={jobs} bytes={} first_paint_ms={:.0} ready_ms={:.0} load_ms={}",
            opened.bytes,
            opened.first_paint_ms,
            opened.ready_ms,
            opened.load.as_millis()
        );
        // Generous bounds (the target is 3 s at 10,000 jobs on a loaded
        // 2-core machine): the page must not take tens of seconds.
        assert!(opened.first_paint_ms >= 0.0, "no first paint recorded");
        assert!(
            opened.first_paint_ms < 15_000.0,
            "first paint {:.0} ms",
            opened.first_paint_ms
        );
        assert!(
            opened.ready_ms < 20_000.0,
            "ready after {:.0} ms",
            opened.ready_ms
        );
        assert!(opened.bytes < jobs as u64 * 4_096, "{} bytes", opened.bytes);

        // A page of the table, a count of all, a pager that goes on.
        let rows = browser
            .eval(&page, "document.querySelectorAll('#jobs tbody tr').length")
            .unwrap();
        assert_eq!(rows, 100);
        let count = browser
            .eval(
                &page,
                "document.querySelector('#jobs-table .filters .muted').textContent",
            )
            .unwrap();
        assert_eq!(count, format!("{jobs} of {jobs} jobs"));
        let next = browser
            .eval(
                &page,
                "(function(){var b=document.querySelectorAll('#jobs-table .pager button')[1];b.click();\
                 return document.querySelector('#jobs tbody tr td a').textContent;})()",
            )
            .unwrap();
        assert_eq!(next, report.jobs[100].instance);
        // Filtering by outcome leaves the failed third.
        let failed = browser
            .eval(
                &page,
                "(function(){var s=document.querySelector('#jobs-table select');s.value='failed';\
                 s.dispatchEvent(new Event('change'));\
                 return document.querySelector('#jobs-table .filters .muted').textContent;})()",
            )
            .unwrap();
        let third = report
            .jobs
            .iter()
            .filter(|j| j.outcome == JobOutcome::Failed)
            .count();
        assert_eq!(failed, format!("{third} of {jobs} jobs"));
        // The last job's details, on demand, with its test's own output.
        let last = jobs - 1 - (jobs - 1) % 3;
        let details = browser
            .eval(
                &page,
                &format!("{OPEN_JOB}({last}).then(function(d){{return d.textContent;}})"),
            )
            .unwrap();
        let details = details.as_str().unwrap();
        assert!(details.contains(&report.jobs[last].instance), "{details}");
        assert!(details.contains("left: 0\n right: 1"), "{details}");
        assert!(
            details.contains("Fix the defect in src/lib.rs"),
            "{details}"
        );
        // Where its time went, as the viewer draws it.
        let bar = browser
            .eval(
                &page,
                "document.querySelectorAll('#job-detail .timebar .seg').length + ' ' + \
                 document.querySelector('#job-detail .timelegend').textContent",
            )
            .unwrap();
        let bar = bar.as_str().unwrap_or_default();
        assert!(bar.starts_with("1 model "), "{bar}");
    }
}

#[test]
fn the_jobs_table_fits_a_1000_px_window() {
    if require_tool("the_jobs_table_fits_a_1000_px_window", chromium()).is_none() {
        return;
    }
    let mut browser = Browser::launch().unwrap();
    let page = browser.page(1000, 900).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut report = synthetic_report(60);
    // Long names must wrap, not push columns off-screen.
    report.jobs[0].instance =
        "a_job_with_a_very_long_identifier_that_goes_on_and_on@some_provider_name#3".into();
    report.jobs[0].family = "a_family_name_that_is_long_as_well".into();
    open(&mut browser, &page, &mut report, tmp.path());
    let widths = browser
        .eval(
            &page,
            "(function(){var t=document.getElementById('jobs'),w=t.parentNode;\
             var r=t.getBoundingClientRect();\
             return [t.scrollWidth, w.clientWidth, Math.ceil(r.right), document.documentElement.clientWidth,\
             document.documentElement.scrollWidth];})()",
        )
        .unwrap();
    let w: Vec<i64> = widths
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as i64)
        .collect();
    eprintln!(
        "jobs table at 1000 px: scrollWidth={} clientWidth={} right={} page clientWidth={} page scrollWidth={}",
        w[0], w[1], w[2], w[3], w[4]
    );
    assert!(w[0] <= w[1], "the table is wider than its box: {w:?}");
    assert!(w[2] <= w[3], "the table ends off-screen: {w:?}");
    assert!(w[4] <= w[3], "the page scrolls sideways: {w:?}");
    // The screenshot shows the jobs table.
    browser
        .eval(&page, "document.getElementById('jobs').scrollIntoView()")
        .unwrap();
    let shot = Path::new("/tmp/report-1000px.png");
    browser.screenshot(&page, shot).unwrap();
    assert!(std::fs::metadata(shot).unwrap().len() > 1_000);
}

#[test]
fn text_from_jobs_that_holds_markup_renders_as_text() {
    if require_tool(
        "text_from_jobs_that_holds_markup_renders_as_text",
        chromium(),
    )
    .is_none()
    {
        return;
    }
    let mut browser = Browser::launch().unwrap();
    let page = browser.page(1000, 800).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut report = synthetic_report(3);
    let hostile = "<script>window.pwned=1</script>";
    let breakout = "</script><script>window.pwned=2</script><img src=x onerror=\"window.pwned=3\">";
    let j = &mut report.jobs[0];
    j.instance = format!("job{hostile}");
    j.family = format!("<img src=x onerror=\"window.pwned=4\">{hostile}");
    j.cause = Some(breakout.into());
    j.prompt = Some(format!("Fix it. {breakout}"));
    j.patch = Some(format!("+{breakout}\n"));
    j.logs = vec![
        format!("runs/{hostile}/1/acceptance.log"),
        "javascript:window.pwned=5".into(),
    ];
    if let Some(excerpts) = j.test_excerpts.as_mut() {
        excerpts.tests[0].excerpt = Some(breakout.into());
        excerpts.tests[0].name = hostile.into();
    }
    if let Some(Moment::Step(first)) = j.timeline[0].moments.get_mut(1) {
        first.actions[0].text = breakout.into();
        first.headline = breakout.into();
    }
    open(&mut browser, &page, &mut report, tmp.path());
    let seen = browser
        .eval(
            &page,
            &format!(
                "{OPEN_JOB}(0).then(function(d){{\
                 d.querySelectorAll('details.step').forEach(function(s){{s.open=true;}});\
                 return {{\
                   pwned: window.pwned === undefined ? null : window.pwned,\
                   scripts: document.querySelectorAll('script').length,\
                   images: document.querySelectorAll('img').length,\
                   row: document.querySelector('#jobs tbody tr td').textContent,\
                   detail: d.textContent,\
                   hrefs: Array.prototype.map.call(d.querySelectorAll('a[href]'), function(a){{return a.getAttribute('href');}})\
                 }};}})"
            ),
        )
        .unwrap();
    assert_eq!(seen["pwned"], serde_json::Value::Null, "{seen}");
    assert_eq!(
        seen["scripts"], 2,
        "only the data and the page's script: {seen}"
    );
    assert_eq!(seen["images"], 0, "{seen}");
    let row = seen["row"].as_str().unwrap();
    assert!(row.contains(&format!("job{hostile}")), "{row}");
    let detail = seen["detail"].as_str().unwrap();
    for text in [hostile, breakout, &format!("Fix it. {breakout}")] {
        assert!(detail.contains(text), "{text} in {detail}");
    }
    for href in seen["hrefs"].as_array().unwrap() {
        let href = href.as_str().unwrap();
        assert!(!href.contains(':') && !href.contains('<'), "{href}");
    }
}
