use super::*;

/// Every line of `text` at most `limit` columns wide, by display width.
#[track_caller]
fn fits(text: &str, limit: usize) {
    for line in text.lines() {
        assert!(width(line) <= limit, "{} columns: {line:?}", width(line));
    }
}

/// A table like `status`'s: an id, a family that goes first, a state
/// shortened at words, a number, a list that goes.
fn jobs<'a>(rows: &[[&'a str; 5]]) -> Table<'a> {
    let mut table = Table::new(vec![
        Column::new("JOB").shorten_at(4, Shorten::Middle, 12),
        Column::new("FAMILY").drop_at(1),
        Column::new("STATE").shorten_at(2, Shorten::AtWords, 9),
        Column::new("ATTEMPT")
            .right()
            .short_header(3, "TRY")
            .drop_at(6),
        Column::new("NOTES")
            .shorten_at(5, Shorten::AtWords, 12)
            .drop_at(5),
    ]);
    for row in rows {
        table.push(*row);
    }
    table
}

const ROWS: [[&str; 5]; 3] = [
    ["off_by_one", "rust", "succeeded", "1/3", "-"],
    [
        "a_rather_long_job_identifier",
        "exercism-rust",
        "running (waiting for provider: 429)",
        "2/3",
        "one two three four five",
    ],
    ["short", "python", "queued", "0/3", "-"],
];

#[test]
fn display_width_counts_wide_characters_twice_and_marks_none() {
    assert_eq!(width("job"), 3);
    assert_eq!(width("日本語"), 6);
    assert_eq!(width("🚀"), 2);
    assert_eq!(width("e\u{301}"), 1);
    assert_eq!(width("…"), 1);
}

#[test]
fn cutting_never_splits_a_character_and_ends_in_an_ellipsis() {
    assert_eq!(cut("off_by_one", 20), "off_by_one");
    assert_eq!(cut("off_by_one", 6), "off_b…");
    // A wide character that would stick out is left out whole.
    assert_eq!(cut("日本語ジョブ", 5), "日本…");
    assert_eq!(cut("日本語ジョブ", 4), "日…");
    assert_eq!(cut("🚀🚀🚀", 4), "🚀…");
    assert_eq!(cut("abc", 0), "");
}

#[test]
fn cutting_at_words_keeps_whole_words_only() {
    let state = "running (waiting for provider: 429)";
    assert_eq!(cut_words(state, 40), state);
    assert_eq!(cut_words(state, 18), "running (waiting…");
    assert_eq!(cut_words(state, 12), "running…");
    // Punctuation left hanging before the mark goes.
    assert_eq!(cut_words("alpha, beta, gamma", 13), "alpha, beta…");
    assert_eq!(cut_words("alpha, beta, gamma", 9), "alpha…");
    // Not even the first word fits: the mark alone, no half word.
    assert_eq!(cut_words("unbreakable words", 5), "…");
    assert_eq!(cut_words("日本語 ジョブ 名前", 14), "日本語 ジョブ…");
    assert_eq!(cut_words("日本語 ジョブ 名前", 13), "日本語…");
}

#[test]
fn wrapping_breaks_at_spaces_and_keeps_long_words_whole() {
    assert_eq!(
        wrap("succeeded 3/5 (failed 1, cancelled 0, pending 1)", 21),
        ["succeeded 3/5 (failed", "1, cancelled 0,", "pending 1)"]
    );
    assert_eq!(
        wrap("a /very/long/path/name b", 8),
        ["a", "/very/long/path/name", "b"]
    );
    assert_eq!(wrap("", 10), [""]);
    assert_eq!(rows("abcdef", 4), 2);
    assert_eq!(rows("", 4), 1);
}

