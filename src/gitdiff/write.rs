//! One file's section of a patch in git's format, as `git diff --binary
//! --full-index` writes it: the `diff --git` line, the mode lines (`new
//! file mode`, `deleted file mode`, `old mode`/`new mode`), the `index`
//! line with full blob ids, then text hunks or a `GIT binary patch` with a
//! literal each way.

use std::fmt::Write as _;
use std::time::Instant;

use super::base85::literal;
use super::blob::{Mode, NULL_ID, blob_id, is_binary};
use super::hunks::write_hunks;
use super::quote::quote_path;

/// One side of a file's change: its content and mode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'a> {
    pub content: &'a [u8],
    pub mode: Mode,
}

/// A file before and after: no `old` for a created file, no `new` for a
/// deleted one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileDiff<'a> {
    /// The path relative to the tree's root, `/`-separated.
    pub path: &'a str,
    pub old: Option<Side<'a>>,
    pub new: Option<Side<'a>>,
}

/// Appends the section of `diff` to `out` (nothing when both sides are
/// the same). Text hunks stop looking for the shortest diff at `deadline`.
pub(crate) fn write_file_diff(diff: &FileDiff<'_>, deadline: Instant, out: &mut String) {
    let (old, new) = (diff.old, diff.new);
    let same = |a: Side<'_>, b: Side<'_>| a.mode == b.mode && a.content == b.content;
    match (old, new) {
        (None, None) => return,
        (Some(a), Some(b)) if same(a, b) => return,
        _ => {}
    }
    let (a, b) = (quote_path("a/", diff.path), quote_path("b/", diff.path));
    let _ = writeln!(out, "diff --git {a} {b}");
    match (old, new) {
        (None, Some(new)) => {
            let _ = writeln!(out, "new file mode {}", new.mode.as_git());
        }
        (Some(old), None) => {
            let _ = writeln!(out, "deleted file mode {}", old.mode.as_git());
        }
        (Some(old), Some(new)) if old.mode != new.mode => {
            let _ = writeln!(out, "old mode {}", old.mode.as_git());
            let _ = writeln!(out, "new mode {}", new.mode.as_git());
        }
        _ => {}
    }
    let before = old.map_or(&[][..], |s| s.content);
    let after = new.map_or(&[][..], |s| s.content);
    if old.is_some() && new.is_some() && before == after {
        // A mode change alone.
        return;
    }
    let id =
        |side: Option<Side<'_>>| side.map_or_else(|| NULL_ID.to_string(), |s| blob_id(s.content));
    let _ = write!(out, "index {}..{}", id(old), id(new));
    if let (Some(old), Some(new)) = (old, new)
        && old.mode == new.mode
    {
        let _ = write!(out, " {}", old.mode.as_git());
    }
    out.push('\n');
    let text = match (std::str::from_utf8(before), std::str::from_utf8(after)) {
        (Ok(before), Ok(after))
            if !is_binary(before.as_bytes()) && !is_binary(after.as_bytes()) =>
        {
            Some((before, after))
        }
        _ => None,
    };
    let Some((before, after)) = text else {
        out.push_str("GIT binary patch\n");
        literal(after, out);
        literal(before, out);
        return;
    };
    if before.is_empty() && after.is_empty() {
        // An empty file created or deleted: the header says it all.
        return;
    }
    let label = |name: String, present: bool| {
        if !present {
            "/dev/null".to_string()
        } else if name.contains(' ') {
            // Git ends a name with a space with a tab, so that the name
            // is not taken for a name and a timestamp.
            format!("{name}\t")
        } else {
            name
        }
    };
    let _ = writeln!(out, "--- {}", label(a, old.is_some()));
    let _ = writeln!(out, "+++ {}", label(b, new.is_some()));
    write_hunks(before, after, deadline, out);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn side(side: Option<(&[u8], Mode)>) -> Option<Side<'_>> {
        side.map(|(content, mode)| Side { content, mode })
    }

    fn section(path: &str, old: Option<(&[u8], Mode)>, new: Option<(&[u8], Mode)>) -> String {
        let mut out = String::new();
        let diff = FileDiff {
            path,
            old: side(old),
            new: side(new),
        };
        write_file_diff(&diff, Instant::now() + Duration::from_secs(5), &mut out);
        out
    }

    const EMPTY: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

    #[test]
    fn an_empty_new_file_is_its_header_alone() {
        assert_eq!(
            section("pkg/__init__.py", None, Some((b"", Mode::Regular))),
            format!(
                "diff --git a/pkg/__init__.py b/pkg/__init__.py\nnew file mode 100644\n\
                 index {NULL_ID}..{EMPTY}\n"
            )
        );
    }

    #[test]
    fn a_deleted_file_removes_every_line() {
        let out = section("old.txt", Some((b"a\nb", Mode::Regular)), None);
        assert!(
            out.starts_with("diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex ")
        );
        assert!(out.ends_with(&format!(
            "..{NULL_ID}\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n\\ No newline at end of file\n"
        )));
    }

    #[test]
    fn a_mode_change_alone_has_no_index_line() {
        assert_eq!(
            section(
                "x.sh",
                Some((b"echo\n", Mode::Regular)),
                Some((b"echo\n", Mode::Executable))
            ),
            "diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n"
        );
    }

    #[test]
    fn a_change_in_place_names_its_mode_on_the_index_line() {
        let out = section(
            "a.rs",
            Some((b"1\n", Mode::Regular)),
            Some((b"2\n", Mode::Regular)),
        );
        assert_eq!(
            out,
            format!(
                "diff --git a/a.rs b/a.rs\nindex {}..{} 100644\n--- a/a.rs\n+++ b/a.rs\n\
                 @@ -1 +1 @@\n-1\n+2\n",
                blob_id(b"1\n"),
                blob_id(b"2\n")
            )
        );
    }

    #[test]
    fn binary_and_non_utf8_content_is_a_git_binary_patch() {
        for content in [&b"\x00\x01\x02"[..], b"caf\xe9\n"] {
            let out = section("blob.bin", None, Some((content, Mode::Regular)));
            assert!(out.contains("GIT binary patch\nliteral "), "{out}");
            assert!(out.ends_with("\n\nliteral 0\nHcmV?d00001\n\n"), "{out}");
            assert!(!out.contains("---"));
        }
    }

    #[test]
    fn names_with_spaces_get_a_tab_and_odd_names_are_quoted() {
        let out = section("a b.txt", None, Some((b"x\n", Mode::Regular)));
        assert!(out.starts_with("diff --git a/a b.txt b/a b.txt\n"));
        assert!(out.contains("--- /dev/null\n+++ b/a b.txt\t\n"));
        let out = section("caf\u{e9}.txt", Some((b"x\n", Mode::Regular)), None);
        assert!(out.starts_with("diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\n"));
    }

    #[test]
    fn equal_sides_write_nothing() {
        assert_eq!(
            section(
                "a",
                Some((b"x", Mode::Regular)),
                Some((b"x", Mode::Regular))
            ),
            ""
        );
        assert_eq!(section("a", None, None), "");
    }
}
