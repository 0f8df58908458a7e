//! JavaScript: Jest runs the tests and `jest-junit` writes them to a JUnit
//! file. The reporter is configured (through its environment variables) so
//! a test's name is its file and its describe blocks: classname
//! `two-fer.spec.js`, name `Two Fer › says hi`, inventory name
//! `two-fer.spec.js::Two Fer › says hi`. Jest cannot list tests without
//! running them, so a run's results are its inventory; the hidden files'
//! tests are read statically when the baseline cannot run them.
//!
//! Jest and Babel resolve their presets and plugins from a `node_modules`
//! beside the tests (not through `NODE_PATH`), so the runner links the job
//! cache's `node_modules` into each tree.

use super::tooling::{CacheLink, Exercise, Tooling, TrackJob};
use super::twins::{Twinned, Wanted};
use super::{Canary, FirstError, PinContext, Pinned};
use super::{Language, Listing, ListingError, RunModel};
use crate::manifest::{Acceptance, ResultsFormat};

/// Jest, with jest-junit.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct JavaScript;

/// Where jest-junit writes, relative to the tree.
pub(crate) const JEST_JUNIT_FILE: &str = ".agent-runtime-junit.xml";
/// What jest-junit puts between describe blocks and the test's title.
pub(super) const SEPARATOR: &str = " › ";
/// Versions the importer pins for every track.
const JEST: &str = "jest@29.7.0";
const JEST_JUNIT: &str = "jest-junit@16.0.0";

