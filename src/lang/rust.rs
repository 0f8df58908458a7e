//! Rust: `cargo test` builds the test binaries (libtest), each lists its
//! tests (`--list --format terse`) and runs one alone (`--exact NAME`).
//! Inventory names are `kind/target::path::test` (`test/acceptance::sums`,
//! `lib/mycrate::tests::small`).

use std::path::Path;

use super::{Language, Listing, OneRun, RunModel, TestBinary};
use crate::manifest::{Acceptance, ResultsFormat};
use crate::verdict::{TestOutcome, libtest_summary};

/// cargo and libtest.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rust;

impl Language for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn runs(&self, acceptance: &Acceptance) -> bool {
        acceptance.results_format() == ResultsFormat::Libtest
    }

    fn model(&self) -> RunModel {
        RunModel::PerTest
    }

    /// `cargo test [ARGS] -- [TEST_ARGS]` builds with `--no-run` and the
    /// artifacts as JSON on stdout; each binary gets `TEST_ARGS`.
    fn build_argv(&self, command: &[String]) -> (Vec<String>, Vec<String>) {
        let split = command.iter().position(|a| a == "--");
        let (cargo, tests) = match split {
            Some(at) => (&command[..at], &command[at + 1..]),
            None => (command, &[][..]),
        };
        let mut build = cargo.to_vec();
        build.push("--no-run".into());
        build.push("--message-format=json-render-diagnostics".into());
        (build, tests.to_vec())
    }

    fn test_binaries(&self, build_output: &str, dir: &Path) -> Vec<TestBinary> {
        test_binaries(build_output, dir)
    }

    /// Ignored tests are listed too: they run, and count, like the others.
    fn list_argv(&self, runner: &[String]) -> Vec<String> {
        let mut argv = runner.to_vec();
        argv.extend(["--list", "--format", "terse"].map(String::from));
        argv
    }

    /// `NAME: test` lines; benchmarks are not tests.
    fn read_listing(&self, stdout: &str, exit: Option<i32>) -> Result<Listing, String> {
        if exit != Some(0) {
            return Err(match exit {
                Some(code) => format!("the test binary could not list its tests (exit {code})"),
                None => "the test binary could not list its tests (killed)".into(),
            });
        }
        let tests = stdout
            .lines()
            .filter_map(|line| line.trim_end().strip_suffix(": test"))
            .map(String::from)
            .collect();
        Ok(Listing {
            tests,
            uncollectable: Vec::new(),
        })
    }

    /// The pretty format, whatever `TEST_ARGS` asked for, so the one
    /// test's result reads the same every time.
    fn run_one_argv(&self, runner: &[String], name: &str) -> Vec<String> {
        let mut argv = runner.to_vec();
        argv.extend(["--exact", name, "--include-ignored", "--format", "pretty"].map(String::from));
        argv
    }

    /// The run's summary (the last one: a test may print a line that looks
    /// like one before it) names exactly one test, passed or failed.
    fn read_one(&self, _name: &str, stdout: &str) -> OneRun {
        match libtest_summary(stdout) {
            None => OneRun::NotReported,
            Some(Err(why)) => OneRun::Garbled(why),
            Some(Ok(counts)) => match counts {
                (0, 0, 0) => OneRun::NotReported,
                (1, 0, 0) => OneRun::Reported(TestOutcome::Passed),
                (0, 1, 0) => OneRun::Reported(TestOutcome::Failed),
                (0, 0, 1) => OneRun::Reported(TestOutcome::Skipped),
                (p, f, i) => OneRun::Garbled(format!(
                    "one test asked for, {p} passed, {f} failed and {i} ignored reported"
                )),
            },
        }
    }

    fn inventory_name(&self, unit: &str, listed: &str) -> String {
        format!("{unit}::{listed}")
    }

    fn listed_name<'a>(&self, unit: &str, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(unit)?.strip_prefix("::")
    }

    /// `tests/NAME.rs` and `tests/NAME/main.rs`: cargo's integration test
    /// targets `NAME` (unless `Cargo.toml` renames them).
    fn is_test_file(&self, rel: &str) -> bool {
        target_of(rel).is_some()
    }

    fn defined_tests(&self, rel: &str, text: &str) -> Vec<String> {
        let Some(target) = target_of(rel) else {
            return Vec::new();
        };
        scan_tests(text)
            .into_iter()
            .map(|path| format!("test/{target}::{path}"))
            .collect()
    }
}

/// The integration test target a file in `tests/` is.
fn target_of(rel: &str) -> Option<&str> {
    let rest = rel.strip_prefix("tests/")?;
    match rest.split_once('/') {
        None => rest.strip_suffix(".rs"),
        Some((dir, "main.rs")) => Some(dir),
        Some(_) => None,
    }
    .filter(|name| !name.is_empty())
}

