use super::fixture::{batch, row, view};
use super::*;
use crate::protocol::FailureKind;
use crate::state::{JobState, Summary};
use crate::table::width;

#[track_caller]
fn fits(text: &str, limit: usize) {
    for line in text.lines() {
        assert!(width(line) <= limit, "{} columns: {line:?}", width(line));
    }
}

#[test]
fn the_status_table_at_120_columns() {
    let text = render_text(&batch(), Some(120));
    fits(&text, 120);
    insta::assert_snapshot!("status_120", text);
}

#[test]
fn the_status_table_at_80_columns() {
    let text = render_text(&batch(), Some(80));
    fits(&text, 80);
    insta::assert_snapshot!("status_80", text);
}

#[test]
fn the_status_table_at_60_columns() {
    let text = render_text(&batch(), Some(60));
    fits(&text, 60);
    insta::assert_snapshot!("status_60", text);
}

#[test]
fn into_a_pipe_the_status_table_is_whole() {
    let text = render_text(&batch(), None);
    assert!(text.contains("FAMILY"), "{text}");
    assert!(text.contains("(waiting for provider: HTTP 429 Too Many Requests (retry 2))"));
    assert!(text.contains("python-wrong_comparator@openai#2"), "{text}");
    assert!(text.ends_with("5 jobs: 1 succeeded, 1 failed, 2 running, 1 queued\n"));
}

#[test]
fn the_family_column_is_left_out_when_every_family_is_the_id() {
    let text = render_text(&view(vec![row("a", "a", JobState::Queued)]), None);
    assert!(!text.contains("FAMILY"), "{text}");
    assert!(text.ends_with("1 job: 1 queued\n"), "{text}");
}

#[test]
fn wide_ids_are_measured_by_display_width() {
    let jobs = vec![
        row(
            "日本語のジョブ名前はとても長いです",
            "家族",
            JobState::Succeeded,
        ),
        row(
            "emoji-🚀-rocket-launch-sequence-job",
            "家族",
            JobState::Failed,
        ),
    ];
    for limit in [80, 60, 40, 30] {
        let text = render_text(&view(jobs.clone()), Some(limit));
        fits(&text, limit);
        assert!(text.lines().all(|l| !l.is_empty()), "{text}");
    }
}

#[test]
fn a_frame_that_fits_is_the_table_and_its_notes() {
    let screen = Screen {
        columns: Some(80),
        lines: Some(40),
    };
    let frame = render_frame(&batch(), screen, Some("the trailer"));
    assert!(frame.starts_with("JOB "), "{frame}");
    assert!(frame.contains("django__django-11099: step 4"), "{frame}");
    assert!(frame.ends_with("the trailer\n"), "{frame}");
    assert!(!frame.contains("more job"), "{frame}");
}

#[test]
fn a_short_screen_keeps_the_header_and_says_how_many_rows_it_left_out() {
    let screen = Screen {
        columns: Some(60),
        lines: Some(6),
    };
    let frame = render_frame(&batch(), screen, None);
    fits(&frame, 60);
    // One line stays free for the cursor: the screen never scrolls.
    assert!(frame.lines().count() <= 5, "{frame}");
    // Running jobs first (then failed ones), shown in the log's order.
    insta::assert_snapshot!(frame, @r"
    JOB                   STATE     TRY  STEPS  FAILURE  ACCEPT
    django__django-11099  running   1/3      4  -        -
    rust-clamp_range      running…  1/3      0  -        -
    … 3 more jobs
    5 jobs: 1 succeeded, 1 failed, 2 running, 1 queued
    ");
}

#[test]
fn a_frame_of_many_jobs_fits_any_number_of_lines() {
    let jobs: Vec<Summary> = (0..500)
        .map(|i| {
            row(
                &format!("job-{i:04}"),
                "f",
                if i % 7 == 0 {
                    JobState::Failed
                } else {
                    JobState::Succeeded
                },
            )
        })
        .collect();
    let view = view(jobs);
    for lines in [1, 2, 3, 4, 10, 24, 499, 503] {
        let screen = Screen {
            columns: Some(60),
            lines: Some(lines),
        };
        let frame = render_frame(&view, screen, Some("nothing is running the queued job"));
        fits(&frame, 60);
        assert!(
            frame.lines().count() < lines.max(4),
            "{lines} lines:\n{frame}"
        );
        if lines >= 5 {
            assert!(frame.starts_with("JOB "), "{frame}");
            assert!(frame.contains("more jobs\n"), "{frame}");
            // The failed jobs come first.
            assert!(
                frame.lines().nth(1).is_some_and(|l| l.contains("failed")),
                "{frame}"
            );
        }
    }
    // Enough lines for everything: no line says any were left out.
    let screen = Screen {
        columns: Some(60),
        lines: Some(600),
    };
    assert!(!render_frame(&view, screen, None).contains('…'));
}

#[test]
fn notes_that_do_not_fit_are_counted() {
    let mut jobs = Vec::new();
    for i in 0..3 {
        let mut failed = row(&format!("job-{i}"), "f", JobState::Failed);
        failed.failure_kind = Some(FailureKind::VerifyFailed);
        failed.cause = Some(format!("the verify command failed, exit {i}"));
        jobs.push(failed);
    }
    let screen = Screen {
        columns: Some(60),
        lines: Some(8),
    };
    let frame = render_frame(&view(jobs), screen, None);
    assert!(frame.lines().count() <= 7, "{frame}");
    insta::assert_snapshot!(frame, @r"
    JOB    STATE   TRY  STEPS  STEP  FAILURE        ACCEPTANCE
    job-0  failed  1/3      0  -     verify_failed  -
    job-1  failed  1/3      0  -     verify_failed  -
    job-2  failed  1/3      0  -     verify_failed  -
    3 jobs: 3 failed
    job-0: verify_failed: the verify command failed, exit 0
    … 2 more notes
    ");
}

#[test]
fn a_hundred_failures_show_twenty_causes_and_say_how_many_more() {
    let jobs = (0..99)
        .map(|i| {
            let mut failed = row(&format!("job-{i:02}"), "f", JobState::Failed);
            failed.failure_kind = Some(FailureKind::TestsFailed);
            failed.cause = Some(format!("failing: t{i}"));
            failed
        })
        .collect();
    let notes = render_notes(&view(jobs));
    let causes: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("tests_failed"))
        .collect();
    assert_eq!(causes.len(), super::view::CAUSE_LINES);
    assert_eq!(
        notes.last().map(String::as_str),
        Some("… 79 more; see `status --json` or the report")
    );
    // Twenty or fewer: every one, nothing added.
    let few = capped_causes(vec!["a".into(), "b".into()], "x");
    assert_eq!(few, ["a", "b"]);
}