impl Language for JavaScript {
    fn name(&self) -> &'static str {
        "javascript"
    }

    /// Jest's `Test suite failed to run` (from its `FAIL` line), named by
    /// the error under it.
    fn first_error(&self, lines: &[&str]) -> Option<FirstError> {
        let at = lines
            .iter()
            .position(|l| l.contains("Test suite failed to run"))?;
        let start = match at.checked_sub(1) {
            Some(before) if lines[before].contains("FAIL") => before,
            _ => at,
        };
        let named = lines[at + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .unwrap_or("Test suite failed to run");
        Some(FirstError {
            start,
            named: named.to_string(),
            what: "the tests did not collect",
        })
    }

    /// A JUnit-reading command that runs Jest (`jest ...`, `npx jest`, or
    /// `node .../jest/bin/jest.js`).
    fn runs(&self, acceptance: &Acceptance) -> bool {
        if !matches!(acceptance.results_format(), ResultsFormat::Junit(_)) {
            return false;
        }
        acceptance.command.iter().take(3).any(|arg| {
            let base = arg.rsplit('/').next().unwrap_or(arg);
            base == "jest" || base == "jest.js"
        })
    }

    fn model(&self) -> RunModel {
        RunModel::OneRun
    }

    fn lists(&self) -> bool {
        false
    }

    fn list_argv(&self, runner: &[String]) -> Vec<String> {
        runner.to_vec()
    }

    fn read_listing(&self, _stdout: &str, _exit: Option<i32>) -> Result<Listing, ListingError> {
        Err(ListingError::Unsupported(
            "jest cannot list its tests without running them",
        ))
    }

    fn inventory_name(&self, _unit: &str, listed: &str) -> String {
        listed.to_string()
    }

    fn listed_name<'a>(&self, _unit: &str, _name: &'a str) -> Option<&'a str> {
        None
    }

    /// Jest's default `testMatch`: `*.spec.js`, `*.test.js` (and `.mjs`,
    /// `.cjs`, `.jsx`, `.ts`), and files under `__tests__/`.
    fn is_test_file(&self, rel: &str) -> bool {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        let script = [".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"]
            .iter()
            .find_map(|ext| file.strip_suffix(ext));
        match script {
            Some(stem) => {
                stem.ends_with(".spec")
                    || stem.ends_with(".test")
                    || rel.split('/').any(|part| part == "__tests__")
            }
            None => false,
        }
    }

    fn defined_tests(&self, rel: &str, text: &str) -> Vec<String> {
        scan_tests(text)
            .into_iter()
            .map(|title| format!("{rel}::{title}"))
            .collect()
    }

    /// An inventory name is its file, `::`, and its describe blocks and
    /// title.
    fn test_of_file(&self, rel: &str, name: &str) -> bool {
        name.strip_prefix(rel)
            .is_some_and(|rest| rest.starts_with("::"))
    }

    fn plant_twins(
        &self,
        rel: &str,
        text: &str,
        wanted: Wanted<'_>,
        _also: &str,
        rng: &mut fastrand::Rng,
    ) -> Option<Twinned> {
        if !self.is_test_file(rel) {
            return None;
        }
        super::javascript_twins::plant(rel, text, wanted, rng)
    }

    /// A top-level test at the end of the file whose `expect` fails.
    fn plant_canary(&self, rel: &str, text: &str, rng: &mut fastrand::Rng) -> Option<Canary> {
        if !self.is_test_file(rel) {
            return None;
        }
        let (text, name) = super::javascript_twins::canary(rel, text, rng)?;
        Some(Canary { text, name })
    }

    /// The command with `--testNamePattern` matching the tests' titles
    /// (drawn fresh, so no other test's name contains one).
    fn select_argv(&self, command: &[String], names: &[String]) -> Option<Vec<String>> {
        let titles: Vec<String> = names
            .iter()
            .filter_map(|name| name.rsplit(SEPARATOR).next())
            .map(|title| {
                title
                    .chars()
                    .map(|c| {
                        if c.is_alphanumeric() || c == ' ' {
                            c.to_string()
                        } else {
                            format!("\\{c}")
                        }
                    })
                    .collect()
            })
            .collect();
        if titles.is_empty() {
            return None;
        }
        let mut argv = command.to_vec();
        argv.push(format!("--testNamePattern={}", titles.join("|")));
        Some(argv)
    }

    fn build_dirs(&self) -> &'static [&'static str] {
        &["node_modules"]
    }

    /// Jest reads the pristine source's configuration file from a copy
    /// outside the tree (`--config`, the tree as `--rootDir`), or, where
    /// it has none, the runner's own (Babel's project file and no
    /// `.babelrc`): nothing in the tree configures it. A command that
    /// names its own configuration keeps it.
    fn pin_harness(&self, command: &[String], ctx: &PinContext<'_>) -> Option<Pinned> {
        if command
            .iter()
            .any(|a| a == "-c" || a.starts_with("--config") || a.starts_with("--rootDir"))
        {
            return None;
        }
        let tree = ctx.tree.display().to_string();
        let mut argv = command.to_vec();
        let mut files = Vec::new();
        let found = [
            "jest.config.js",
            "jest.config.cjs",
            "jest.config.mjs",
            "jest.config.json",
        ]
        .into_iter()
        .find_map(|name| (ctx.pristine)(name).map(|text| (name, text)));
        match found {
            Some((name, text)) => {
                argv.push(format!("--config={}", ctx.config_dir.join(name).display()));
                files.push((name.to_string(), text));
            }
            None => {
                let config = serde_json::json!({
                    "rootDir": tree,
                    "transform": {"\\.[cm]?[jt]sx?$": ["babel-jest", {"babelrc": false}]},
                });
                argv.push(format!("--config={config}"));
            }
        }
        argv.push(format!("--rootDir={tree}"));
        Some(Pinned {
            command: argv,
            files,
        })
    }

    /// A `package.json` keeps the pristine version's `jest` and `babel`
    /// keys.
    fn pin_file(&self, rel: &str, patched: &str, pristine: Option<&str>) -> Option<String> {
        if rel.rsplit('/').next() != Some("package.json") {
            return None;
        }
        let serde_json::Value::Object(mut doc) = serde_json::from_str(patched).ok()? else {
            return None;
        };
        let old: serde_json::Map<String, serde_json::Value> = pristine
            .and_then(|p| serde_json::from_str(p).ok())
            .unwrap_or_default();
        let mut changed = false;
        for key in ["jest", "babel"] {
            if doc.get(key) != old.get(key) {
                changed = true;
                match old.get(key) {
                    Some(value) => doc.insert(key.to_string(), value.clone()),
                    None => doc.remove(key),
                };
            }
        }
        changed
            .then(|| serde_json::to_string_pretty(&serde_json::Value::Object(doc)).ok())
            .flatten()
    }

    /// Jest's and Babel's configuration files (`jest.config.js`,
    /// `babel.config.js`, `.babelrc`), which decide how tests are found
    /// and transformed.
    fn is_harness_file(&self, rel: &str) -> bool {
        let file = rel.rsplit('/').next().unwrap_or(rel);
        ["jest.config", "babel.config", ".babelrc", "jest-setup"]
            .iter()
            .any(|prefix| file.starts_with(prefix))
    }

    fn harness_internals(&self) -> &'static [&'static str] {
        &["process.exit", "jest-circus", "jest-junit", JEST_JUNIT_FILE]
    }
}

