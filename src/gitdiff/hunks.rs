//! The hunks of a unified diff between two texts, in bounded time and
//! memory.
//!
//! The common head and tail (whole lines) are found on the bytes, without
//! splitting anything; only the lines between are diffed, with Myers'
//! algorithm under a deadline (`similar`): past it, what is left is one
//! delete-and-insert hunk. A middle too large for Myers, one whose sides
//! differ so much in length that Myers could not finish in time anyway, or
//! one whose sides have no line in common, is that coarse hunk at once. Every form applies exactly; a
//! coarse one is only larger than the shortest diff.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

use similar::algorithms::{Capture, myers};
use similar::{DiffOp, group_diff_ops};

/// Lines of context around a change, as git writes by default.
const CONTEXT: usize = 3;
/// Most lines (both sides together, common head and tail left out) Myers
/// is run on: its working memory grows with them.
const MYERS_LINES: usize = 1 << 20;
/// Myers needs at least as many edits as the sides differ in length, and
/// time that grows with the square of the edits: beyond this difference
/// it could not finish within any useful deadline.
const MYERS_LENGTH_GAP: usize = 50_000;

/// Appends the hunks turning `old` into `new` to `out` (nothing when they
/// are equal). Myers stops at `deadline`.
pub(crate) fn write_hunks(old: &str, new: &str, deadline: Instant, out: &mut String) {
    if old == new {
        return;
    }
    let head = common_head(old.as_bytes(), new.as_bytes());
    let tail = common_tail(old.as_bytes(), new.as_bytes(), head);
    let old_mid = &old[head..old.len() - tail];
    let new_mid = &new[head..new.len() - tail];
    let before = last_lines(&old[..head], CONTEXT);
    let after: Vec<&str> = old[old.len() - tail..]
        .split_inclusive('\n')
        .take(CONTEXT)
        .collect();
    // The first line of `before`, 0-based, in both texts.
    let first = old[..head].bytes().filter(|&b| b == b'\n').count() - before.len();
    let (n, m) = (line_count(old_mid), line_count(new_mid));
    let coarse = n == 0
        || m == 0
        || n + m > MYERS_LINES
        || n.abs_diff(m) > MYERS_LENGTH_GAP
        || Instant::now() >= deadline;
    if coarse {
        return coarse_hunk(out, first, &before, old_mid, new_mid, &after);
    }
    let old_lines: Vec<&str> = old_mid.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new_mid.split_inclusive('\n').collect();
    let (old_ids, new_ids, old_distinct) = intern(&old_lines, &new_lines);
    if new_ids.iter().all(|&id| id >= old_distinct) {
        // No line in common: there is nothing for Myers to find.
        return coarse_hunk(out, first, &before, old_mid, new_mid, &after);
    }
    let mut capture = Capture::new();
    let Ok(()) = myers::diff_deadline(
        &mut capture,
        &old_ids[..],
        0..n,
        &new_ids[..],
        0..m,
        Some(deadline),
    );
    // The middle's ops, framed by the context lines on both sides.
    let (b, a) = (before.len(), after.len());
    let mut ops = vec![DiffOp::Equal {
        old_index: 0,
        new_index: 0,
        len: b,
    }];
    ops.extend(capture.into_ops().into_iter().map(|op| shift(op, b)));
    ops.push(DiffOp::Equal {
        old_index: b + n,
        new_index: b + m,
        len: a,
    });
    let old_all: Vec<&str> = before
        .iter()
        .chain(&old_lines)
        .chain(&after)
        .copied()
        .collect();
    let new_all: Vec<&str> = before
        .iter()
        .chain(&new_lines)
        .chain(&after)
        .copied()
        .collect();
    for group in group_diff_ops(ops, CONTEXT) {
        let (Some(start), Some(end)) = (group.first(), group.last()) else {
            continue;
        };
        let (old_from, new_from) = (start.old_range().start, start.new_range().start);
        hunk_header(
            out,
            first + old_from,
            end.old_range().end - old_from,
            first + new_from,
            end.new_range().end - new_from,
        );
        // Within a change, git writes what goes before what comes.
        let (mut gone, mut added) = (Vec::new(), Vec::new());
        for op in &group {
            let (tag, olds, news) = op.as_tag_tuple();
            if tag == similar::DiffTag::Equal {
                push_lines(out, '-', gone.drain(..));
                push_lines(out, '+', added.drain(..));
                push_lines(out, ' ', old_all[olds].iter().copied());
            } else {
                gone.extend_from_slice(&old_all[olds]);
                added.extend_from_slice(&new_all[news]);
            }
        }
        push_lines(out, '-', gone.drain(..));
        push_lines(out, '+', added.drain(..));
    }
}

/// The middle as one hunk: every old line removed, every new one added,
/// with the context around it.
fn coarse_hunk(
    out: &mut String,
    first: usize,
    before: &[&str],
    old_mid: &str,
    new_mid: &str,
    after: &[&str],
) {
    let (n, m) = (line_count(old_mid), line_count(new_mid));
    let context = before.len() + after.len();
    hunk_header(out, first, context + n, first, context + m);
    push_lines(out, ' ', before.iter().copied());
    push_lines(out, '-', old_mid.split_inclusive('\n'));
    push_lines(out, '+', new_mid.split_inclusive('\n'));
    push_lines(out, ' ', after.iter().copied());
}

/// Bytes of the lines both texts begin with (whole lines only; all of it
/// when the texts are equal).
fn common_head(old: &[u8], new: &[u8]) -> usize {
    let same = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    if same == old.len() && same == new.len() {
        return same;
    }
    old[..same]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1)
}

