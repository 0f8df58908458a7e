//! Counted nouns for the lines the CLI prints: `1 job`, `2 jobs`, never
//! `1 jobs` or `job(s)`.

/// `n` and the noun, singular for one (`1 attempt`, `0 attempts`).
pub(crate) fn count(n: usize, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

/// The noun alone, as `count` would write it.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        noun.to_string()
    } else if noun.ends_with('s') || noun.ends_with('x') || noun.ends_with("ch") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "job"), "1 job");
        assert_eq!(count(0, "job"), "0 jobs");
        assert_eq!(count(2, "attempt"), "2 attempts");
        assert_eq!(count(3, "match"), "3 matches");
    }
}