impl Tooling for JavaScript {
    fn tooling_name(&self) -> &'static str {
        "javascript"
    }

    fn setup_inputs(&self) -> &'static [&'static str] {
        &["package.json", "package-lock.json", "yarn.lock", ".npmrc"]
    }

    /// Of `package.json`, its dependency tables: an exercise's name and
    /// scripts do not change what npm installs.
    fn setup_key_text(&self, rel: &str, text: &str) -> String {
        if rel != "package.json" {
            return text.to_string();
        }
        let Ok(serde_json::Value::Object(doc)) = serde_json::from_str(text) else {
            return text.to_string();
        };
        let kept: serde_json::Map<String, serde_json::Value> = doc
            .into_iter()
            .filter(|(key, _)| key.ends_with("ependencies") || key == "overrides")
            .collect();
        serde_json::Value::Object(kept).to_string()
    }

    fn cache_links(&self) -> &'static [CacheLink] {
        &[CacheLink {
            tree: "node_modules",
            cache: "js/node_modules",
        }]
    }

    /// `node --check FILE`, as an ES module (Exercism's stubs `export`
    /// their functions; Node 20 otherwise passes a module with a syntax
    /// error). Node checks one file.
    fn build_check(&self, files: &[String]) -> Vec<String> {
        let mut argv: Vec<String> = ["node", "--experimental-default-type=module", "--check"]
            .map(String::from)
            .to_vec();
        argv.extend(files.first().cloned());
        argv
    }

    /// `xtest`, `xit`, `xdescribe` and `.skip` run like the others.
    fn enable_skipped(&self, _rel: &str, text: &str) -> Option<String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut changed = false;
        while let Some(at) = rest.find(['x', '.']) {
            let (head, tail) = rest.split_at(at);
            out.push_str(head);
            let before_ok = !out
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.');
            let replaced = [
                ("xtest(", "test("),
                ("xit(", "it("),
                ("xdescribe(", "describe("),
            ]
            .iter()
            .find(|(from, _)| before_ok && tail.starts_with(from))
            .or_else(|| {
                [(".skip(", "(")]
                    .iter()
                    .find(|(from, _)| tail.starts_with(from) && skippable_before(&out))
            });
            match replaced {
                Some((from, to)) => {
                    out.push_str(to);
                    rest = &tail[from.len()..];
                    changed = true;
                }
                None => {
                    out.push_str(&tail[..1]);
                    rest = &tail[1..];
                }
            }
        }
        out.push_str(rest);
        changed.then_some(out)
    }

    fn track_job(&self, exercise: &Exercise) -> Option<TrackJob> {
        // The test files first: `--reporters` takes every value after it.
        let command = ["node", "node_modules/jest/bin/jest.js"]
            .iter()
            .map(|s| s.to_string())
            .chain(exercise.test.iter().cloned())
            .chain(
                [
                    "--ci",
                    "--watchman=false",
                    "--reporters=default",
                    "--reporters=jest-junit",
                ]
                .map(String::from),
            )
            .collect();
        let env = [
            ("JEST_JUNIT_OUTPUT_DIR", "."),
            ("JEST_JUNIT_OUTPUT_NAME", JEST_JUNIT_FILE),
            ("JEST_JUNIT_CLASSNAME", "{filepath}"),
            ("JEST_JUNIT_TITLE", "{classname} › {title}"),
            ("JEST_JUNIT_ANCESTOR_SEPARATOR", SEPARATOR),
            ("npm_config_cache", "{cache}/npm"),
            ("npm_config_update_notifier", "false"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        // npm installs into the setup's copy (its `--prefix` would also
        // move where npm reads the machine's configuration from: a
        // registry's certificate authority, say), then the modules move
        // into the cache.
        let setup = vec![
            argv(&[
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--loglevel=error",
                JEST,
                JEST_JUNIT,
            ]),
            argv(&["mkdir", "-p", "{cache}/js"]),
            argv(&["mv", "node_modules", "{cache}/js/node_modules"]),
        ];
        Some(TrackJob {
            command,
            results: Some(format!("junit:{JEST_JUNIT_FILE}")),
            env,
            setup,
            verify: self.build_check(&exercise.solution),
            allow: vec!["node node_modules/jest/bin/jest.js **".into()],
        })
    }
}

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// Whether the text before a `.skip(` is `test`, `it` or `describe`.
fn skippable_before(out: &str) -> bool {
    ["test", "it", "describe"].iter().any(|name| {
        out.strip_suffix(name).is_some_and(|head| {
            !head
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.')
        })
    })
}

/// The titles (`describe › ... › title`) of the tests a Jest file
/// defines, read lexically: `describe`/`test`/`it` calls (with their
/// `x`-prefixed and `.skip`/`.only` forms) whose first argument is a
/// string literal; a call's body nests by braces. Tables (`test.each`) and
/// computed titles are not seen.
fn scan_tests(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    // Open describe blocks: title and the brace depth of their body.
    let mut blocks: Vec<(String, usize)> = Vec::new();
    let mut pending: Option<String> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            '\'' | '"' | '`' => {
                i = string_end(&chars, i).1;
                continue;
            }
            '{' => {
                depth += 1;
                if let Some(title) = pending.take() {
                    blocks.push((title, depth));
                }
            }
            '}' => {
                if blocks.last().is_some_and(|(_, d)| *d == depth) {
                    blocks.pop();
                }
                depth = depth.saturating_sub(1);
            }
            c if c.is_alphabetic() || c == '_' || c == '$' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
                {
                    i += 1;
                }
                let after_dot = start > 0 && chars[start - 1] == '.';
                let word: String = chars[start..i].iter().collect();
                let kind = match word.as_str() {
                    "describe" | "xdescribe" | "fdescribe" => Some(true),
                    "test" | "it" | "xtest" | "xit" | "fit" => Some(false),
                    _ => None,
                };
                let Some(is_block) = kind.filter(|_| !after_dot) else {
                    continue;
                };
                let mut j = i;
                // `.skip`, `.only`, `.concurrent`: the same call.
                while chars.get(j) == Some(&'.') {
                    let from = j + 1;
                    j = from;
                    while j < chars.len() && chars[j].is_alphanumeric() {
                        j += 1;
                    }
                    let modifier: String = chars[from..j].iter().collect();
                    if !matches!(modifier.as_str(), "skip" | "only" | "concurrent") {
                        j = usize::MAX;
                        break;
                    }
                }
                if j == usize::MAX {
                    continue;
                }
                while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                    j += 1;
                }
                if chars.get(j) != Some(&'(') {
                    continue;
                }
                j += 1;
                while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                    j += 1;
                }
                if !matches!(chars.get(j), Some('\'' | '"' | '`')) {
                    continue;
                }
                let (title, end) = string_end(&chars, j);
                let Some(title) = title else {
                    i = end;
                    continue;
                };
                let path: Vec<&str> = blocks.iter().map(|(t, _)| t.as_str()).collect();
                if is_block {
                    pending = Some(title);
                } else {
                    // As jest-junit names it: a top-level test's name
                    // starts with the separator.
                    found.push(format!("{}{SEPARATOR}{title}", path.join(SEPARATOR)));
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The string literal opening at `open`: its text (`None` for a template
/// with `${`), and the index past its closing quote.
pub(super) fn string_end(chars: &[char], open: usize) -> (Option<String>, usize) {
    let quote = chars[open];
    let mut text = String::new();
    let mut plain = true;
    let mut i = open + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if let Some(&next) = chars.get(i + 1) {
                    text.push(match next {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
                i += 2;
                continue;
            }
            '$' if quote == '`' && chars.get(i + 1) == Some(&'{') => plain = false,
            c if c == quote => return (plain.then_some(text), i + 1),
            c => text.push(c),
        }
        i += 1;
    }
    (plain.then_some(text), i)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"import { twoFer } from './two-fer';

// test('commented', () => {});
describe('Two Fer', () => {
  test('no name given', () => {
    expect(twoFer()).toEqual("One for you, one for me.");
  });

  xtest("a name given", () => {
    expect(twoFer('Alice')).toEqual(`One for Alice, one for me.`);
  });

  describe('nested { brace', () => {
    test.skip('deep', () => { const o = { a: 1 }; });
  });
  it(`template ${x}`, () => {});
});

test('top level', () => {});
"#;

    #[test]
    fn the_scan_reads_describe_blocks_and_every_test_form() {
        assert_eq!(
            JavaScript.defined_tests("two-fer.spec.js", SPEC),
            [
                "two-fer.spec.js::Two Fer › no name given",
                "two-fer.spec.js::Two Fer › a name given",
                "two-fer.spec.js::Two Fer › nested { brace › deep",
                "two-fer.spec.js:: › top level",
            ]
        );
        assert!(JavaScript.is_test_file("two-fer.spec.js"));
        assert!(JavaScript.is_test_file("src/__tests__/a.js"));
        assert!(!JavaScript.is_test_file("two-fer.js"));
    }

    #[test]
    fn skipped_tests_are_enabled_and_nothing_else_changes() {
        let enabled = JavaScript.enable_skipped("x.spec.js", SPEC).unwrap();
        assert!(enabled.contains("  test(\"a name given\""));
        assert!(enabled.contains("    test('deep'"));
        assert!(!enabled.contains("xtest") && !enabled.contains(".skip"));
        let plain = "const max = 1;\ntest('a', () => fixture.skip());\n";
        assert_eq!(JavaScript.enable_skipped("x.spec.js", plain), None);
    }

    #[test]
    fn the_key_of_a_package_json_is_its_dependencies() {
        let a = r#"{"name": "@exercism/javascript-two-fer", "devDependencies": {"jest": "^29"}}"#;
        let b = r#"{"name": "@exercism/javascript-bob", "devDependencies": {"jest": "^29"}}"#;
        assert_eq!(
            JavaScript.setup_key_text("package.json", a),
            JavaScript.setup_key_text("package.json", b)
        );
    }
}
