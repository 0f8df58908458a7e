//! Leaks of the answer: what in a task lets a model read the fix instead
//! of making it. Deterministic, no model: the source's git repository
//! holding objects or refs past its base (enumerated with `git cat-file
//! --batch-all-objects` and the refs), remotes, reflogs and the files
//! that point past the base; and the oracle's distinctive added lines —
//! at least [`MIN_LINE`] non-space characters, absent from the pristine
//! version of their own file — present in another source file or the
//! prompt. A prompt that states what the hidden tests check (Bob's replies,
//! an error message a task requires) is a note, `prompt_states_answer`,
//! not a leak: every string the matched line holds is in the hidden tests.
//! A prompt holding less than a third of the oracle's distinctive lines
//! shows an example the oracle reuses (an exception class's shape, a call
//! of the API the task is about): a note, `prompt_shows_example`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::decision::{Decision, parse_decision};
use crate::manifest::{Manifest, Oracle};
use crate::protocol::Waiver;

/// Non-space characters an added line needs to count as distinctive.
pub(super) const MIN_LINE: usize = 20;
/// Largest source file searched for oracle lines.
const MAX_FILE: u64 = 4 << 20;
/// Most source files searched.
const MAX_FILES: usize = 50_000;
/// Directories never searched: the repository and build outputs.
const SKIP: &[&str] = &[".git", "target", "node_modules", "__pycache__"];

/// One finding: its kind (the name that waives it) and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub kind: Waiver,
    pub said: String,
}

impl Finding {
    fn new(kind: Waiver, said: impl Into<String>) -> Finding {
        Finding {
            kind,
            said: said.into(),
        }
    }
}

/// What a task lets a model read of its answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Findings {
    /// The evidence of every leak, one line each (the task is `leaky`).
    pub leaks: Vec<Finding>,
    /// Matches that are not leaks, one line each: the prompt states what
    /// the hidden tests check (`prompt_states_answer: ...`) or shows an
    /// example the oracle reuses (`prompt_shows_example: ...`).
    pub notes: Vec<Finding>,
}

/// The evidence of every leak of `manifest`'s answer, and the prompt's
/// matches that state what the tests check.
pub(crate) fn find_leaks(manifest: &Manifest) -> Findings {
    let mut findings = Findings {
        leaks: git_leaks(&manifest.source)
            .into_iter()
            .map(|said| Finding::new(Waiver::LeakyGit, said))
            .collect(),
        notes: Vec::new(),
    };
    oracle_line_leaks(manifest, &mut findings);
    findings.leaks.extend(
        super::copies::copy_leaks(manifest)
            .into_iter()
            .map(|said| Finding::new(Waiver::LeakyCopy, said)),
    );
    findings
}

pub(super) fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// What the source's `.git` holds past its base (`HEAD`'s commit).
fn git_leaks(source: &Path) -> Vec<String> {
    let dot_git = source.join(".git");
    if !dot_git.exists() {
        return Vec::new();
    }
    let mut leaks = Vec::new();
    for (rel, what) in [
        (
            "objects/info/alternates",
            "borrows objects from another repository",
        ),
        ("packed-refs", "has packed refs"),
        ("logs", "has reflogs"),
        ("ORIG_HEAD", "has ORIG_HEAD"),
        ("FETCH_HEAD", "has FETCH_HEAD"),
        ("refs/stash", "has a stash"),
    ] {
        if dot_git.join(rel).exists() {
            leaks.push(format!("source/.git {what} (.git/{rel})"));
        }
    }
    let Some(remotes) = git(source, &["remote"]) else {
        leaks.push("source/.git cannot be read by git".into());
        return leaks;
    };
    for remote in remotes.lines().filter(|l| !l.trim().is_empty()) {
        leaks.push(format!("source/.git has the remote {remote}"));
    }
    let head_ref = git(source, &["symbolic-ref", "-q", "HEAD"]).map(|r| r.trim().to_string());
    if let Some(refs) = git(source, &["for-each-ref", "--format=%(refname)"]) {
        for name in refs.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if head_ref.as_deref() != Some(name) {
                leaks.push(format!("source/.git has the ref {name} besides the base"));
            }
        }
    }
    // Every object the store holds, against those the base reaches.
    let reachable: BTreeSet<String> = git(source, &["rev-list", "--objects", "HEAD"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    let all = git(
        source,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname) %(objecttype)",
        ],
    )
    .unwrap_or_default();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in all.lines() {
        let mut parts = line.split_whitespace();
        let (Some(id), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        if !reachable.contains(id) {
            extra
                .entry(kind.to_string())
                .or_default()
                .push(id.to_string());
        }
    }
    for (kind, ids) in extra {
        leaks.push(format!(
            "source/.git holds {} {kind} object(s) the base does not reach (e.g. {})",
            ids.len(),
            ids[0]
        ));
    }
    leaks
}