/// Bytes of the lines both texts end with, not reaching into their first
/// `head` bytes: the tail starts at a line start in both.
fn common_tail(old: &[u8], new: &[u8], head: usize) -> usize {
    let room = old.len().min(new.len()) - head;
    let same = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let line_start = |text: &[u8], tail: usize| {
        let at = text.len() - tail;
        at == 0 || text[at - 1] == b'\n'
    };
    if line_start(old, same) && line_start(new, same) {
        return same;
    }
    // Shorter tails start inside the common bytes, where a line start in
    // one text is one in the other: after the first newline there.
    old[old.len() - same..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(0, |at| same - at - 1)
}

/// The last `n` lines of `text` (which is empty or ends with a newline).
fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut start = text.len();
    for _ in 0..n {
        if start == 0 {
            break;
        }
        start = bytes[..start - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
    }
    text[start..].split_inclusive('\n').collect()
}

fn line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The lines as numbers, equal lines getting equal numbers: Myers then
/// compares integers, not strings. Also how many distinct lines `old`
/// has: a line of `new` numbered that or more is not in `old`.
fn intern<'a>(old: &[&'a str], new: &[&'a str]) -> (Vec<u32>, Vec<u32>, u32) {
    let mut ids: HashMap<&'a str, u32> = HashMap::new();
    let mut id_of = |line: &'a str| {
        let next = ids.len() as u32;
        *ids.entry(line).or_insert(next)
    };
    let old_ids: Vec<u32> = old.iter().map(|&l| id_of(l)).collect();
    let old_distinct = old_ids.iter().max().map_or(0, |&max| max + 1);
    let new_ids = new.iter().map(|&l| id_of(l)).collect();
    (old_ids, new_ids, old_distinct)
}

fn shift(op: DiffOp, by: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + by,
            new_index: new_index + by,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + by,
            new_index: new_index + by,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
            new_len,
        },
    }
}

/// `@@ -a,b +c,d @@`, with 0-based starts: a range of one line is written
/// without its length, an empty one names the line before it.
fn hunk_header(
    out: &mut String,
    old_start: usize,
    old_len: usize,
    new_start: usize,
    new_len: usize,
) {
    let range = |start: usize, len: usize| match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    };
    let _ = writeln!(
        out,
        "@@ -{} +{} @@",
        range(old_start, old_len),
        range(new_start, new_len)
    );
}

/// Each line with its marker; a last line without a newline is followed
/// by git's `\ No newline at end of file`.
fn push_lines<'a>(out: &mut String, marker: char, lines: impl Iterator<Item = &'a str>) {
    for line in lines {
        out.push(marker);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn hunks(old: &str, new: &str) -> String {
        let mut out = String::new();
        write_hunks(old, new, Instant::now() + Duration::from_secs(5), &mut out);
        out
    }

    #[test]
    fn a_change_gets_three_lines_of_context_and_gits_ranges() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n";
        assert_eq!(
            hunks(old, new),
            "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
        assert_eq!(hunks("", "a\n"), "@@ -0,0 +1 @@\n+a\n");
        assert_eq!(hunks("a\nb\n", ""), "@@ -1,2 +0,0 @@\n-a\n-b\n");
    }

    #[test]
    fn a_missing_final_newline_is_marked_on_its_side() {
        assert_eq!(
            hunks("a\nb", "a\nb\n"),
            "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
        assert_eq!(
            hunks("x\n", "y"),
            "@@ -1 +1 @@\n-x\n+y\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn crlf_lines_are_carried_as_they_are() {
        assert_eq!(
            hunks("a\r\nb\r\n", "a\r\nc\r\n"),
            "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
        );
    }

    #[test]
    fn far_apart_changes_are_separate_hunks() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .map(|i| match i {
                2 => "two\n".to_string(),
                19 => "nineteen\n".to_string(),
                i => format!("{i}\n"),
            })
            .collect();
        let out = hunks(&old, &new);
        assert_eq!(out.matches("@@ -").count(), 2, "{out}");
        assert!(
            out.starts_with("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n"),
            "{out}"
        );
        assert!(out.contains("@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"));
    }

    #[test]
    fn the_common_tail_starts_at_a_line_start() {
        // "b\nc\n" and "xb\nc\n" share "b\nc\n" as bytes, but only "c\n"
        // as lines.
        assert_eq!(hunks("b\nc\n", "xb\nc\n"), "@@ -1,2 +1,2 @@\n-b\n+xb\n c\n");
        assert_eq!(common_tail(b"ab", b"b", 0), 0);
    }

    #[test]
    fn past_the_deadline_the_middle_is_one_hunk() {
        let old = "a\nb\nc\n";
        let new = "a\nB\nc\n";
        let mut out = String::new();
        write_hunks(old, new, Instant::now(), &mut out);
        assert_eq!(out, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    }

    #[test]
    fn sides_with_no_line_in_common_do_not_wait_for_the_deadline() {
        let old: String = (0..200_000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..200_000).map(|i| format!("new {i}\n")).collect();
        let mut out = String::new();
        let started = Instant::now();
        write_hunks(
            &old,
            &new,
            Instant::now() + Duration::from_secs(60),
            &mut out,
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(out.starts_with("@@ -1,200000 +1,200000 @@\n-old 0\n"));
    }

    #[test]
    fn a_huge_rewrite_is_coarse_and_quick() {
        let old = "fn f() {}\n";
        let new: String = (0..400_000).map(|i| format!("line {i}\n")).collect();
        let started = Instant::now();
        let out = hunks(old, &new);
        assert!(started.elapsed() < Duration::from_secs(3));
        assert!(out.starts_with("@@ -1 +1,400000 @@\n-fn f() {}\n+line 0\n"));
        assert_eq!(out.lines().count(), 1 + 1 + 400_000);
    }
}
