//! A lexical reading of Python source, enough to find its test functions
//! and their extent: physical lines are joined into logical lines while a
//! bracket is open, a string spans lines or a backslash continues one;
//! comments and strings (every prefix and quote, triple-quoted too) are
//! skipped. A multi-line decorator is one logical line, so it is never
//! taken apart from its function.

/// One logical line: a statement's lines, comments and blank lines left
/// out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Logical {
    /// Byte offset of its first line's start.
    pub(super) start: usize,
    /// Byte offset past its last line (after the newline).
    pub(super) end: usize,
    /// Columns of indentation of its first line.
    pub(super) indent: usize,
}

impl Logical {
    /// Its text from the first non-blank character.
    pub(super) fn content<'a>(&self, text: &'a str) -> &'a str {
        text.get(self.start..self.end).unwrap_or("").trim_start()
    }
}

/// The logical lines of `text`, in order.
pub(super) fn logical_lines(text: &str) -> Vec<Logical> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0usize;
    let mut start: Option<usize> = None;
    let mut depth = 0usize;
    let mut line_start = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                i += 1;
                if depth == 0 {
                    close(&mut out, text, &mut start, i);
                }
                line_start = i;
                continue;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => {
                // An explicit continuation: the statement goes on.
                start.get_or_insert(line_start);
                i += 2;
                line_start = i;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        start.get_or_insert(line_start);
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\'' | b'"' => {
                i = string_end(bytes, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    close(&mut out, text, &mut start, text.len());
    out
}

fn close(out: &mut Vec<Logical>, text: &str, start: &mut Option<usize>, end: usize) {
    if let Some(start) = start.take() {
        let line = text.get(start..end).unwrap_or("");
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        out.push(Logical { start, end, indent });
    }
}

/// Past the end of the string whose opening quote is at `open`.
fn string_end(bytes: &[u8], open: usize) -> usize {
    let quote = bytes[open];
    let triple = bytes.get(open + 1) == Some(&quote) && bytes.get(open + 2) == Some(&quote);
    let mut i = if triple { open + 3 } else { open + 1 };
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' {
            // Raw or not, a string does not end on an escaped quote.
            i += 2;
            continue;
        }
        if !triple && b == b'\n' {
            // An unterminated one-line string ends with its line.
            return i;
        }
        if b == quote {
            if !triple {
                return i + 1;
            }
            if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                return i + 3;
            }
        }
        i += 1;
    }
    i
}

/// A function defined in a file, as the scan found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Function {
    pub(super) name: String,
    /// The classes it is defined in, outermost first (empty: a module
    /// function), each with whether pytest collects its tests (`Test*`
    /// or a `unittest.TestCase` subclass).
    pub(super) classes: Vec<(String, bool)>,
    /// Byte offset of its first decorator (or its `def` line).
    pub(super) start: usize,
    /// Byte offset of its name in its `def` line.
    pub(super) name_at: usize,
    /// Byte offset where the module-level statement it is part of starts
    /// (itself, or its outermost class), decorators included.
    pub(super) top_start: usize,
    /// Byte offset past its body's last line.
    pub(super) end: usize,
    /// Columns of indentation of its `def` line.
    pub(super) indent: usize,
    /// Its decorators, each as written.
    pub(super) decorators: Vec<String>,
    pub(super) is_async: bool,
}

impl Function {
    /// Whether pytest collects it as a test (a `test*` function at module
    /// level or in collected classes).
    pub(super) fn is_test(&self) -> bool {
        self.name.starts_with("test") && self.classes.iter().all(|(_, collected)| *collected)
    }
}

/// A class and the byte offset past its body.
struct OpenClass {
    indent: usize,
    name: String,
    collected: bool,
}

/// The functions of `text` that are module functions or methods of
/// classes (a function nested in another function is not), in order.
pub(super) fn functions(text: &str) -> Vec<Function> {
    let lines = logical_lines(text);
    let mut found: Vec<Function> = Vec::new();
    let mut classes: Vec<OpenClass> = Vec::new();
    // The function whose body is being read: its index in `found`.
    let mut open: Option<usize> = None;
    let mut decorators: Vec<(usize, String)> = Vec::new();
    let (mut top_decorators, mut top_start): (Option<usize>, usize) = (None, 0);
    for line in &lines {
        let content = line.content(text);
        if line.indent == 0 {
            if content.starts_with('@') {
                top_decorators.get_or_insert(line.start);
            } else {
                top_start = top_decorators.take().unwrap_or(line.start);
            }
        }
        if let Some(index) = open {
            if line.indent > found[index].indent {
                found[index].end = line.end;
                continue;
            }
            open = None;
        }
        while classes.last().is_some_and(|c| c.indent >= line.indent) {
            classes.pop();
        }
        if let Some(decorator) = content.strip_prefix('@') {
            decorators.push((line.start, decorator.trim_end().to_string()));
            continue;
        }
        let (is_async, def) = match content.strip_prefix("async ") {
            Some(rest) => (true, rest.trim_start()),
            None => (false, content),
        };
        if let Some(name) = definition(def, "def") {
            let start = decorators.first().map_or(line.start, |(at, _)| *at);
            let own = text.get(line.start..line.end).unwrap_or("");
            let name_at = own
                .find("def")
                .and_then(|at| {
                    let rest = &own[at + 3..];
                    let skipped = rest.len() - rest.trim_start().len();
                    Some(line.start + at + 3 + skipped)
                        .filter(|_| rest.trim_start().starts_with(name))
                })
                .unwrap_or(line.start);
            found.push(Function {
                name: name.to_string(),
                name_at,
                top_start,
                classes: classes
                    .iter()
                    .map(|c| (c.name.clone(), c.collected))
                    .collect(),
                start,
                end: line.end,
                indent: line.indent,
                decorators: decorators.drain(..).map(|(_, d)| d).collect(),
                is_async,
            });
            open = Some(found.len() - 1);
            continue;
        }
        decorators.clear();
        if let Some(name) = definition(content, "class") {
            let rest = &content[5..].trim_start()[name.len()..];
            let bases = rest.split(')').next().unwrap_or("");
            let unittest = bases.starts_with('(') && bases.contains("TestCase");
            classes.push(OpenClass {
                indent: line.indent,
                name: name.to_string(),
                collected: name.starts_with("Test") || unittest,
            });
        }
    }
    found
}