/// The oracle's added lines, by the file they are added to.
fn oracle_lines(manifest: &Manifest) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    match &manifest.oracle {
        Some(Oracle::Patch(path)) => {
            let Ok(text) = fs::read_to_string(path) else {
                return lines;
            };
            let mut file = String::new();
            for line in text.lines() {
                if let Some(to) = line.strip_prefix("+++ ") {
                    let to = to.split('\t').next().unwrap_or(to).trim();
                    file = to.strip_prefix("b/").unwrap_or(to).to_string();
                } else if let Some(added) = line.strip_prefix('+') {
                    lines.push((file.clone(), added.to_string()));
                }
            }
        }
        Some(Oracle::Script(path)) => {
            let Ok(script) = crate::provider::load_script(path) else {
                return lines;
            };
            for reply in &script.replies {
                match parse_decision(reply) {
                    Ok(Decision::WriteFile { path, content }) => {
                        lines.extend(content.lines().map(|l| (path.clone(), l.to_string())));
                    }
                    Ok(Decision::ReplaceText {
                        path, replacement, ..
                    }) => {
                        lines.extend(replacement.lines().map(|l| (path.clone(), l.to_string())));
                    }
                    _ => {}
                }
            }
        }
        None => {}
    }
    lines
}

fn distinctive(line: &str) -> bool {
    line.chars().filter(|c| !c.is_whitespace()).count() >= MIN_LINE
}

/// The oracle's distinctive added lines found outside their own file.
fn oracle_line_leaks(manifest: &Manifest, findings: &mut Findings) {
    let mut pristine: BTreeMap<String, String> = BTreeMap::new();
    let mut needles: Vec<(String, String)> = Vec::new();
    for (file, line) in oracle_lines(manifest) {
        let trimmed = line.trim();
        if !distinctive(trimmed) {
            continue;
        }
        let own = pristine
            .entry(file.clone())
            .or_insert_with(|| fs::read_to_string(manifest.source.join(&file)).unwrap_or_default());
        if own.lines().any(|l| l.trim() == trimmed) {
            continue;
        }
        if !needles.iter().any(|(_, n)| n == trimmed) {
            needles.push((file, trimmed.to_string()));
        }
    }
    if needles.is_empty() {
        return;
    }
    // The hidden files are read only for a prompt that holds a needle.
    let mut hidden: Option<String> = None;
    let mut found: BTreeSet<usize> = BTreeSet::new();
    let mut unstated: Vec<String> = Vec::new();
    for (i, (file, needle)) in needles.iter().enumerate() {
        if !manifest.prompt.contains(needle.as_str()) {
            continue;
        }
        found.insert(i);
        let said = format!(
            "the oracle's line for {file} ({}) is in the prompt",
            shorten(needle)
        );
        let hidden = hidden.get_or_insert_with(|| hidden_text(manifest));
        if states_what_tests_check(needle, hidden) {
            findings.notes.push(Finding::new(
                Waiver::PromptStatesAnswer,
                format!("prompt_states_answer: {said}, and the hidden tests check what it says"),
            ));
        } else {
            unstated.push(said);
        }
    }
    if holds_the_answer(unstated.len(), needles.len()) {
        findings.leaks.extend(
            unstated
                .into_iter()
                .map(|said| Finding::new(Waiver::LeakyPrompt, said)),
        );
    } else if let Some(first) = unstated.first() {
        let said = format!(
            "prompt_shows_example: the prompt holds {} of the oracle's {} distinctive lines, \
             an example of a shape or an API rather than the answer ({first}{})",
            unstated.len(),
            needles.len(),
            match unstated.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            }
        );
        findings
            .notes
            .push(Finding::new(Waiver::PromptShowsExample, said));
    }
    let leaks = &mut findings.leaks;
    let mut search = |place: &str, own_file: Option<&str>, text: &str| {
        for (i, (file, needle)) in needles.iter().enumerate() {
            if found.contains(&i) || own_file == Some(file.as_str()) {
                continue;
            }
            if text.contains(needle.as_str()) {
                found.insert(i);
                leaks.push(Finding::new(
                    Waiver::LeakySource,
                    format!(
                        "the oracle's line for {file} ({}) is in {place}",
                        shorten(needle)
                    ),
                ));
            }
        }
    };
    for rel in source_files(&manifest.source) {
        let Ok(text) = read_text(&manifest.source.join(&rel)) else {
            continue;
        };
        search(&format!("source/{rel}"), Some(rel.as_str()), &text);
    }
}

