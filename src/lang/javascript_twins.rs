//! JavaScript's twins and canary. A twin of `test(TITLE, CALLBACK)` is
//! `test(FRESH, async () => { await (CALLBACK)(); throw new Error(TOKEN); })`
//! beside a test of the same `describe` block: the callback runs as
//! written, then the twin fails with its token. Callbacks that take an
//! argument (`done`) and tables (`test.each`) get none. The canary is a
//! top-level test whose `expect` fails.

use super::canary::{draw_failing, draw_name, style_of};
use super::javascript::{SEPARATOR, string_end};
use super::twins::{Edit, Names, Twin, Twinned, Wanted, apply, draw_token, twin_message};

/// A test call as the scan found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Call {
    /// `test`, `it` (with any `x` or `f` prefix), as written.
    pub(super) ident: String,
    /// Its describe blocks' titles, outermost first.
    pub(super) blocks: Vec<String>,
    pub(super) title: String,
    /// Byte range of the title's literal, quotes included.
    pub(super) title_span: (usize, usize),
    /// Byte offset of the start of its line.
    pub(super) line_start: usize,
    /// Byte range of its callback, when it could be read.
    pub(super) callback: Option<(usize, usize)>,
    /// The arguments after the callback (`, 10000`), as written.
    pub(super) rest: String,
    /// Byte offset past the call's `)` and any `;`.
    pub(super) end: usize,
    /// `.skip`, `.only`, ... after the name.
    pub(super) modified: bool,
}

impl Call {
    /// Its name as jest-junit writes it: the describe blocks, the
    /// separator, the title (a top-level test's name starts with the
    /// separator).
    fn path(&self) -> String {
        format!("{}{SEPARATOR}{}", self.blocks.join(SEPARATOR), self.title)
    }
}

/// The test calls of `text`, read lexically as `scan_tests` reads titles.
pub(super) fn calls(text: &str) -> Vec<Call> {
    let chars: Vec<char> = text.chars().collect();
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(at, _)| at)
        .chain(std::iter::once(text.len()))
        .collect();
    let at = |i: usize| offsets.get(i).copied().unwrap_or(text.len());
    let mut found = Vec::new();
    let mut blocks: Vec<(String, usize)> = Vec::new();
    let mut pending: Option<String> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
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
                if start > 0 && chars[start - 1] == '.' {
                    continue;
                }
                let word: String = chars[start..i].iter().collect();
                let is_block = match word.as_str() {
                    "describe" | "xdescribe" | "fdescribe" => true,
                    "test" | "it" | "xtest" | "xit" | "fit" => false,
                    _ => continue,
                };
                let mut j = i;
                let mut modified = false;
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
                    modified = true;
                }
                if j == usize::MAX {
                    continue;
                }
                j = skip_space(&chars, j);
                if chars.get(j) != Some(&'(') {
                    continue;
                }
                j = skip_space(&chars, j + 1);
                if !matches!(chars.get(j), Some('\'' | '"' | '`')) {
                    continue;
                }
                let (title, title_end) = string_end(&chars, j);
                let Some(title) = title else {
                    i = title_end;
                    continue;
                };
                if is_block {
                    pending = Some(title);
                } else {
                    let (callback, rest, end) = arguments(&chars, title_end);
                    let line_start = text[..at(start)].rfind('\n').map_or(0, |n| n + 1);
                    found.push(Call {
                        ident: word,
                        blocks: blocks.iter().map(|(t, _)| t.clone()).collect(),
                        title,
                        title_span: (at(j), at(title_end)),
                        line_start,
                        callback: callback.map(|(a, b)| (at(a), at(b))),
                        rest,
                        end: at(end),
                        modified,
                    });
                }
                i = title_end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

fn skip_space(chars: &[char], mut j: usize) -> usize {
    while chars.get(j).is_some_and(|c| c.is_whitespace()) {
        j += 1;
    }
    j
}

/// After a call's title (ending at `from`): the callback's range (in
/// chars), the arguments after it as written, and the index past the
/// call's `)` and any `;`. No callback when the arguments cannot be read.
fn arguments(chars: &[char], from: usize) -> (Option<(usize, usize)>, String, usize) {
    let mut j = skip_space(chars, from);
    if chars.get(j) != Some(&',') {
        return (None, String::new(), from);
    }
    j = skip_space(chars, j + 1);
    let start = j;
    let Some((end, mut stop)) = argument_end(chars, j) else {
        return (None, String::new(), from);
    };
    // The arguments after the callback (a timeout), a trailing comma
    // included, up to the call's `)`.
    let mut rest_end = end;
    while stop == ',' {
        let Some((after, next)) = argument_end(chars, rest_end + 1) else {
            return (None, String::new(), from);
        };
        (rest_end, stop) = (after, next);
    }
    let rest: String = chars[end..rest_end].iter().collect();
    let mut past = rest_end + 1;
    let semi = skip_space(chars, past);
    if chars.get(semi) == Some(&';') {
        past = semi + 1;
    }
    let mut trimmed = end;
    while trimmed > start && chars[trimmed - 1].is_whitespace() {
        trimmed -= 1;
    }
    (Some((start, trimmed)), rest, past)
}

