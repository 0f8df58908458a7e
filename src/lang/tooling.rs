//! The other half of the language table: what a language needs around its
//! tests — which files decide its dependencies (the inputs of a shared
//! setup cache), what a build check of a few files is, how a benchmark's
//! declared test names map to inventory names, which commands build, and
//! what an imported exercise of its track needs (test command, results
//! file, setup). Kept apart from [`super::Language`] (running and reading
//! tests) so the two grow independently; every language implements both.
//!
//! Pure, like the rest of the table: it builds argv lists and reads text.

/// A link the runner makes in each tree of a job: `tree` (a path in the
/// tree) pointing at `cache` (a path in the job cache), read-only through
/// the cache's grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CacheLink {
    pub tree: &'static str,
    pub cache: &'static str,
}

/// What an exercise of an Exercism track is, as the importer read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Exercise {
    pub slug: String,
    /// `files.solution` (relative to the exercise).
    pub solution: Vec<String>,
    /// `files.test`.
    pub test: Vec<String>,
    /// The exercise needs packages from the language's registry (Rust:
    /// its Cargo.toml has dependencies).
    pub has_dependencies: bool,
}

/// What a job imported from an exercise runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TrackJob {
    /// The acceptance command.
    pub command: Vec<String>,
    /// `[acceptance] results` (`None`: the command's default).
    pub results: Option<String>,
    /// `[env]`.
    pub env: Vec<(String, String)>,
    /// `[setup] commands` (empty: no setup).
    pub setup: Vec<Vec<String>>,
    /// The verify command (the build check of the solution files).
    pub verify: Vec<String>,
    /// Allow rules beyond the verify command (running the visible tests).
    pub allow: Vec<String>,
}

/// A language's tooling, for setup caches and importers.
pub(crate) trait Tooling: Sync {
    /// The language's name, as [`super::Language::name`].
    fn tooling_name(&self) -> &'static str;

    /// Globs (relative to the source root) of the files a `[setup]` may
    /// read: lock and manifest files. The setup runs on a copy holding
    /// only these, and the job cache's key is taken from them.
    fn setup_inputs(&self) -> &'static [&'static str];

    /// What of input file `rel` decides what setup brings in, for the
    /// cache key: the whole text by default; Rust keeps only dependency
    /// tables and locked registry packages, so crates that depend on the
    /// same packages share a cache whatever they are named.
    fn setup_key_text(&self, _rel: &str, text: &str) -> String {
        text.to_string()
    }

    /// Empty files a setup copy needs beside its inputs so the tools
    /// accept it (Rust: a `src/lib.rs` beside each `Cargo.toml`).
    fn setup_scaffold(&self, _inputs: &[String]) -> Vec<String> {
        Vec::new()
    }

    /// Links from each tree into the job cache (JavaScript: the cache's
    /// `node_modules`, which Jest and Babel need beside the tests).
    fn cache_links(&self) -> &'static [CacheLink] {
        &[]
    }

    /// Whether `argv` builds code that the dependency layer serves.
    fn builds(&self, _argv: &[String]) -> bool {
        false
    }

    /// A build check of `files` (relative to the tree): compiles or parses
    /// them without running tests.
    fn build_check(&self, files: &[String]) -> Vec<String>;

    /// The inventory name of a test as a benchmark declares it (a pytest
    /// node id, a Django-style `test_x (mod.Class)`): what the runner's
    /// results call it.
    fn declared_name(&self, declared: &str) -> String {
        declared.to_string()
    }

    /// Test file `rel`'s text with every skipped test enabled (`xtest` is
    /// `test`), so every test counts; `None` when nothing changes.
    fn enable_skipped(&self, _rel: &str, _text: &str) -> Option<String> {
        None
    }

    /// What an imported exercise of this language's Exercism track runs;
    /// `None` when the language has no importer layout.
    fn track_job(&self, _exercise: &Exercise) -> Option<TrackJob> {
        None
    }
}

impl std::fmt::Debug for dyn Tooling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tooling_name())
    }
}

/// Whether `name` resolves to `candidate`: equal, or `candidate` ends with
/// it after a `.` or `/` (a declared `mod.Class::t` names the reported
/// `tests.mod.Class::t`).
pub(crate) fn names_match(declared: &str, candidate: &str) -> bool {
    declared == candidate
        || candidate
            .strip_suffix(declared)
            .is_some_and(|head| head.ends_with('.') || head.ends_with('/'))
}

/// Splits a command line into argv by whitespace, with `'...'` and
/// `"..."` quoting (no escapes inside single quotes); `None` when a quote
/// is left open. For `--test-cmd`-style options.
pub(crate) fn split_command(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => word.push(chars.next()?),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                word.push(chars.next()?);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        out.push(word);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_names_match_by_dotted_suffix() {
        assert!(names_match("a.B::t", "a.B::t"));
        assert!(names_match("mod.C::t", "tests.mod.C::t"));
        assert!(!names_match("od.C::t", "tests.mod.C::t"));
        assert!(!names_match("x::t", "y::t"));
    }

    #[test]
    fn command_lines_split_with_quotes() {
        assert_eq!(
            split_command("python3 -m pytest -k 'a and b' \"x y\" z\\ w").unwrap(),
            ["python3", "-m", "pytest", "-k", "a and b", "x y", "z w"]
        );
        assert!(split_command("a 'b").is_none());
        assert!(split_command("  ").unwrap().is_empty());
    }
}
