//! JUnit XML, as `pytest --junitxml`, gotestsum and most CI tools write it:
//! one `<testcase>` per test, with a `<failure>`, `<error>` or `<skipped>`
//! child when it did not pass.

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use super::inventory::{TestOutcome, TestResults};
use super::results_error::ResultsError;

/// Largest document read (a report is a few KB per hundred tests).
pub const MAX_JUNIT_BYTES: usize = 16 << 20;

/// Reads every test case of a JUnit document, named `classname::name`
/// (or `name` without a class). A document is complete when its root
/// element closes. A test reported twice keeps its worst outcome (never a
/// pass it was also reported failed), and that, like anything after the
/// root element closed, is an anomaly of the results.
pub fn parse_junit(xml: &str) -> Result<TestResults, ResultsError> {
    if xml.len() > MAX_JUNIT_BYTES {
        return Err(ResultsError::TooLarge(MAX_JUNIT_BYTES));
    }
    let mut reader = Reader::from_str(xml);
    let mut results = TestResults::default();
    // The open test case: its name, outcome and failure text so far.
    let mut open: Option<Case> = None;
    let mut saw_root = false;
    // Open `<testsuites>`/`<testsuite>` elements: the document is whole
    // when the outermost one has closed.
    let mut suites = 0usize;
    let mut closed = false;
    // Something followed the root's end: the document is not whole again
    // until a root closes once more.
    let mut trailing = false;
    loop {
        let event = reader.read_event().map_err(|e| ResultsError::Xml {
            at: reader.buffer_position(),
            why: e.to_string(),
        })?;
        if closed && !after_end(&event) {
            results
                .anomalies
                .push("the JUnit file goes on after its root element closed".into());
            closed = false;
            trailing = true;
        }
        match event {
            Event::Start(tag) => match tag.local_name().as_ref() {
                b"testsuites" | b"testsuite" => {
                    saw_root = true;
                    suites += 1;
                }
                b"testcase" => open = Some(Case::new(case_name(&tag)?)),
                other => {
                    if let Some(case) = open.as_mut() {
                        case.start(other, &tag, true);
                    }
                }
            },
            Event::Empty(tag) => match tag.local_name().as_ref() {
                b"testsuites" | b"testsuite" => {
                    saw_root = true;
                    closed |= suites == 0;
                }
                b"testcase" => insert(&mut results, Case::new(case_name(&tag)?)),
                other => {
                    if let Some(case) = open.as_mut() {
                        case.start(other, &tag, false);
                    }
                }
            },
            Event::Text(text) => {
                if let Some(case) = open.as_mut() {
                    case.text(
                        &text
                            .xml_content(XmlVersion::Implicit1_0)
                            .unwrap_or_default(),
                    );
                }
            }
            Event::CData(text) => {
                if let Some(case) = open.as_mut() {
                    case.text(&text.decode().unwrap_or_default());
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(case) = open.as_mut() {
                    case.text(&resolve(&reference));
                }
            }
            Event::End(tag) if tag.local_name().as_ref() == b"testcase" => {
                if let Some(case) = open.take() {
                    insert(&mut results, case);
                }
            }
            Event::End(tag)
                if matches!(tag.local_name().as_ref(), b"testsuites" | b"testsuite") =>
            {
                suites = suites.saturating_sub(1);
                closed |= suites == 0;
            }
            Event::End(_) => {
                if let Some(case) = open.as_mut() {
                    case.capture = None;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_root {
        return Err(ResultsError::NoSuite);
    }
    // A document cut off (after a `</testcase>`, say) is not whole.
    results.complete = open.is_none() && (closed || (trailing && suites == 0));
    Ok(results)
}

/// What may follow the root element: blank text, comments, the end.
fn after_end(event: &Event<'_>) -> bool {
    match event {
        Event::Text(text) => text.iter().all(u8::is_ascii_whitespace),
        Event::Comment(_) | Event::Eof | Event::PI(_) => true,
        _ => false,
    }
}

/// Text inside a test case that is kept: where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capture {
    /// A `<failure>` or `<error>` body.
    Failure,
    /// `<system-out>` or `<system-err>`.
    Output,
}

/// A `<testcase>` being read.
struct Case {
    name: String,
    outcome: TestOutcome,
    /// The `message` attributes of its failures and errors.
    message: String,
    /// Their bodies (pytest's longrepr).
    body: String,
    /// What it printed, as its `<system-out>` and `<system-err>` say.
    output: String,
    capture: Option<Capture>,
}

impl Case {
    fn new(name: String) -> Case {
        Case {
            name,
            outcome: TestOutcome::Passed,
            message: String::new(),
            body: String::new(),
            output: String::new(),
            capture: None,
        }
    }

    /// A child element: `<failure>`, `<error>` or `<skipped>` mark the
    /// outcome; a failure's text and the case's output are kept.
    fn start(&mut self, tag: &[u8], element: &BytesStart<'_>, has_content: bool) {
        match tag {
            b"failure" | b"error" => {
                self.outcome = TestOutcome::Failed;
                if let Ok(Some(message)) = element.try_get_attribute("message")
                    && let Ok(value) = message.normalized_value(XmlVersion::Implicit1_0)
                    && !value.trim().is_empty()
                {
                    push_line(&mut self.message, value.trim());
                }
                if has_content {
                    if !self.body.is_empty() {
                        self.body.push('\n');
                    }
                    self.capture = Some(Capture::Failure);
                }
            }
            b"skipped" if self.outcome == TestOutcome::Passed => {
                self.outcome = TestOutcome::Skipped;
            }
            b"system-out" | b"system-err" if has_content => {
                self.capture = Some(Capture::Output);
            }
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        match self.capture {
            Some(Capture::Failure) => self.body.push_str(text),
            Some(Capture::Output) => self.output.push_str(text),
            None => {}
        }
    }

    /// What a failed case said of its own: its failures' messages where
    /// their bodies do not repeat them (pytest's longrepr does), their
    /// bodies, then its output.
    fn failure_text(&self) -> Option<String> {
        if self.outcome != TestOutcome::Failed {
            return None;
        }
        let body = self.body.trim();
        let repeated = self
            .message
            .lines()
            .next()
            .is_some_and(|first| body.contains(first.trim()));
        let mut text = if repeated {
            String::new()
        } else {
            self.message.clone()
        };
        push_line(&mut text, body);
        let output = self.output.trim();
        if !output.is_empty() {
            push_line(&mut text, output);
        }
        (!text.is_empty()).then_some(text)
    }
}

fn push_line(text: &mut String, line: &str) {
    if line.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

/// An entity or character reference in text, as the character it stands
/// for (an unknown one as written).
fn resolve(reference: &quick_xml::events::BytesRef<'_>) -> String {
    if let Ok(Some(c)) = reference.resolve_char_ref() {
        return c.to_string();
    }
    let name = reference.decode().unwrap_or_default();
    match quick_xml::escape::resolve_predefined_entity(&name) {
        Some(text) => text.to_string(),
        None => format!("&{name};"),
    }
}

fn insert(results: &mut TestResults, case: Case) {
    let rank = |o: TestOutcome| match o {
        TestOutcome::Passed => 0,
        TestOutcome::Skipped => 1,
        TestOutcome::Failed => 2,
    };
    let text = case.failure_text();
    let (name, outcome) = (case.name, case.outcome);
    if let Some(text) = text {
        results
            .outputs
            .entry(name.clone())
            .or_insert_with(|| super::excerpt::cap(&text, super::excerpt::EXCERPT_BYTES));
    }
    match results.tests.get(&name).copied() {
        None => {
            results.tests.insert(name, outcome);
        }
        Some(before) => {
            results
                .anomalies
                .push(format!("test {name:?} is reported more than once"));
            if rank(outcome) > rank(before) {
                results.tests.insert(name, outcome);
            }
        }
    }
}

fn case_name(tag: &BytesStart<'_>) -> Result<String, ResultsError> {
    let attr = |key: &str| -> Result<Option<String>, ResultsError> {
        match tag.try_get_attribute(key) {
            Ok(Some(a)) => a
                .normalized_value(XmlVersion::Implicit1_0)
                .map(|v| Some(v.into_owned()))
                .map_err(|e| ResultsError::Attribute {
                    key: key.to_string(),
                    why: e.to_string(),
                }),
            Ok(None) => Ok(None),
            Err(e) => Err(ResultsError::Attributes(e.to_string())),
        }
    };
    let name = attr("name")?.ok_or(ResultsError::NoName)?;
    Ok(match attr("classname")? {
        Some(class) if !class.is_empty() => format!("{class}::{name}"),
        _ => name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_passed_failed_and_skipped_cases() {
        let xml = r#"<?xml version="1.0"?>
<testsuites><testsuite name="pytest" tests="4">
  <testcase classname="tests.test_calc" name="test_add" time="0.01"/>
  <testcase classname="tests.test_calc" name="test_sub"><failure message="boom">trace</failure></testcase>
  <testcase classname="tests.test_calc" name="test_div"><error message="x"/></testcase>
  <testcase classname="tests.test_calc" name="test_big"><skipped message="slow"/></testcase>
</testsuite></testsuites>"#;
        let r = parse_junit(xml).unwrap();
        assert!(r.complete);
        assert_eq!(r.tests["tests.test_calc::test_add"], TestOutcome::Passed);
        assert_eq!(r.tests["tests.test_calc::test_sub"], TestOutcome::Failed);
        assert_eq!(r.tests["tests.test_calc::test_div"], TestOutcome::Failed);
        assert_eq!(r.tests["tests.test_calc::test_big"], TestOutcome::Skipped);
        assert_eq!(r.outputs["tests.test_calc::test_sub"], "boom\ntrace");
        assert_eq!(r.outputs["tests.test_calc::test_div"], "x");
        assert!(!r.outputs.contains_key("tests.test_calc::test_add"));
    }

    #[test]
    fn a_failure_keeps_pytest_s_longrepr_with_its_references_resolved() {
        let xml = r#"<testsuites><testsuite name="pytest"><testcase classname="tests.test_calc" name="test_mean"><failure message="assert 1 == 1.5&#10; +  where 1 = mean([1, 2])">def test_mean():
&gt;       assert mean([1, 2]) == 1.5
E       assert 1 == 1.5

tests/test_calc.py:5: AssertionError</failure><system-out><![CDATA[printed <b>]]></system-out></testcase></testsuite></testsuites>"#;
        let r = parse_junit(xml).unwrap();
        let text = &r.outputs["tests.test_calc::test_mean"];
        assert!(
            text.starts_with(
                "def test_mean():\n>       assert mean([1, 2]) == 1.5\nE       assert 1 == 1.5"
            ),
            "{text}"
        );
        assert!(text.ends_with("AssertionError\nprinted <b>"), "{text}");
        let bare = r#"<testsuite><testcase name="a"><failure message="only &lt;this&gt;"/></testcase></testsuite>"#;
        assert_eq!(parse_junit(bare).unwrap().outputs["a"], "only <this>");
        let apart = r#"<testsuite><testcase name="a"><failure message="left: 1, right: 5">out.txt is wrong</failure></testcase></testsuite>"#;
        assert_eq!(
            parse_junit(apart).unwrap().outputs["a"],
            "left: 1, right: 5\nout.txt is wrong"
        );
    }

    #[test]
    fn a_document_cut_off_after_a_test_case_is_incomplete() {
        let whole =
            r#"<testsuites><testsuite name="t"><testcase name="a"/></testsuite></testsuites>"#;
        assert!(parse_junit(whole).unwrap().complete);
        let cut = r#"<testsuites><testsuite name="t"><testcase name="a"/>"#;
        let r = parse_junit(cut).unwrap();
        assert!(!r.complete);
        let inner_only =
            r#"<testsuites><testsuite name="t"><testcase name="a"></testcase></testsuite>"#;
        assert!(!parse_junit(inner_only).unwrap().complete);
        assert!(
            parse_junit(r#"<testsuite name="empty"/>"#)
                .unwrap()
                .complete
        );
    }

    #[test]
    fn garbage_and_documents_without_a_suite_are_errors() {
        assert!(parse_junit("not xml <").is_err());
        assert!(parse_junit("<html></html>").is_err());
    }

    #[test]
    fn a_test_reported_twice_keeps_its_worst_outcome_and_is_an_anomaly() {
        let dup = r#"<testsuite><testcase name="a"><failure/></testcase><testcase name="a"/></testsuite>"#;
        let r = parse_junit(dup).unwrap();
        assert_eq!(r.tests["a"], TestOutcome::Failed);
        assert_eq!(r.anomalies.len(), 1);
        assert!(r.anomalies[0].contains("\"a\""));
        let honest = r#"<?xml version="1.0"?><testsuites><testsuite name="t"><testcase name="a"/></testsuite></testsuites>
<!-- written by pytest -->
"#;
        assert!(parse_junit(honest).unwrap().anomalies.is_empty());
        let trailing = r#"<testsuites><testsuite name="t"><testcase name="a"/></testsuite></testsuites><testsuite name="u"><testcase name="b"/></testsuite>"#;
        let r = parse_junit(trailing).unwrap();
        assert!(
            r.anomalies.iter().any(|a| a.contains("after its root")),
            "{r:?}"
        );
    }
}
