//! Python's twins: a test function copied whole (its decorators, so a
//! `parametrize` copies every case) under a fresh name, then wrapped by a
//! small helper planted in the file, which calls it and raises
//! `AssertionError` with the twin's token once it has returned (an early
//! `return` included; an `async` test gets an `async` wrapper). The copy
//! keeps its body's text as written: nothing is re-indented, so string
//! literals and the source lines a traceback shows are the original's.
//! Module functions are copied beside module functions, methods beside the
//! methods of their class (a `unittest.TestCase` too).

use super::canary::style_of;
use super::python_scan::{Function, functions};
use super::twins::{
    Edit, Names, Twin, Twinned, Wanted, apply, draw_token, twin_message, word_count,
};

/// The inventory name of `f` in the module `module`.
pub(super) fn inventory_of(module: &str, f: &Function) -> String {
    let mut path = module.to_string();
    for (class, _) in &f.classes {
        path.push('.');
        path.push_str(class);
    }
    format!("{path}::{}", f.name)
}

/// The twins of the tests of `text` (module `module`), as [`Wanted`]
/// says; every test whose name appears nowhere else (in `text` or
/// `also`) is renamed.
pub(super) fn plant(
    module: &str,
    text: &str,
    wanted: Wanted<'_>,
    also: &str,
    rng: &mut fastrand::Rng,
) -> Option<Twinned> {
    let all = functions(text);
    let tests: Vec<&Function> = all.iter().filter(|f| f.is_test()).collect();
    if tests.is_empty() {
        return None;
    }
    let own: Vec<&str> = tests.iter().map(|f| f.name.as_str()).collect();
    let mut names = Names::new(style_of(&own, "test_"), &own);
    let mut twinned = Twinned::default();
    let mut edits = Vec::new();
    let mut new_name = std::collections::BTreeMap::new();
    for f in &tests {
        let real = inventory_of(module, f);
        if word_count(text, &f.name) == 1 && word_count(also, &f.name) == 0 {
            let name = names.draw(text, rng);
            edits.push(Edit::replace(f.name_at, f.name.len(), name.clone()));
            let mut renamed = (*f).clone();
            renamed.name.clone_from(&name);
            twinned
                .renamed
                .push((inventory_of(module, &renamed), real.clone()));
            new_name.insert(real, name);
        }
    }
    let helper = names.draw(text, rng).replacen("test", "_check", 1);
    let mut first_twin: Option<usize> = None;
    for f in &tests {
        let real = inventory_of(module, f);
        let count = wanted(&real);
        if count == 0 {
            continue;
        }
        let Some(copy) = text.get(f.start..f.end) else {
            continue;
        };
        let siblings: Vec<&&Function> = tests
            .iter()
            .filter(|s| s.classes == f.classes && s.indent == f.indent)
            .collect();
        for _ in 0..count {
            let name = names.draw(text, rng);
            let token = draw_token(rng);
            let message = twin_message(&token, rng);
            let offset = f.name_at - f.start;
            let mut block = String::with_capacity(copy.len() + 128);
            block.push_str(&copy[..offset]);
            block.push_str(&name);
            block.push_str(&copy[offset + f.name.len()..]);
            if !block.ends_with('\n') {
                block.push('\n');
            }
            let indent = " ".repeat(f.indent);
            block.push_str(&format!("{indent}{name} = {helper}({name}, {message:?})\n"));
            // A random place among its siblings: before one, or after one.
            let sibling = siblings[rng.usize(..siblings.len())];
            let at = if rng.bool() {
                sibling.start
            } else {
                sibling.end
            };
            if at == sibling.end && !text[..at].ends_with('\n') {
                block.insert(0, '\n');
            }
            edits.push(Edit::insert(at, block));
            first_twin = Some(first_twin.map_or(f.top_start, |t| t.min(f.top_start)));
            let mut twin = (*f).clone();
            twin.name.clone_from(&name);
            twinned.twins.push(Twin {
                name: inventory_of(module, &twin),
                of: real.clone(),
                token,
            });
        }
    }
    if let Some(at) = first_twin {
        // Before every statement that holds a twin, so each wrap finds it.
        edits.insert(0, Edit::insert(at, helper_text(&helper)));
    }
    twinned.text = apply(text, edits)?;
    Some(twinned)
}

/// The helper that makes a function a twin: it runs the function, then
/// fails with the note.
fn helper_text(name: &str) -> String {
    format!(
        "def {name}(case, note):
    import functools
    import inspect

    if inspect.iscoroutinefunction(case):

        @functools.wraps(case)
        async def checked(*args, **kwargs):
            await case(*args, **kwargs)
            raise AssertionError(note)

    else:

        @functools.wraps(case)
        def checked(*args, **kwargs):
            case(*args, **kwargs)
            raise AssertionError(note)

    return checked


"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"import pytest
from calc import mean


def test_add():
    assert 1 + 1 == 2


@pytest.mark.parametrize(
    "x",
    [1, 2],
)
def test_mean(x):
    if x == 2:
        return
    assert mean([x]) == x


class TestGroup:
    def test_m(self):
        s = """
  kept as written
"""
        assert s


def test_called_twice():
    pass


def test_calls():
    test_called_twice()
"#;

    #[test]
    fn twins_copy_the_whole_test_and_every_safe_name_is_renamed() {
        for seed in 0..40 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let wanted = |name: &str| u32::from(!name.ends_with("test_calls"));
            let t = plant("tests.test_calc", TEXT, &wanted, "", &mut rng).unwrap();
            let real: Vec<&str> = t.renamed.iter().map(|(_, r)| r.as_str()).collect();
            // test_called_twice is named again in the file: kept.
            assert_eq!(
                real,
                [
                    "tests.test_calc::test_add",
                    "tests.test_calc::test_mean",
                    "tests.test_calc.TestGroup::test_m",
                    "tests.test_calc::test_calls",
                ],
                "{}",
                t.text
            );
            for old in [
                "def test_add(",
                "def test_mean(",
                "def test_m(",
                "def test_calls(",
            ] {
                assert!(!t.text.contains(old), "{old} in {}", t.text);
            }
            assert!(t.text.contains("def test_called_twice():"));
            assert_eq!(t.twins.len(), 4);
            for twin in &t.twins {
                assert!(t.text.contains(&twin.token));
                let short = twin.name.rsplit("::").next().unwrap();
                assert!(t.text.contains(&format!("def {short}(")), "{}", t.text);
            }
            let method = t
                .twins
                .iter()
                .find(|w| w.of == "tests.test_calc.TestGroup::test_m")
                .unwrap();
            assert!(method.name.starts_with("tests.test_calc.TestGroup::test"));
            // Every twin and every test is found where pytest finds them,
            // and the decorator stays on its function.
            let found = Python.defined_tests("tests/test_calc.py", &t.text);
            assert_eq!(found.len(), 5 + 4, "{}", t.text);
            assert_eq!(t.text.matches("@pytest.mark.parametrize(\n").count(), 2);
            assert_eq!(t.text.matches("\n  kept as written\n").count(), 2);
            let helper = t.text.find("def _check").unwrap();
            let first_wrap = t.text.find(" = _check").unwrap();
            assert!(helper < first_wrap, "{}", t.text);
        }
    }

    use super::super::{Language, Python};
}
