//! A lexical reading of Rust source, enough to find its `#[test]`
//! functions and the places between them: comments, strings and
//! character literals are skipped, inline `mod NAME { ... }` blocks nest.
//! A macro that generates tests is not seen.

/// What a scan of a file found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Scan {
    /// The paths (`module::fn`) of the `#[test]` functions, in order.
    pub(super) tests: Vec<String>,
    /// Where a test can go: before the first test's attributes, and right
    /// after each test's closing brace.
    pub(super) slots: Vec<Slot>,
    /// Each test function whose body was read whole, in order.
    pub(super) fns: Vec<TestFn>,
}

/// A `#[test]` function and where its parts lie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestFn {
    /// `module::fn`, as in [`Scan::tests`].
    pub(super) path: String,
    /// The inline modules it lies in.
    pub(super) modules: Vec<String>,
    pub(super) name: String,
    /// Byte offset of its first attribute.
    pub(super) start: usize,
    /// Byte offset of its name.
    pub(super) name_at: usize,
    /// Byte offset of its body's `{`.
    pub(super) body_open: usize,
    /// Byte offset past its body's `}`.
    pub(super) end: usize,
    /// Its attributes, whitespace removed (`should_panic(expected="x")`).
    pub(super) attrs: Vec<String>,
    /// `async fn`.
    pub(super) is_async: bool,
}

/// A place between tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Slot {
    /// Byte offset in the text.
    pub(super) at: usize,
    /// The inline modules it lies in.
    pub(super) modules: Vec<String>,
    /// Before a test's first attribute (else after a test's body).
    pub(super) before: bool,
}

/// The paths of the `#[test]` functions in `text`.
pub(super) fn scan_tests(text: &str) -> Vec<String> {
    scan(text).tests
}

/// The test open while its signature and body are read.
struct OpenTest {
    /// The brace depth the `fn` is at.
    depth: usize,
    modules: Vec<String>,
    body_open: bool,
    found: TestFn,
}

/// The tests of `text` and the slots between them.
pub(super) fn scan(text: &str) -> Scan {
    let tokens = tokens(text);
    let mut found = Scan::default();
    // Open inline modules: name and the brace depth inside them.
    let mut modules: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_test = false;
    // Where the run of attributes before the next item starts.
    let mut group_start: Option<usize> = None;
    let mut attrs: Vec<String> = Vec::new();
    let mut is_async = false;
    let mut open: Option<OpenTest> = None;
    let mut i = 0;
    while i < tokens.len() {
        let (token, at) = &tokens[i];
        match token {
            Token::Punct('{') => {
                depth += 1;
                if let Some(test) = open.as_mut()
                    && depth == test.depth + 1
                    && !test.body_open
                {
                    test.body_open = true;
                    test.found.body_open = *at;
                }
                group_start = None;
                attrs.clear();
            }
            Token::Punct('}') => {
                if let Some(mut test) = open.take_if(|t| t.body_open && depth == t.depth + 1) {
                    test.found.end = at + 1;
                    found.fns.push(test.found);
                    found.slots.push(Slot {
                        at: at + 1,
                        modules: test.modules,
                        before: false,
                    });
                }
                if modules.last().is_some_and(|(_, d)| *d == depth) {
                    modules.pop();
                }
                depth = depth.saturating_sub(1);
                pending_test = false;
                group_start = None;
                attrs.clear();
            }
            Token::Punct(';') => {
                pending_test = false;
                group_start = None;
                attrs.clear();
            }
            Token::Attribute(body) => {
                if group_start.is_none() {
                    is_async = false;
                }
                group_start.get_or_insert(*at);
                let body: String = body.chars().filter(|c| !c.is_whitespace()).collect();
                if body == "test" || body.ends_with("::test") {
                    pending_test = true;
                }
                attrs.push(body);
            }
            Token::Ident(word) if word == "async" => is_async = true,
            Token::Ident(word) if word == "mod" => {
                if let (Some((Token::Ident(name), _)), Some((Token::Punct('{'), _))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    depth += 1;
                    modules.push((name.clone(), depth));
                    i += 3;
                    pending_test = false;
                    group_start = None;
                    attrs.clear();
                    continue;
                }
            }
            Token::Ident(word) if word == "fn" => {
                if let (true, Some((Token::Ident(name), name_at))) =
                    (pending_test, tokens.get(i + 1))
                {
                    let path: Vec<String> = modules.iter().map(|(m, _)| m.clone()).collect();
                    if found.tests.is_empty() {
                        found.slots.push(Slot {
                            at: group_start.unwrap_or(*at),
                            modules: path.clone(),
                            before: true,
                        });
                    }
                    let mut full = path.clone();
                    full.push(name.clone());
                    found.tests.push(full.join("::"));
                    open = Some(OpenTest {
                        depth,
                        modules: path.clone(),
                        body_open: false,
                        found: TestFn {
                            path: full.join("::"),
                            modules: path,
                            name: name.clone(),
                            start: group_start.unwrap_or(*at),
                            name_at: *name_at,
                            body_open: 0,
                            end: 0,
                            attrs: std::mem::take(&mut attrs),
                            is_async,
                        },
                    });
                }
                pending_test = false;
                group_start = None;
                attrs.clear();
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

/// Identifiers, braces and semicolons, and attributes, of Rust source,
/// each with the byte offset where it starts.
fn tokens(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let offsets: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    let at = |i: usize| offsets.get(i).copied().unwrap_or(text.len());
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
                out.push((Token::Attribute(body), at(i)));
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
            out.push((Token::Ident(word), at(start)));
        } else {
            if matches!(c, '{' | '}' | ';') {
                out.push((Token::Punct(c), at(i)));
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
    fn slots_lie_before_the_first_test_and_after_each_body() {
        let text = "use x;\n\n#[test]\n#[ignore]\nfn a() { if true { } }\n\nfn helper() {}\n\nmod m {\n    #[test]\n    fn b() {}\n}\n";
        let scan = scan(text);
        assert_eq!(scan.tests, ["a", "m::b"]);
        let slots: Vec<(&str, bool, Vec<String>)> = scan
            .slots
            .iter()
            .map(|s| (&text[s.at.min(text.len())..], s.before, s.modules.clone()))
            .collect();
        assert_eq!(slots.len(), 3);
        assert!(slots[0].0.starts_with("#[test]\n#[ignore]\nfn a()"));
        assert!(slots[0].1);
        assert!(slots[1].0.starts_with("\n\nfn helper"));
        assert!(slots[2].0.starts_with("\n}\n"));
        assert_eq!(slots[2].2, ["m"]);
    }
}