/// The end of the argument starting at `j`: the index of the `,` or `)`
/// that ends it at depth 0, and which one. Strings, templates, comments
/// and regular expression literals are skipped.
fn argument_end(chars: &[char], mut j: usize) -> Option<(usize, char)> {
    let mut depth = 0usize;
    let mut last = '(';
    while j < chars.len() {
        let c = chars[j];
        match c {
            '\'' | '"' | '`' => {
                j = string_end(chars, j).1;
                last = 'a';
                continue;
            }
            '/' if chars.get(j + 1) == Some(&'/') => {
                while j < chars.len() && chars[j] != '\n' {
                    j += 1;
                }
                continue;
            }
            '/' if chars.get(j + 1) == Some(&'*') => {
                j += 2;
                while j + 1 < chars.len() && !(chars[j] == '*' && chars[j + 1] == '/') {
                    j += 1;
                }
                j += 2;
                continue;
            }
            '/' if "(,=:[!&|?{};".contains(last) => {
                j = regex_end(chars, j);
                last = 'a';
                continue;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => {
                return (c == ')').then_some((j, c));
            }
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return Some((j, ',')),
            _ => {}
        }
        if !c.is_whitespace() {
            last = c;
        }
        j += 1;
    }
    None
}

/// Past a regular expression literal opening at `open`.
fn regex_end(chars: &[char], open: usize) -> usize {
    let mut j = open + 1;
    let mut class = false;
    while j < chars.len() && chars[j] != '\n' {
        match chars[j] {
            '\\' => j += 1,
            '[' => class = true,
            ']' => class = false,
            '/' if !class => {
                j += 1;
                while chars.get(j).is_some_and(|c| c.is_ascii_alphabetic()) {
                    j += 1;
                }
                return j;
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// Whether a callback takes an argument (`done`, `(done) =>`,
/// `function (done)`).
fn takes_argument(callback: &str) -> bool {
    let text = callback.trim_start();
    let text = text.strip_prefix("async").map_or(text, str::trim_start);
    if let Some(rest) = text.strip_prefix("function") {
        let params = rest.split_once('(').and_then(|(_, r)| r.split_once(')'));
        return params.is_none_or(|(p, _)| !p.trim().is_empty());
    }
    if let Some(rest) = text.strip_prefix('(') {
        return rest
            .split_once(')')
            .is_none_or(|(p, _)| !p.trim().is_empty());
    }
    // `x => ...`: a bare parameter.
    true
}

/// The twins of the tests of the file `rel` (`text`), as [`Wanted`]
/// says; every test titled by a plain literal is renamed (titles are
/// never written elsewhere in code).
pub(super) fn plant(
    rel: &str,
    text: &str,
    wanted: Wanted<'_>,
    rng: &mut fastrand::Rng,
) -> Option<Twinned> {
    let found = calls(text);
    if found.is_empty() || text.contains("toMatchSnapshot(") {
        // Snapshots are stored under their tests' names.
        return None;
    }
    let inventory = |path: &str| format!("{rel}::{path}");
    let own: Vec<&str> = found.iter().map(|c| c.title.as_str()).collect();
    let mut names = Names::titles(&own);
    let mut twinned = Twinned::default();
    let mut edits = Vec::new();
    for call in &found {
        let title = names.draw(text, rng);
        let (start, end) = call.title_span;
        edits.push(Edit::replace(start, end - start, json(&title)));
        let mut renamed = call.clone();
        renamed.title = title;
        twinned
            .renamed
            .push((inventory(&renamed.path()), inventory(&call.path())));
    }
    for call in &found {
        let real = inventory(&call.path());
        let count = wanted(&real);
        if count == 0 {
            continue;
        }
        let callback = call
            .callback
            .and_then(|(a, b)| text.get(a..b))
            .filter(|cb| !takes_argument(cb) && !call.modified);
        let Some(callback) = callback else {
            twinned.refused.push((
                real,
                "its callback takes an argument or could not be read".into(),
            ));
            continue;
        };
        // A call whose arguments could not be read has no known end.
        let siblings: Vec<&Call> = found
            .iter()
            .filter(|c| c.blocks == call.blocks && c.callback.is_some())
            .collect();
        for _ in 0..count {
            let title = names.draw(text, rng);
            let token = draw_token(rng);
            let message = twin_message(&token, rng);
            let sibling = siblings[rng.usize(..siblings.len())];
            let indent: String = text[sibling.line_start..]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            let block = format!(
                "\n{indent}{}({}, async () => {{\n{indent}  await ({callback})();\n{indent}  throw new Error({});\n{indent}}}{});",
                call.ident,
                json(&title),
                json(&message),
                call.rest
            );
            edits.push(Edit::insert(sibling.end, block));
            let mut twin = call.clone();
            twin.title = title;
            twinned.twins.push(Twin {
                name: inventory(&twin.path()),
                of: real.clone(),
                token,
            });
        }
    }
    twinned.text = apply(text, edits)?;
    Some(twinned)
}

/// A canary: a top-level test at the end of the file whose `expect`
/// fails, under a title drawn in the style of the file's.
pub(super) fn canary(rel: &str, text: &str, rng: &mut fastrand::Rng) -> Option<(String, String)> {
    let found = calls(text);
    if found.is_empty() {
        return None;
    }
    let own: Vec<String> = found.iter().map(|c| c.title.replace(' ', "_")).collect();
    let own: Vec<&str> = own.iter().map(String::as_str).collect();
    let title = draw_name(style_of(&own, ""), &own, text, rng).replace('_', " ");
    let failing = draw_failing(rng);
    let block = format!(
        "\n\ntest({}, () => {{\n  expect({} + {}).toBe({});\n}});\n",
        json(&title),
        failing.left,
        failing.right,
        failing.expected
    );
    let mut planted = text.to_string();
    planted.push_str(&block);
    Some((planted, format!("{rel}::{SEPARATOR}{title}")))
}

fn json(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"import { twoFer } from './two-fer';

describe('Two Fer', () => {
  test('no name given', () => {
    expect(twoFer()).toEqual("One for you, one for me.");
  });

  test(
    'prettier wrapped',
    () => {
      expect(twoFer()).toEqual('x');
    },
    20 * 1000,
  );

  test("a regex ) inside", () => {
    expect('a)b').toMatch(/\)/);
  }, 10000);

  test('with done', (done) => {
    done();
  });

  describe('nested', () => {
    it(`deep`, async () => { const o = { a: 1 }; await o; });
  });
});

test('top level', function () {
  return 1;
});
"#;

    #[test]
    fn calls_are_read_with_their_callbacks_and_ends() {
        let found = calls(SPEC);
        let titles: Vec<String> = found.iter().map(Call::path).collect();
        assert_eq!(
            titles,
            [
                "Two Fer › no name given",
                "Two Fer › prettier wrapped",
                "Two Fer › a regex ) inside",
                "Two Fer › with done",
                "Two Fer › nested › deep",
                " › top level"
            ]
        );
        let wrapped = &found[1];
        assert_eq!(wrapped.rest, ",\n    20 * 1000,\n  ");
        assert!(SPEC[..wrapped.end].ends_with("20 * 1000,\n  );"));
        let regex = &found[2];
        let (a, b) = regex.callback.unwrap();
        assert!(
            SPEC[a..b].ends_with("toMatch(/\\)/);\n  }"),
            "{}",
            &SPEC[a..b]
        );
        assert_eq!(regex.rest, ", 10000");
        assert!(SPEC[..regex.end].ends_with("}, 10000);"));
        assert!(takes_argument("(done) => {}"));
        assert!(takes_argument("function(done) {}"));
        assert!(!takes_argument("async () => {}"));
        assert!(!takes_argument("function () {}"));
    }

    #[test]
    fn twins_wrap_the_callback_and_titles_are_renamed() {
        let mut rng = fastrand::Rng::with_seed(4);
        let t = plant("two-fer.spec.js", SPEC, &|_| 1, &mut rng).unwrap();
        assert_eq!(t.renamed.len(), 6);
        assert_eq!(t.twins.len(), 5, "{}", t.text);
        assert_eq!(t.refused.len(), 1);
        assert!(!t.text.contains("'no name given'"));
        // The twins are tests the scan finds, in their blocks.
        let after = calls(&t.text);
        assert_eq!(after.len(), 11, "{}", t.text);
        let deep = t.twins.iter().find(|w| w.of.ends_with("deep")).unwrap();
        assert!(
            deep.name
                .starts_with("two-fer.spec.js::Two Fer › nested › ")
        );
        assert!(t.text.contains(", 10000);"));
        for twin in &t.twins {
            assert!(t.text.contains(&twin.token));
        }
        let (planted, name) = canary("two-fer.spec.js", SPEC, &mut rng).unwrap();
        assert!(name.starts_with("two-fer.spec.js::"));
        assert_eq!(calls(&planted).len(), 7);
    }
}
