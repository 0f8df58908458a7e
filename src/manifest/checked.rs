//! Loading a manifest together with the checks that need the executor's
//! allow-rule matcher.

use std::path::Path;

use super::error::ManifestError;
use super::load::load_manifest;
use crate::exec::AllowList;
use crate::protocol::Manifest;

/// Loads a manifest and checks that its allow rules parse and that `verify`
/// matches one of them.
pub(crate) fn load_checked(path: &Path) -> Result<Manifest, ManifestError> {
    let manifest = load_manifest(path)?;
    check_commands(&manifest)?;
    Ok(manifest)
}

/// The allow-rule checks of a loaded manifest (or a snapshot). A refused
/// verify command comes with the rule that would admit it.
pub(crate) fn check_commands(manifest: &Manifest) -> Result<(), ManifestError> {
    manifest.check_verify_allowed(|allow, verify| {
        let list = AllowList::parse(allow).map_err(|e| e.to_string())?;
        list.check(verify)
            .map_err(|e| match admitting_rule(verify) {
                Some(rule) => format!("{e}; add {rule:?} to allow to admit it"),
                None => e.to_string(),
            })
    })
}

/// The narrowest simple rule that admits `argv`: the program and its first
/// argument then anything (`cargo test **`), else the program with any
/// arguments; `None` when neither can be written (a program given as a
/// path, words with spaces or glob characters).
pub(crate) fn admitting_rule(argv: &[String]) -> Option<String> {
    let plain = |word: &str| {
        !word.is_empty()
            && !word.contains(char::is_whitespace)
            && !word.contains(['*', '?', '[', ']', '{', '}', '\\', '!'])
    };
    let program = argv.first().filter(|p| plain(p))?;
    let mut candidates = Vec::new();
    if let Some(first) = argv.get(1).filter(|a| plain(a) && *a != "**") {
        candidates.push(format!("{program} {first} **"));
    }
    candidates.push(format!("{program} **"));
    candidates.into_iter().find(|rule| {
        AllowList::parse(std::slice::from_ref(rule)).is_ok_and(|list| list.check(argv).is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_admitting_rule_is_the_program_and_its_first_argument() {
        assert_eq!(
            admitting_rule(&argv(&["cargo", "test", "--offline"])).as_deref(),
            Some("cargo test **")
        );
        assert_eq!(admitting_rule(&argv(&["make"])).as_deref(), Some("make **"));
        assert_eq!(
            admitting_rule(&argv(&["python3", "-c", "print(1)"])).as_deref(),
            Some("python3 -c **")
        );
        assert_eq!(
            admitting_rule(&argv(&["sh", "a b"])).as_deref(),
            Some("sh **")
        );
        assert_eq!(admitting_rule(&argv(&["/bin/true"])), None);
    }
}
