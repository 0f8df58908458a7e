//! Tables that fit: a small scripted batch, then `status`, the batch's
//! summary and `watch` at 60 columns, measured by display width; no line is
//! wider, no word is split (a cut cell ends in `…`), and `watch` on a short
//! screen keeps its header and says how many jobs it left out.

use std::path::PathBuf;

use crate::harness::{Run, Sandbox};

fn fixture(name: &str) -> String {
    format!("{}/evaluation/bench/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Scripted jobs in `DIR/jobs`: ids long and short, families that are not
/// the ids, some succeeding and some failing (`no_edit`).
fn jobs(sb: &Sandbox) -> PathBuf {
    let dir = sb.path().join("jobs");
    std::fs::create_dir_all(&dir).unwrap();
    let specs = [
        ("off_by_one", "rust", "write_verify_finish.jsonl"),
        ("clamp_range", "rust", "no_edit.jsonl"),
        (
            "exercism-python-a_rather_long_exercise_name_from_a_real_corpus",
            "exercism-python",
            "write_verify_finish.jsonl",
        ),
        (
            "swebench-django__django-11099-with-an-id-longer-than-sixty-columns-alone",
            "swebench",
            "no_edit.jsonl",
        ),
        ("two-fer", "javascript", "write_verify_finish.jsonl"),
        ("leap", "javascript", "write_verify_finish.jsonl"),
    ];
    for (id, family, script) in specs {
        let toml = format!(
            "id = {id:?}\nfamily = {family:?}\nprompt = \"Write out.txt, verify, finish.\"\n\
             source = {source:?}\neditable = [\"**\"]\nallow = [\"true\"]\nverify = [\"true\"]\n\n\
             [limits]\nattempts = 1\n\n\
             [provider]\nkind = \"script\"\nscript = {script:?}\n",
            source = fixture("source"),
            script = fixture(script),
        );
        std::fs::write(dir.join(format!("{id}.toml")), toml).unwrap();
    }
    dir
}

fn at(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = sb.command(args);
    command.envs(env.iter().copied());
    Run::from(command.output().unwrap())
}

/// Display width, as a terminal counts columns.
fn width(line: &str) -> usize {
    agent_runtime::table::width(line)
}

/// Every line of `text` at most `limit` columns wide, and every word of it
/// either a word of `whole` (the same output uncut), a short header, or
/// the start of a word ending in `…`: nothing wraps, nothing is split.
#[track_caller]
fn fits_without_split(text: &str, whole: &str, limit: usize) {
    let mut words: Vec<&str> = whole.split_whitespace().collect();
    words.extend(["TRY", "STEP", "ACCEPT"]);
    for line in text.lines() {
        assert!(
            width(line) <= limit,
            "{} columns: {line:?}\n{text}",
            width(line)
        );
        for word in line.split_whitespace() {
            // Cut at the end (prose) or in the middle (an id): what is
            // shown is the start, or the start and the end, of a word.
            let ok = match word.split_once('…') {
                Some((head, "")) => words.iter().any(|w| w.starts_with(head)),
                Some((head, tail)) => words.iter().any(|w| {
                    w.starts_with(head) && w.ends_with(tail) && w.len() > head.len() + tail.len()
                }),
                None => words.contains(&word),
            };
            assert!(
                ok,
                "{word:?} is not a whole word of the uncut output:\n{text}"
            );
        }
    }
}

/// The summary the batch printed: from the table's header to the counts
/// (the path of the report after it is a path, whatever its width).
fn summary(stdout: &str) -> &str {
    let start = stdout
        .find("JOB ")
        .unwrap_or_else(|| panic!("no summary table:\n{stdout}"));
    let rest = &stdout[start..];
    rest.find("report: ").map_or(rest, |end| &rest[..end])
}

#[test]
fn status_and_the_batch_summary_fit_60_columns() {
    let sb = Sandbox::new();
    let jobs = jobs(&sb);
    let narrow = at(
        &sb,
        &["batch", "DATA", jobs.to_str().unwrap()],
        &[("COLUMNS", "60")],
    )
    .code(1);
    let table = summary(&narrow.stdout);
    assert!(table.contains("succeeded 4/6"), "{table}");
    let status = at(&sb, &["status", "DATA"], &[("COLUMNS", "60")]).ok();
    let whole = sb.run(&["status", "DATA"]).ok();
    // Uncut, every id is whole.
    assert!(
        whole
            .stdout
            .contains("swebench-django__django-11099-with-an-id-longer-than-sixty-columns-alone"),
        "{}",
        whole.stdout
    );
    fits_without_split(&status.stdout, &whole.stdout, 60);
    // The cause lines under it too, broken at spaces.
    assert!(status.stderr.contains(": no_edit: "), "{}", status.stderr);
    fits_without_split(&status.stderr, &whole.stderr, 60);
    assert!(status.stdout.starts_with("JOB "), "{}", status.stdout);
    assert!(status.stdout.contains('…'), "{}", status.stdout);
    assert!(
        status.stdout.contains("6 jobs: 2 failed, 4 succeeded"),
        "{}",
        status.stdout
    );
    // The summary's words are the table's and the counts line's.
    let uncut = format!(
        "{}succeeded 4/6 (failed 2, cancelled 0, pending 0); 6 attempts run now",
        whole.stdout
    );
    fits_without_split(table, &uncut, 60);
    // Each row keeps its id's start and its state.
    for (id, state) in [("off_by_one", "succeeded"), ("clamp_range", "failed")] {
        assert!(
            status
                .stdout
                .lines()
                .any(|l| l.starts_with(id) && l.contains(state)),
            "{id}: {}",
            status.stdout
        );
    }
}

#[test]
fn watch_on_a_short_screen_keeps_its_header_in_view() {
    let sb = Sandbox::new();
    let jobs = jobs(&sb);
    sb.run(&["batch", "DATA", jobs.to_str().unwrap()]).code(1);
    let watch = at(
        &sb,
        &["watch", "DATA"],
        &[("COLUMNS", "60"), ("LINES", "6")],
    )
    .ok();
    let frame = watch.stdout.as_str();
    // Every job is terminal: one frame, and watch exits.
    let lines: Vec<&str> = frame.lines().collect();
    assert!(
        lines.len() <= 5,
        "a frame of {} lines:\n{frame}",
        lines.len()
    );
    assert!(lines[0].starts_with("JOB "), "{frame}");
    // The failed jobs are shown first; the rest are counted.
    assert!(lines[1].contains("failed"), "{frame}");
    assert!(lines.contains(&"… 4 more jobs"), "{frame}");
    assert!(frame.contains("6 jobs: 2 failed, 4 succeeded"), "{frame}");
    let whole = sb.run(&["status", "DATA"]).ok();
    let notes = format!("{}{}… 4 more jobs", whole.stdout, whole.stderr);
    fits_without_split(frame, &notes, 60);
    // Without LINES (and not on a terminal) the frame is whole.
    let all = at(&sb, &["watch", "DATA"], &[("COLUMNS", "60")]).ok();
    assert!(!all.stdout.contains("more jobs"), "{}", all.stdout);
    assert!(
        all.stdout.contains("clamp_range: no_edit"),
        "{}",
        all.stdout
    );
}
