//! What every language's canary shares: a name in the style of the file's
//! own test names, drawn at random, and an ordinary failing assertion's
//! values and message. Each language file writes the test itself and
//! chooses where in the file it goes.

/// Words a canary's name is made of, besides those of the file's own
/// test names: the vocabulary of ordinary test names.
const WORDS: &[&str] = &[
    "accepts", "handles", "returns", "keeps", "rejects", "matches", "computes", "reports",
    "checks", "supports", "empty", "input", "value", "values", "large", "small", "single", "many",
    "edge", "case", "order", "limit", "range", "default", "result", "negative", "zero", "repeated",
    "mixed", "long", "short", "nested", "first", "last", "boundary", "sorted", "unique", "total",
    "count", "list", "string", "number", "pair", "two", "three", "basic", "simple", "another",
];

/// Failure messages of the kind a test author writes.
const MESSAGES: &[&str] = &[
    "unexpected result",
    "values differ",
    "wrong total",
    "result does not match the expected value",
    "mismatch for this input",
    "unexpected value",
];

/// How a file names its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Style {
    /// What every name starts with (`test_`, `test`, or nothing).
    pub(super) prefix: &'static str,
    /// `testSomethingElse` rather than `something_else`.
    pub(super) camel: bool,
}

/// The style most of `names` (a file's test function names) follow;
/// `default_prefix` when they say nothing (no names).
pub(super) fn style_of(names: &[&str], default_prefix: &'static str) -> Style {
    if names.is_empty() {
        return Style {
            prefix: default_prefix,
            camel: false,
        };
    }
    let snake = names.iter().filter(|n| n.starts_with("test_")).count();
    let camel = names
        .iter()
        .filter(|n| {
            n.strip_prefix("test")
                .and_then(|rest| rest.chars().next())
                .is_some_and(|c| c.is_ascii_uppercase())
        })
        .count();
    if camel * 2 > names.len() {
        Style {
            prefix: "test",
            camel: true,
        }
    } else if snake * 2 > names.len() {
        Style {
            prefix: "test_",
            camel: false,
        }
    } else {
        Style {
            prefix: default_prefix,
            camel: false,
        }
    }
}

/// A name in `style`, of two or three words drawn from [`WORDS`] and the
/// words of `own` (the file's names), that occurs nowhere in `text`.
pub(super) fn draw_name(style: Style, own: &[&str], text: &str, rng: &mut fastrand::Rng) -> String {
    let mut pool: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
    for name in own {
        let words = name
            .strip_prefix(style.prefix)
            .unwrap_or(name)
            .split('_')
            .filter(|w| w.len() > 2 && w.chars().all(|c| c.is_ascii_lowercase()));
        for word in words {
            if !pool.iter().any(|p| p == word) {
                pool.push(word.to_string());
            }
        }
    }
    for tries in 0..64u32 {
        let count = rng.usize(2..=3);
        let mut words: Vec<String> = (0..count)
            .map(|_| pool[rng.usize(..pool.len())].clone())
            .collect();
        words.dedup();
        if tries >= 32 {
            // Crowded: a number makes it new.
            words.push(rng.u32(2..1000).to_string());
        }
        let name = join(style, &words);
        if !text.contains(&name) && !own.contains(&name.as_str()) {
            return name;
        }
    }
    join(style, &["case".into(), rng.u64(1000..u64::MAX).to_string()])
}

fn join(style: Style, words: &[String]) -> String {
    if style.camel {
        let mut name = style.prefix.to_string();
        for word in words {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                name.extend(first.to_uppercase());
                name.push_str(chars.as_str());
            }
        }
        name
    } else {
        format!("{}{}", style.prefix, words.join("_"))
    }
}

/// An assertion that fails: `actual` is `left + right`, which is never
/// `expected`, and its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Failing {
    pub(super) expected: u32,
    pub(super) left: u32,
    pub(super) right: u32,
    pub(super) message: &'static str,
}

pub(super) fn draw_failing(rng: &mut fastrand::Rng) -> Failing {
    let left = rng.u32(1..50);
    let right = rng.u32(1..50);
    let mut expected = rng.u32(2..100);
    if expected == left + right {
        expected += 1;
    }
    Failing {
        expected,
        left,
        right,
        message: MESSAGES[rng.usize(..MESSAGES.len())],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_style_follows_most_of_the_files_names() {
        assert_eq!(style_of(&["test_a", "test_b", "c"], "").prefix, "test_");
        assert!(style_of(&["testAlpha", "testBeta"], "test_").camel);
        assert_eq!(style_of(&["sums_to_n", "doubles"], "").prefix, "");
        assert_eq!(style_of(&[], "test_").prefix, "test_");
    }

    #[test]
    fn names_are_fresh_in_the_style_and_differ_between_draws() {
        let mut rng = fastrand::Rng::with_seed(7);
        let snake = Style {
            prefix: "test_",
            camel: false,
        };
        let text = "def test_mean_of_halves(): pass";
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..20 {
            let name = draw_name(snake, &["test_mean_of_halves"], text, &mut rng);
            assert!(name.starts_with("test_"), "{name}");
            assert!(!text.contains(&name));
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
            );
            seen.insert(name);
        }
        assert!(seen.len() > 10, "{seen:?}");
        let camel = Style {
            prefix: "test",
            camel: true,
        };
        let name = draw_name(camel, &[], "", &mut rng);
        assert!(
            name.starts_with("test") && name[4..].starts_with(|c: char| c.is_ascii_uppercase())
        );
    }

    #[test]
    fn the_assertion_always_fails() {
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..1000 {
            let f = draw_failing(&mut rng);
            assert_ne!(f.left + f.right, f.expected);
        }
    }
}