#[test]
fn an_unlimited_table_shows_every_column_whole() {
    let text = jobs(&ROWS).render(None);
    insta::assert_snapshot!(text, @r"
    JOB                           FAMILY         STATE                                ATTEMPT  NOTES
    off_by_one                    rust           succeeded                                1/3  -
    a_rather_long_job_identifier  exercism-rust  running (waiting for provider: 429)      2/3  one two three four five
    short                         python         queued                                   0/3  -
    ");
}

#[test]
fn turns_are_taken_in_order_until_the_table_fits() {
    let table = jobs(&ROWS);
    // The family goes first...
    let text = table.render(Some(100));
    fits(&text, 100);
    assert!(
        !text.contains("FAMILY") && text.contains("(waiting for provider: 429)"),
        "{text}"
    );
    // ...then the state is shortened at a word, the header abbreviated
    // and the ids shortened...
    let text = table.render(Some(60));
    fits(&text, 60);
    insta::assert_snapshot!(text, @r"
    JOB           STATE      TRY  NOTES
    off_by_one    succeeded  1/3  -
    a_r…entifier  running…   2/3  one two three four five
    short         queued     0/3  -
    ");
    // ...then the notes shortened (the column as wide as what is left)...
    let text = table.render(Some(45));
    fits(&text, 45);
    insta::assert_snapshot!(text, @r"
    JOB           STATE      TRY  NOTES
    off_by_one    succeeded  1/3  -
    a_r…entifier  running…   2/3  one two…
    short         queued     0/3  -
    ");
    // ...then they go.
    let text = table.render(Some(30));
    fits(&text, 30);
    insta::assert_snapshot!(text, @r"
    JOB           STATE      TRY
    off_by_one    succeeded  1/3
    a_r…entifier  running…   2/3
    short         queued     0/3
    ");
}

#[test]
fn wide_characters_are_measured_by_the_columns_they_take() {
    let table = jobs(&[
        [
            "日本語のジョブ名前です",
            "家族",
            "succeeded",
            "1/1",
            "🚀 launched 🚀 again",
        ],
        ["ascii_job", "f", "failed", "1/1", "-"],
    ]);
    let text = table.render(None);
    // The header's columns line up with the wide cells under them.
    let lines: Vec<&str> = text.lines().collect();
    let state_at = |line: &str| {
        let at = line
            .find("STATE")
            .or_else(|| line.find("succeeded"))
            .unwrap();
        width(&line[..at])
    };
    assert_eq!(state_at(lines[0]), state_at(lines[1]), "{text}");
    for limit in [60, 40, 30, 25, 20] {
        let text = table.render(Some(limit));
        fits(&text, limit);
    }
    let text = table.render(Some(30));
    insta::assert_snapshot!(text, @r"
    JOB          STATE      TRY
    日…名前です  succeeded  1/1
    ascii_job    failed     1/1
    ");
}

#[test]
fn at_sixty_columns_no_line_is_wider_and_no_word_is_split() {
    let state = "running (waiting for provider: connection refused)";
    let mut table = Table::new(vec![
        Column::new("JOB").shorten_at(6, Shorten::Middle, 20),
        Column::new("STATE").shorten_at(1, Shorten::AtWords, 9),
        Column::new("FAILURE").drop_at(7),
        Column::new("NOTES").shorten_at(2, Shorten::AtWords, 16),
    ]);
    table.push(["off_by_one", state, "-", "the first note of the job"]);
    table.push(["clamp_range", "failed", "acceptance_failed", "-"]);
    let text = table.render(Some(60));
    fits(&text, 60);
    let words: Vec<&str> = [
        "off_by_one",
        state,
        "acceptance_failed",
        "the first note of the job",
    ]
    .iter()
    .flat_map(|cell| cell.split_whitespace())
    .chain([
        "JOB",
        "STATE",
        "FAILURE",
        "NOTES",
        "clamp_range",
        "failed",
        "-",
    ])
    .collect();
    for shown in text.split_whitespace() {
        let whole = shown.trim_end_matches('…');
        assert!(
            words.contains(&whole),
            "{whole:?} is no whole word:\n{text}"
        );
    }
}

#[test]
fn an_id_too_long_even_alone_is_cut_in_the_middle() {
    let mut table = Table::new(vec![
        Column::new("JOB").shorten_at(1, Shorten::Middle, 16),
        Column::new("STATE"),
    ]);
    table.push([
        "an_identifier_longer_than_the_whole_terminal_is_wide",
        "queued",
    ]);
    let text = table.render(Some(20));
    fits(&text, 20);
    insta::assert_snapshot!(text, @r"
    JOB           STATE
    an_…_is_wide  queued
    ");
}

#[test]
fn when_nothing_fits_one_column_is_cut_to_the_width() {
    let mut table = Table::new(vec![Column::new("STATE"), Column::new("VERDICT")]);
    table.push(["succeeded", "invalid_baseline"]);
    for limit in [0, 1, 3, 8, 12] {
        let text = table.render(Some(limit));
        fits(&text, limit);
        assert_eq!(text.lines().count(), 2, "{text}");
    }
    assert_eq!(table.render(Some(5)), "STATE\nsucc…\n");
    assert_eq!(table.render(Some(0)), "\n\n");
}

#[test]
fn omitted_columns_never_show_and_missing_cells_are_empty() {
    let mut table = Table::new(vec![
        Column::new("A"),
        Column::new("B").omitted(true),
        Column::new("C"),
    ]);
    table.push(["1", "2", "3"]);
    table.push(["4"]);
    assert_eq!(table.len(), 2);
    assert_eq!(table.render(None), "A  C\n1  3\n4\n");
}

#[test]
fn markdown_marks_alignment_and_pads_by_display_width() {
    let mut table = Table::new(vec![Column::new("job"), Column::new("n").right()]);
    table.push(["日本語", "1"]);
    table.push(["a", "12345"]);
    assert_eq!(
        table.markdown(),
        "| job    |     n |\n\
         | ------ | ----: |\n\
         | 日本語 |     1 |\n\
         | a      | 12345 |\n"
    );
    // Every line is as wide on a terminal as the others.
    let md = table.markdown();
    let widths: Vec<usize> = md.lines().map(width).collect();
    assert!(widths.iter().all(|w| *w == widths[0]), "{widths:?}");
}

#[test]
fn markdown_keeps_every_column_whole() {
    let mut table = jobs(&ROWS);
    table.push(["x"]);
    let md = table.markdown();
    assert!(md.starts_with("| JOB "), "{md}");
    assert!(
        md.contains("| running (waiting for provider: 429) |"),
        "{md}"
    );
    assert!(md.contains("| a_rather_long_job_identifier |"), "{md}");
    assert!(md.contains("| ATTEMPT |"), "{md}");
    assert!(!md.contains(ELLIPSIS), "{md}");
    // A short row is filled with empty cells.
    assert_eq!(md.lines().last().map(|l| l.matches('|').count()), Some(6));
    // Omitted columns stay out, as in the terminal.
    let mut table = Table::new(vec![Column::new("a"), Column::new("b").omitted(true)]);
    table.push(["1", "2"]);
    assert_eq!(table.markdown(), "| a   |\n| --- |\n| 1   |\n");
}

#[test]
fn markdown_of_an_empty_table_is_its_header() {
    let table = Table::new(vec![Column::new("instance"), Column::new("count").right()]);
    assert_eq!(
        table.markdown(),
        "| instance | count |\n| -------- | ----: |\n"
    );
    assert_eq!(Table::new(Vec::new()).markdown(), "");
}

#[test]
fn an_id_is_cut_in_the_middle_keeping_what_tells_instances_apart() {
    let id = "rust-difference-of-squares@llama#2";
    let cut = cut_middle(id, 28);
    assert_eq!(width(&cut), 28);
    assert!(cut.ends_with("@llama#2"), "{cut}");
    assert!(cut.starts_with("rust-"), "{cut}");
    assert_eq!(cut, "rust-diff…of-squares@llama#2");
    // Two instances stay apart however narrow.
    assert_ne!(
        cut_middle(id, 12),
        cut_middle("rust-difference-of-squares@llama#3", 12)
    );
    assert_eq!(cut_middle("short", 10), "short");
    assert_eq!(cut_middle("日本語ジョブ@p#1", 9), "日…ブ@p#1");
    assert_eq!(width(&cut_middle("日本語ジョブ@p#1", 9)), 9);
}