/// The name a `KEYWORD NAME...` line defines.
fn definition<'a>(content: &'a str, keyword: &str) -> Option<&'a str> {
    let rest = content.strip_prefix(keyword)?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..end];
    (!name.is_empty()).then_some(name)
}

/// Byte offsets where a module-level function can go: the start of each
/// top-level test function or class (its first decorator, however many
/// lines it spans), and the end of the text.
pub(super) fn top_level_slots(text: &str) -> Vec<usize> {
    let mut slots = Vec::new();
    let mut decorators: Option<usize> = None;
    for line in logical_lines(text) {
        if line.indent > 0 {
            continue;
        }
        let content = line.content(text);
        let test = ["def test", "async def test", "class Test"]
            .iter()
            .any(|p| content.starts_with(p));
        if content.starts_with('@') {
            decorators.get_or_insert(line.start);
        } else if test {
            slots.push(decorators.take().unwrap_or(line.start));
        } else {
            decorators = None;
        }
    }
    slots.push(text.len());
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"import pytest
from calc import mean

x = {
    'a': 1,  # a comment (with a bracket
}

@pytest.mark.xfail(
    reason="not yet",
)
def test_xfail():
    assert mean([1]) == 2

def helper(a,
           b):
    s = """
def test_in_string():
    pass
"""
    return s

class TestGroup:
    @staticmethod
    def helper():
        pass

    @pytest.mark.parametrize(
        "v",
        [1, 2],
    )
    def test_method(self, v):
        def test_nested():
            pass
        assert v


class Plain:
    def test_not_collected(self):
        pass

async def test_async():
    await x()
"#;

    #[test]
    fn a_multi_line_decorator_is_one_logical_line_with_its_function() {
        let found = functions(TEXT);
        let names: Vec<(&str, bool)> = found
            .iter()
            .map(|f| (f.name.as_str(), f.is_test()))
            .collect();
        assert_eq!(
            names,
            [
                ("test_xfail", true),
                ("helper", false),
                ("helper", false),
                ("test_method", true),
                ("test_not_collected", false),
                ("test_async", true),
            ]
        );
        let xfail = &found[0];
        assert!(TEXT[xfail.start..].starts_with("@pytest.mark.xfail(\n"));
        assert!(TEXT[..xfail.end].ends_with("assert mean([1]) == 2\n"));
        assert_eq!(xfail.decorators.len(), 1);
        let method = &found[3];
        assert_eq!(method.classes, [("TestGroup".to_string(), true)]);
        assert_eq!(method.indent, 4);
        assert!(
            TEXT[method.start..].starts_with("    @")
                && TEXT[method.start..]
                    .trim_start()
                    .starts_with("@pytest.mark.parametrize(\n")
        );
        assert!(TEXT[..method.end].ends_with("        assert v\n"));
        assert!(found[5].is_async);
        for f in &found {
            assert!(TEXT[f.name_at..].starts_with(&f.name), "{f:?}");
        }
        assert_eq!(method.top_start, TEXT.find("class TestGroup").unwrap());
        assert_eq!(xfail.top_start, xfail.start);
    }

    #[test]
    fn slots_are_above_every_decorator_line() {
        let slots = top_level_slots(TEXT);
        let starts: Vec<&str> = slots
            .iter()
            .map(|&at| TEXT[at..].lines().next().unwrap_or(""))
            .collect();
        assert_eq!(
            starts,
            [
                "@pytest.mark.xfail(",
                "class TestGroup:",
                "async def test_async():",
                ""
            ]
        );
    }

    #[test]
    fn strings_comments_and_continuations_do_not_end_or_open_lines() {
        let text = "a = 'it''s (' + \"\\\"(\" + r'\\'('\nb = 1 + \\\n    2\nc = f'{x}'  # (\nd = '''\n)'''\n";
        let lines = logical_lines(text);
        let firsts: Vec<&str> = lines
            .iter()
            .map(|l| l.content(text).split('=').next().unwrap_or("").trim())
            .collect();
        assert_eq!(firsts, ["a", "b", "c", "d"]);
    }
}
