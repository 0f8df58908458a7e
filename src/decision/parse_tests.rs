//! The decision parser against replies as models really write them.

use super::*;

fn ok(text: &str) -> Decision {
    match parse_decision(text) {
        Ok(decision) => decision,
        Err(err) => panic!("refused {text:?}: {err}"),
    }
}

fn err(text: &str) -> String {
    match parse_decision(text) {
        Ok(decision) => panic!("accepted {text:?} as {decision:?}"),
        Err(err) => err.to_string(),
    }
}

fn read(path: &str) -> Decision {
    Decision::ReadFile {
        path: path.to_string(),
    }
}

#[test]
fn every_kind_parses_from_plain_json() {
    assert_eq!(
        ok(r#"{"kind":"read_file","path":"src/lib.rs"}"#),
        read("src/lib.rs")
    );
    assert_eq!(
        ok(r#"{"kind":"list_files","path":"src"}"#),
        Decision::ListFiles { path: "src".into() }
    );
    assert_eq!(
        ok(r#"{"kind":"write_file","path":"a.rs","content":"fn a() {}\n"}"#),
        Decision::WriteFile {
            path: "a.rs".into(),
            content: "fn a() {}\n".into()
        }
    );
    assert_eq!(
        ok(
            r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1..n","replacement":"1..=n"}"#
        ),
        Decision::ReplaceText {
            path: "src/lib.rs".into(),
            expected: "1..n".into(),
            replacement: "1..=n".into()
        }
    );
    assert_eq!(
        ok(r#"{"kind":"run_tool","program":"cargo","args":["test","--quiet"]}"#),
        Decision::RunTool {
            program: "cargo".into(),
            args: vec!["test".into(), "--quiet".into()]
        }
    );
    assert_eq!(ok(r#"{"kind":"verify"}"#), Decision::Verify {});
    assert_eq!(
        ok(r#"{"kind":"finish","summary":"done"}"#),
        Decision::Finish {
            summary: "done".into()
        }
    );
}

#[test]
fn defaults_fill_optional_fields() {
    assert_eq!(
        ok(r#"{"kind":"list_files"}"#),
        Decision::ListFiles { path: ".".into() }
    );
    assert_eq!(
        ok(r#"{"kind":"run_tool","program":"ls"}"#),
        Decision::RunTool {
            program: "ls".into(),
            args: vec![]
        }
    );
    assert_eq!(
        ok(r#"{"kind":"run_tool","program":"ls","args":null}"#),
        Decision::RunTool {
            program: "ls".into(),
            args: vec![]
        }
    );
}

#[test]
fn serializes_back_to_the_wire_form() {
    for text in [
        r#"{"kind":"read_file","path":"src/lib.rs"}"#,
        r#"{"kind":"verify"}"#,
        r#"{"kind":"run_tool","program":"cargo","args":["test"]}"#,
    ] {
        let decision = ok(text);
        assert_eq!(serde_json::to_string(&decision).unwrap(), text);
        assert_eq!(serde_json::from_str::<Decision>(text).unwrap(), decision);
    }
    assert_eq!(ok(r#"{"kind":"verify"}"#).kind(), "verify");
}

#[test]
fn finds_the_object_in_prose_and_code_fences() {
    let replies = [
        "Sure! Here's my decision:\n```json\n{\"kind\":\"read_file\",\"path\":\"src/lib.rs\"}\n```",
        "```\n{\"kind\":\"read_file\",\"path\":\"src/lib.rs\"}\n```\n",
        "I will read the file first. {\"kind\": \"read_file\", \"path\": \"src/lib.rs\"} Then I'll fix it.",
        "  \n\t{\"kind\":\"read_file\",\n  \"path\":\"src/lib.rs\"}\n\n",
        "Thought: the bug is in {the loop}.\nAction: {\"kind\":\"read_file\",\"path\":\"src/lib.rs\"}",
        "<think>I should look at {x}</think>\n```json\n{\n  \"kind\": \"read_file\",\n  \"path\": \"src/lib.rs\"\n}\n```",
    ];
    for reply in replies {
        assert_eq!(ok(reply), read("src/lib.rs"), "{reply:?}");
    }
}

#[test]
fn respects_braces_and_escapes_inside_strings() {
    let reply = "Writing:\n{\"kind\":\"write_file\",\"path\":\"src/lib.rs\",\"content\":\"fn f() { let s = \\\"}\\\"; }\\n\"} ok";
    assert_eq!(
        ok(reply),
        Decision::WriteFile {
            path: "src/lib.rs".into(),
            content: "fn f() { let s = \"}\"; }\n".into()
        }
    );
    // A decision quoted inside another one's text is not a second decision.
    let reply = r#"{"kind":"finish","summary":"replaced {\"kind\":\"verify\"} usage"}"#;
    assert!(matches!(ok(reply), Decision::Finish { .. }));
}

#[test]
fn accepts_a_json_string_holding_the_reply() {
    assert_eq!(
        ok(r#""{\"kind\":\"read_file\",\"path\":\"src/lib.rs\"}""#),
        read("src/lib.rs")
    );
    assert_eq!(
        ok(r#""```json\n{\"kind\":\"verify\"}\n```""#),
        Decision::Verify {}
    );
    assert_eq!(
        err(r#""just words""#),
        "no JSON object found in the reply; send one object such as {\"kind\":\"read_file\",\"path\":\"src/lib.rs\"}"
    );
}

#[test]
fn tolerates_trailing_commas() {
    assert_eq!(
        ok(r#"{"kind":"read_file","path":"src/lib.rs",}"#),
        read("src/lib.rs")
    );
    assert_eq!(
        ok("```json\n{\"kind\":\"run_tool\",\"program\":\"cargo\",\"args\":[\"test\",],\n}\n```"),
        Decision::RunTool {
            program: "cargo".into(),
            args: vec!["test".into()]
        }
    );
    // A comma inside a string is content, not syntax.
    assert_eq!(
        ok(r#"{"kind":"finish","summary":"a,}"}"#),
        Decision::Finish {
            summary: "a,}".into()
        }
    );
}

#[test]
fn tolerates_raw_line_breaks_inside_strings() {
    let reply = "```json\n{\"kind\":\"write_file\",\"path\":\"a.rs\",\"content\":\"fn a() {\n\tb();\n}\n\"}\n```";
    assert_eq!(
        ok(reply),
        Decision::WriteFile {
            path: "a.rs".into(),
            content: "fn a() {\n\tb();\n}\n".into()
        }
    );
}

#[test]
fn refuses_two_decisions_in_one_reply() {
    assert_eq!(
        err("{\"kind\":\"read_file\",\"path\":\"a\"}\n{\"kind\":\"verify\"}"),
        "the reply holds 2 decisions; send exactly one per reply"
    );
    assert_eq!(
        err(
            "First ```json\n{\"kind\":\"verify\"}\n``` then ```json\n{\"kind\":\"finish\",\"summary\":\"x\"}\n```"
        ),
        "the reply holds 2 decisions; send exactly one per reply"
    );
    // Even when the second one is malformed.
    assert_eq!(
        err("{\"kind\":\"verify\"} {\"kind\":\"finish\" \"summary\":\"x\"}"),
        "the reply holds 2 decisions; send exactly one per reply"
    );
    assert_eq!(
        err(r#"[{"kind":"verify"},{"kind":"finish","summary":"x"}]"#),
        "the reply holds 2 decisions; send exactly one per reply"
    );
}

#[test]
fn refuses_empty_and_objectless_replies() {
    assert_eq!(
        err(""),
        "empty reply; send one JSON object such as {\"kind\":\"verify\"}"
    );
    assert_eq!(
        err("  \n\t "),
        "empty reply; send one JSON object such as {\"kind\":\"verify\"}"
    );
    assert!(err("I think we should read the file.").starts_with("no JSON object found"));
    assert_eq!(err("42"), "expected one JSON object, found a number");
    assert_eq!(
        err(r#"[{"kind":"verify"}]"#),
        "expected one JSON object, found an array"
    );
    assert_eq!(err("null"), "expected one JSON object, found null");
}

#[test]
fn reports_bad_json_at_its_line_and_column_in_the_reply() {
    assert_eq!(
        err("Here:\n{\"kind\": \"read_file\", \"path\": }"),
        "invalid JSON at line 2, column 31: expected value"
    );
    assert_eq!(
        err("{'kind': 'verify'}"),
        "invalid JSON at line 1, column 2: key must be a string"
    );
    assert_eq!(
        err("```json\n{\"kind\":\"read_file\",\n \"path\":\"src/lib.rs\"\n```"),
        "invalid JSON at line 2, column 1: this object is never closed"
    );
    assert_eq!(
        err("Here:\n{\"kind\":\"finish\" \"summary\":\"x\"}"),
        "invalid JSON at line 2, column 18: expected `,` or `}`"
    );
}

#[test]
fn names_the_kind_problem() {
    assert_eq!(
        err(r#"{"kind":"edit_file","path":"a"}"#),
        "unknown kind \"edit_file\"; known kinds: read_file, list_files, write_file, replace_text, run_tool, verify, finish"
    );
    assert_eq!(
        err(r#"{"action":"read_file","path":"a"}"#),
        "missing field `kind`; known kinds: read_file, list_files, write_file, replace_text, run_tool, verify, finish"
    );
    assert_eq!(
        err(r#"{"kind":3}"#),
        "decision: field `kind` must be a string, found a number"
    );
}

#[test]
fn names_the_field_problem() {
    assert_eq!(
        err(r#"{"kind":"write_file","path":"a.rs"}"#),
        "write_file: missing field `content`"
    );
    assert_eq!(
        err(r#"{"kind":"read_file","path":null}"#),
        "read_file: field `path` must be a string, found null"
    );
    assert_eq!(
        err(r#"{"kind":"read_file","path":["a","b"]}"#),
        "read_file: field `path` must be a string, found an array"
    );
    assert_eq!(
        err(r#"{"kind":"run_tool","program":"cargo","args":"test --quiet"}"#),
        "run_tool: field `args` must be an array of strings, found a string"
    );
    assert_eq!(
        err(r#"{"kind":"run_tool","program":"head","args":["-n",5]}"#),
        "run_tool: field `args` must be an array of strings, found an array holding a number"
    );
    assert_eq!(
        err(r#"{"kind":"read_file","path":"a","reason":"look"}"#),
        "read_file: unknown field `reason` (fields of read_file: path)"
    );
    assert_eq!(
        err(r#"{"kind":"verify","command":"cargo test"}"#),
        "verify: unknown field `command` (fields of verify: none)"
    );
}

#[test]
fn an_object_without_kind_next_to_prose_is_reported_as_such() {
    assert!(err("Plan: {\"step\": 1}").starts_with("missing field `kind`"));
}
