//! What every language's twins share. A twin is a copy of a hidden test
//! under a fresh name whose body, once it has run, ends in an
//! unconditional failure carrying a random token: on an honest harness it
//! fails with that token exactly when its original would have passed. A
//! forger that turns failures into passes (every failure, or those of the
//! tests that call the code under test) turns the twin's too, and is seen.
//! So that a forger cannot tell twins from real tests by name, every test
//! of the file is renamed as well; the runner maps the names back before
//! anything is recorded. Each language file writes the copies; this file
//! draws names and tokens and applies the edits.

use std::collections::BTreeSet;

use super::canary::{Style, draw_name};

/// A twin planted in a hidden test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Twin {
    /// Its inventory name (of its function: a parametrized twin reports a
    /// case per parameter, each under this name and the case's suffix).
    pub name: String,
    /// The inventory name of the test function it copies.
    pub of: String,
    /// What its failure carries when its body ran to its end.
    pub token: String,
}

/// A hidden test file rewritten for one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Twinned {
    pub text: String,
    /// `(name in this run, real name)` of each test renamed, by inventory
    /// name of its function.
    pub renamed: Vec<(String, String)>,
    pub twins: Vec<Twin>,
    /// Tests that were asked for twins and got none, with why.
    pub refused: Vec<(String, String)>,
}

/// How many twins each test of a file gets: by the inventory name of its
/// function.
pub(crate) type Wanted<'a> = &'a dyn Fn(&str) -> u32;

/// Names drawn for one file: fresh in its text and among each other, in
/// the file's style, each ending in a number (so no name is the start of
/// another, and a name replaced in text is replaced whole).
pub(super) struct Names {
    style: Style,
    /// What joins the words: `_` in identifiers, a space in titles.
    separator: char,
    own: Vec<String>,
    taken: BTreeSet<String>,
}

impl Names {
    /// Identifiers in `style`, beside the file's `own` test names.
    pub(super) fn new(style: Style, own: &[&str]) -> Names {
        Names {
            style,
            separator: '_',
            own: own.iter().map(|s| s.to_string()).collect(),
            taken: own.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Titles (`returns empty value 417`), beside the file's `own`.
    pub(super) fn titles(own: &[&str]) -> Names {
        let words: Vec<String> = own.iter().map(|t| t.replace(' ', "_")).collect();
        Names {
            style: Style {
                prefix: "",
                camel: false,
            },
            separator: ' ',
            own: words,
            taken: own.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A fresh name that occurs nowhere in `text`.
    pub(super) fn draw(&mut self, text: &str, rng: &mut fastrand::Rng) -> String {
        let own: Vec<&str> = self.own.iter().map(String::as_str).collect();
        loop {
            let mut base = draw_name(self.style, &own, text, rng);
            if self.separator != '_' {
                base = base.replace('_', &self.separator.to_string());
            }
            let number = rng.u32(10..10_000);
            let name = if self.style.camel {
                format!("{base}{number}")
            } else {
                format!("{base}{}{number}", self.separator)
            };
            if !text.contains(&name) && self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// A token: digits no test prints by chance.
pub(super) fn draw_token(rng: &mut fastrand::Rng) -> String {
    format!("{}", rng.u64(1_000_000_000..10_000_000_000))
}

/// What a twin's failure says: an ordinary message and its token.
pub(super) fn twin_message(token: &str, rng: &mut fastrand::Rng) -> String {
    const MESSAGES: &[&str] = &[
        "unexpected result",
        "values differ",
        "result does not match",
        "mismatch for this input",
    ];
    format!("{} (ref {token})", MESSAGES[rng.usize(..MESSAGES.len())])
}

/// An edit of a file's text: `len` bytes at `at` replaced by `text`;
/// inserts at one offset apply in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Edit {
    pub(super) at: usize,
    pub(super) len: usize,
    pub(super) text: String,
}

impl Edit {
    pub(super) fn insert(at: usize, text: String) -> Edit {
        Edit { at, len: 0, text }
    }

    pub(super) fn replace(at: usize, len: usize, text: String) -> Edit {
        Edit { at, len, text }
    }
}

/// `text` with `edits` applied; `None` when two overlap or one lies
/// outside the text or inside a character.
pub(super) fn apply(text: &str, mut edits: Vec<Edit>) -> Option<String> {
    // Stable: inserts at one offset keep their order.
    edits.sort_by_key(|e| e.at);
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0usize;
    for edit in &edits {
        if edit.at < at {
            return None;
        }
        out.push_str(text.get(at..edit.at)?);
        out.push_str(&edit.text);
        at = edit.at + edit.len;
        text.get(..at)?;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// How many times `word` occurs in `text` as a whole identifier.
pub(super) fn word_count(text: &str, word: &str) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(word)
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(ident) && !after.is_some_and(ident)
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_fresh_distinct_and_numbered() {
        let style = Style {
            prefix: "test_",
            camel: false,
        };
        let mut names = Names::new(style, &["test_leap_year"]);
        let mut rng = fastrand::Rng::with_seed(5);
        let text = "def test_leap_year(): pass";
        let drawn: BTreeSet<String> = (0..200).map(|_| names.draw(text, &mut rng)).collect();
        assert_eq!(drawn.len(), 200);
        for name in &drawn {
            assert!(name.starts_with("test_"), "{name}");
            assert!(name.ends_with(|c: char| c.is_ascii_digit()), "{name}");
            assert!(!text.contains(name.as_str()));
        }
    }

    #[test]
    fn edits_apply_in_order_and_overlaps_are_refused() {
        let text = "abc def";
        let edits = vec![
            Edit::insert(4, "X".into()),
            Edit::replace(0, 3, "xyz".into()),
            Edit::insert(4, "Y".into()),
        ];
        assert_eq!(apply(text, edits).as_deref(), Some("xyz XYdef"));
        let overlap = vec![
            Edit::replace(0, 3, "a".into()),
            Edit::replace(2, 2, "b".into()),
        ];
        assert_eq!(apply(text, overlap), None);
        assert_eq!(apply(text, vec![Edit::insert(99, "x".into())]), None);
    }

    #[test]
    fn words_are_counted_whole() {
        assert_eq!(word_count("fn a() {} a(); ab(); _a; a", "a"), 3);
        assert_eq!(word_count("test_x test_xy", "test_x"), 1);
    }

    #[test]
    fn a_token_is_in_its_message() {
        let mut rng = fastrand::Rng::with_seed(2);
        let token = draw_token(&mut rng);
        assert_eq!(token.len(), 10);
        assert!(twin_message(&token, &mut rng).contains(&token));
    }
}