/// Test executables from cargo's JSON messages, relative to `dir`.
fn test_binaries(stdout: &str, dir: &Path) -> Vec<TestBinary> {
    let mut found = Vec::new();
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
            continue;
        }
        let (Some(executable), Some(target)) = (
            message["executable"].as_str(),
            message["target"]["name"].as_str(),
        ) else {
            continue;
        };
        let kind = message["target"]["kind"][0].as_str().unwrap_or("test");
        let Ok(path) = Path::new(executable).strip_prefix(dir) else {
            continue;
        };
        let package = message["manifest_path"]
            .as_str()
            .and_then(|m| Path::new(m).parent())
            .and_then(|p| p.strip_prefix(dir).ok())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        found.push(TestBinary {
            label: format!("{kind}/{target}"),
            target: target.to_string(),
            path: path.to_path_buf(),
            package,
        });
    }
    found
}

/// The paths (`module::fn`) of the `#[test]` functions in Rust source,
/// read lexically: comments, strings and character literals are skipped,
/// inline `mod NAME { ... }` blocks nest. A macro that generates tests is
/// not seen.
fn scan_tests(text: &str) -> Vec<String> {
    let tokens = tokens(text);
    let mut found = Vec::new();
    // Open inline modules: name and the brace depth inside them.
    let mut modules: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_test = false;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                if modules.last().is_some_and(|(_, d)| *d == depth) {
                    modules.pop();
                }
                depth = depth.saturating_sub(1);
                pending_test = false;
            }
            Token::Punct(';') => pending_test = false,
            Token::Attribute(body) => {
                let body: String = body.chars().filter(|c| !c.is_whitespace()).collect();
                if body == "test" || body.ends_with("::test") {
                    pending_test = true;
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some(Token::Ident(name)), Some(Token::Punct('{'))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    depth += 1;
                    modules.push((name.clone(), depth));
                    i += 3;
                    pending_test = false;
                    continue;
                }
            }
            Token::Ident(word) if word == "fn" => {
                if let (true, Some(Token::Ident(name))) = (pending_test, tokens.get(i + 1)) {
                    let mut path: Vec<&str> = modules.iter().map(|(m, _)| m.as_str()).collect();
                    path.push(name);
                    found.push(path.join("::"));
                }
                pending_test = false;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Punct(char),
    /// The text inside `#[...]`.
    Attribute(String),
}