/// Whether a prompt holding `held` of the oracle's `distinctive` lines
/// (none of them stated by the hidden tests) holds the answer: a third of
/// them or more. A smaller share is an example the oracle reuses (the
/// shape of an exception class, a call of the API the task is about).
fn holds_the_answer(held: usize, distinctive: usize) -> bool {
    held > 0 && held * 3 >= distinctive
}

/// The text of the hidden files (bounded as the source's search is).
fn hidden_text(manifest: &Manifest) -> String {
    let Some(acceptance) = &manifest.acceptance else {
        return String::new();
    };
    let mut text = String::new();
    for rel in source_files(&acceptance.dir) {
        if let Ok(body) = read_text(&acceptance.dir.join(&rel)) {
            text.push_str(&body);
            text.push('\n');
        }
    }
    text
}

/// Whether `line` states what the tests in `hidden` check: the line is
/// in them, or it holds string literals and every one is.
fn states_what_tests_check(line: &str, hidden: &str) -> bool {
    if hidden.contains(line) {
        return true;
    }
    let literals = string_literals(line);
    !literals.is_empty() && literals.iter().all(|l| hidden.contains(l.as_str()))
}

/// The contents of the quoted strings of `line` (`"..."` or `'...'`,
/// escapes kept as written), those under three characters left out.
fn string_literals(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '"' && c != '\'' {
            continue;
        }
        let mut literal = String::new();
        let mut closed = false;
        while let Some(d) = chars.next() {
            match d {
                '\\' => {
                    literal.push(d);
                    if let Some(e) = chars.next() {
                        literal.push(e);
                    }
                }
                d if d == c => {
                    closed = true;
                    break;
                }
                d => literal.push(d),
            }
        }
        if closed && literal.chars().count() >= 3 {
            out.push(literal);
        }
    }
    out
}

fn shorten(line: &str) -> String {
    let mut out: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        out.push('…');
    }
    format!("`{out}`")
}

pub(super) fn read_text(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(MAX_FILE)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The regular files of the tree at `root`, as [`walk`] finds them.
pub(crate) fn source_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    walk(root, "", 0, &mut files);
    files
}

/// Regular files under `root` (relative, `/`-separated), symlinks not
/// followed, [`SKIP`] directories left out.
pub(super) fn walk(root: &Path, rel: &str, depth: usize, out: &mut Vec<String>) {
    if depth > 32 || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = fs::read_dir(root.join(rel)) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        let child = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        match entry.file_type() {
            Ok(t) if t.is_dir() && !SKIP.contains(&name.as_str()) => {
                walk(root, &child, depth + 1, out)
            }
            Ok(t) if t.is_file() => out.push(child),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_not_distinctive() {
        assert!(!distinctive("    }"));
        assert!(!distinctive("return a + b;  "));
        assert!(distinctive(
            "return format!(\"One for {who}, one for me.\")"
        ));
        assert_eq!(shorten("abc"), "`abc`");
    }

    #[test]
    fn a_third_of_the_answer_in_the_prompt_is_the_answer() {
        assert!(!holds_the_answer(0, 1));
        assert!(holds_the_answer(1, 1));
        assert!(holds_the_answer(1, 3));
        assert!(holds_the_answer(4, 12));
        // The exception-class example of a 26-line answer: 4 lines.
        assert!(!holds_the_answer(4, 26));
        assert!(!holds_the_answer(2, 10));
    }

    #[test]
    fn a_line_the_tests_check_word_for_word_is_stated_not_leaked() {
        let tests = "assert_eq!(reply(\"WATCH OUT!\"), \"Whoa, chill out!\");\n\
                     self.assertEqual(err.exception.args[0], 'Only positive integers are allowed')";
        // Bob's reply and a required error message: what the tests check.
        assert!(states_what_tests_check(
            "(true, false) => \"Whoa, chill out!\",",
            tests
        ));
        assert!(states_what_tests_check(
            "raise ValueError(\"Only positive integers are allowed\")",
            tests
        ));
        // Logic with no string, or a string the tests never name: a leak.
        assert!(!states_what_tests_check(
            "return n * (n + 1) / 2;  // closed form",
            tests
        ));
        assert!(!states_what_tests_check(
            "(true, false) => \"Whoa, calm down please\",",
            tests
        ));
        // One string the tests check and one they do not: a leak.
        assert!(!states_what_tests_check(
            "format!(\"{}: {}\", \"Whoa, chill out!\", \"and more\")",
            tests
        ));
        assert_eq!(
            string_literals(r#"f("it's", 'x', "a\"b")"#),
            ["it's", "a\\\"b"]
        );
    }
}
