//! "Did you mean ...?": the known name closest to a misspelt one, by edit
//! distance (`strsim`), or nothing when no name is close enough to be a
//! plausible typo.

/// The candidate closest to `word`, when it is close: at most one edit for
/// short names, about one in three for longer ones (`max_step` →
/// `max_steps`, `comand_timeout` → `command_timeout`), the same name in
/// another case or with `-` for `_`, or a name it begins (`net` →
/// `network`, three letters at least). Ties go to the first candidate.
pub(crate) fn did_you_mean<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let folded = fold(word);
    let allowed = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let other = fold(candidate);
        let distance = if other == folded {
            0
        } else if folded.chars().count() >= 3 && other.starts_with(&folded) {
            1
        } else {
            strsim::damerau_levenshtein(&folded, &other)
        };
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, name)| name)
}

/// Case and `-`/`_` do not make two names different words.
fn fold(word: &str) -> String {
    word.to_lowercase().replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: [&str; 5] = [
        "attempts",
        "max_steps",
        "max_invalid",
        "wall_time",
        "command_timeout",
    ];

    #[test]
    fn a_typo_finds_the_key_it_was_meant_to_be() {
        assert_eq!(did_you_mean("max_step", LIMITS), Some("max_steps"));
        assert_eq!(
            did_you_mean("comand_timeout", LIMITS),
            Some("command_timeout")
        );
        assert_eq!(did_you_mean("Wall-Time", LIMITS), Some("wall_time"));
        assert_eq!(did_you_mean("atempts", LIMITS), Some("attempts"));
        assert_eq!(
            did_you_mean("net", ["commands", "network"]),
            Some("network")
        );
    }

    #[test]
    fn a_word_far_from_every_name_gets_no_suggestion() {
        assert_eq!(did_you_mean("colour", LIMITS), None);
        assert_eq!(did_you_mean("dependencies", LIMITS), None);
        assert_eq!(did_you_mean("x", ["full", "metadata"]), None);
        // The word itself is never suggested.
        assert_eq!(did_you_mean("attempts", LIMITS), None);
    }
}