/// Identifiers, braces and semicolons, and attributes, of Rust source.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = skip_block_comment(&chars, i);
        } else if c == '"' {
            i = skip_string(&chars, i + 1);
        } else if c == 'r' && matches!(next, Some('"' | '#')) && is_raw_string(&chars, i) {
            i = skip_raw_string(&chars, i + 1);
        } else if c == '\'' {
            i = skip_char_or_lifetime(&chars, i);
        } else if c == '#' && (next == Some('[') || next == Some('!')) {
            let open = if next == Some('!') { i + 2 } else { i + 1 };
            if chars.get(open) == Some(&'[') {
                let (body, end) = bracketed(&chars, open);
                out.push(Token::Attribute(body));
                i = end;
            } else {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // `r#name` raw identifiers are names too.
            let word = word.strip_prefix("r#").map(String::from).unwrap_or(word);
            out.push(Token::Ident(word));
        } else {
            if matches!(c, '{' | '}' | ';') {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

fn skip_block_comment(chars: &[char], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < chars.len() {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            depth = depth.saturating_sub(1);
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Past the closing quote of a string whose content starts at `i`.
fn skip_string(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

fn is_raw_string(chars: &[char], r: usize) -> bool {
    let before_ok = r == 0 || !(chars[r - 1].is_alphanumeric() || chars[r - 1] == '_');
    let mut i = r + 1;
    while chars.get(i) == Some(&'#') {
        i += 1;
    }
    before_ok && chars.get(i) == Some(&'"')
}

/// Past a raw string `r##"..."##` whose hashes start at `i`.
fn skip_raw_string(chars: &[char], mut i: usize) -> usize {
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

/// Past a character literal (`'a'`, `'\n'`, `'{'`), or past the quote of
/// a lifetime (`'a`).
fn skip_char_or_lifetime(chars: &[char], i: usize) -> usize {
    match (chars.get(i + 1), chars.get(i + 2)) {
        (Some('\\'), _) => {
            let mut j = i + 2;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            j + 1
        }
        (Some(_), Some('\'')) => i + 3,
        _ => i + 1,
    }
}

/// The text inside `[...]` opening at `open`, and the index past it.
fn bracketed(chars: &[char], open: usize) -> (String, usize) {
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (chars[open + 1..i].iter().collect(), i + 1);
                }
            }
            '"' => {
                i = skip_string(chars, i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (chars[open + 1..].iter().collect(), i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_gets_no_run_and_json_and_binaries_get_what_follows_the_dashes() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let (build, tests) = Rust.build_argv(&argv("cargo test --offline -- --test-threads=1"));
        assert_eq!(
            build,
            argv("cargo test --offline --no-run --message-format=json-render-diagnostics")
        );
        assert_eq!(tests, ["--test-threads=1"]);
    }

    #[test]
    fn test_binaries_are_read_from_cargo_messages_inside_the_copy_only() {
        let dir = Path::new("/c");
        let out = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"dep","kind":["lib"]},"profile":{"test":false},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","manifest_path":"/c/Cargo.toml","target":{"name":"sum","kind":["test"]},"profile":{"test":true},"executable":"/c/target/debug/deps/sum-1"}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"x","kind":["lib"]},"profile":{"test":true},"executable":"/etc/evil"}"#,
            "\nnot json\n"
        );
        let found = Rust.test_binaries(out, dir);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].label, "test/sum");
        assert_eq!(found[0].path, Path::new("target/debug/deps/sum-1"));
    }

    #[test]
    fn a_listing_names_tests_not_benchmarks_and_a_failed_one_is_an_error() {
        let out = "a: test\nm::b: test\nbench_x: benchmark\n";
        let listing = Rust.read_listing(out, Some(0)).unwrap();
        assert_eq!(listing.tests, ["a", "m::b"]);
        assert!(Rust.read_listing(out, Some(101)).is_err());
        assert!(Rust.read_listing("", None).is_err());
        assert!(Rust.read_listing("", Some(0)).unwrap().tests.is_empty());
    }

    #[test]
    fn one_run_reads_its_last_summary() {
        let ok = "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n";
        assert_eq!(
            Rust.read_one("a", ok),
            OneRun::Reported(TestOutcome::Passed)
        );
        let failed = "test a ... FAILED\n\nfailures:\n\n---- a stdout ----\ntest result: ok. 1 passed; 0 failed; 0 ignored\n\nfailures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(
            Rust.read_one("a", failed),
            OneRun::Reported(TestOutcome::Failed)
        );
        assert_eq!(Rust.read_one("a", "running 1 test\n"), OneRun::NotReported);
        let none = "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out\n";
        assert_eq!(Rust.read_one("gone", none), OneRun::NotReported);
        let two = "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert!(matches!(Rust.read_one("a", two), OneRun::Garbled(_)));
        let argv = Rust.run_one_argv(&["sum".into()], "m::a");
        assert_eq!(
            argv,
            [
                "sum",
                "--exact",
                "m::a",
                "--include-ignored",
                "--format",
                "pretty"
            ]
        );
    }

    #[test]
    fn names_carry_the_binary_label_both_ways() {
        let name = Rust.inventory_name("test/acceptance", "m::a");
        assert_eq!(name, "test/acceptance::m::a");
        assert_eq!(Rust.listed_name("test/acceptance", &name), Some("m::a"));
        assert_eq!(Rust.listed_name("test/acc", &name), None);
        assert_eq!(Rust.listed_name("lib/x", &name), None);
    }

    #[test]
    fn the_scan_finds_test_functions_in_modules_and_skips_comments_and_strings() {
        let text = r##"
use x::y;
// #[test] fn commented() {}
/* #[test] fn blocked() {} /* nested */ */
const S: &str = "#[test] fn in_string() {}";
const R: &str = r#"#[test] fn in_raw() {}"#;
fn helper<'a>(c: char) -> bool { c == '{' || c == '}' }

#[test]
fn top() { assert!(true); }

#[test]
#[should_panic(expected = "boom [x]")]
fn panics() { panic!("boom [x]") }

#[tokio::test]
async fn asynchronous() {}

#[cfg(test)]
mod inner {
    fn not_a_test() {}
    #[test]
    #[ignore]
    pub fn deep() {}
    mod deeper { #[test] fn deepest() {} }
}

#[test]
fn after_modules() {}
"##;
        assert_eq!(
            scan_tests(text),
            [
                "top",
                "panics",
                "asynchronous",
                "inner::deep",
                "inner::deeper::deepest",
                "after_modules"
            ]
        );
    }

    #[test]
    fn hidden_files_map_to_their_integration_targets() {
        assert!(Rust.is_test_file("tests/acceptance.rs"));
        assert!(Rust.is_test_file("tests/suite/main.rs"));
        assert!(!Rust.is_test_file("tests/suite/helper.rs"));
        assert!(!Rust.is_test_file("src/lib.rs"));
        assert_eq!(
            Rust.defined_tests("tests/acceptance.rs", "#[test]\nfn sums() {}\n"),
            ["test/acceptance::sums"]
        );
        assert_eq!(
            Rust.defined_tests("tests/suite/main.rs", "#[test] fn a() {}"),
            ["test/suite::a"]
        );
    }
}
