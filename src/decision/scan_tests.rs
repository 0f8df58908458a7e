//! The linear object scan against the straightforward (quadratic) one it
//! replaced, and against replies built to make a scan slow.

use std::ops::Range;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::parse::{lenient_json, line_col, offset_of, strip_position};
use super::scan::{Scan, scan_objects};
use super::*;

/// The scan as it was first written: rescan from every `{` to its balancing
/// brace and parse a copy of the span. Obviously right, quadratic.
fn reference_scan(text: &str) -> Scan {
    let mut scan = Scan::default();
    let mut from = 0;
    while let Some(start) = text
        .get(from..)
        .and_then(|rest| rest.find('{'))
        .map(|i| from + i)
    {
        let Some(end) = reference_balanced_end(text, start) else {
            if scan.first_error.is_none() {
                let (line, column) = line_col(text, start);
                scan.first_error = Some(DecisionError::Json {
                    line,
                    column,
                    message: "this object is never closed".to_string(),
                });
            }
            from = start + 1;
            continue;
        };
        let candidate = &text[start..=end];
        match lenient_json(candidate) {
            Ok(value) => {
                scan.objects.push(value);
                scan.spans.push(start..end + 1);
                from = end + 1;
            }
            Err(err) => {
                if candidate.contains("\"kind\"") {
                    scan.broken_with_kind.push(start..end + 1);
                }
                if scan.first_error.is_none() {
                    let offset = start + offset_of(candidate, err.line(), err.column());
                    let (line, column) = line_col(text, offset);
                    scan.first_error = Some(DecisionError::Json {
                        line,
                        column,
                        message: strip_position(&err.to_string()),
                    });
                }
                from = start + 1;
            }
        }
    }
    scan
}

fn reference_balanced_end(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, byte) in text.bytes().enumerate().skip(start) {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn reference_broken_alone(scan: &Scan) -> usize {
    scan.broken_with_kind
        .iter()
        .filter(|b: &&Range<usize>| {
            !scan
                .spans
                .iter()
                .any(|s| b.start <= s.start && s.end <= b.end)
        })
        .count()
}

fn assert_same_as_reference(text: &str) {
    let fast = scan_objects(text).unwrap();
    let slow = reference_scan(text);
    assert_eq!(fast, slow, "scans differ on {text:?}");
    assert_eq!(
        fast.broken_alone(),
        reference_broken_alone(&slow),
        "{text:?}"
    );
}

#[test]
fn agrees_with_the_reference_on_random_replies() {
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        "\"",
        "\\",
        ",",
        ":",
        " ",
        "\n",
        "\t",
        "a",
        "1",
        "é",
        "\"kind\"",
        "\"verify\"",
        ":\"",
        "\\\"",
        "\\n",
        "{\"kind\":\"verify\"}",
        "{\"a\":",
        "\"x\"",
        ",}",
        ", ]",
        "null",
        "\"kind\":",
        "\r",
    ];
    let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
    for _ in 0..30_000 {
        let len = rng.usize(..30);
        let text: String = (0..len)
            .map(|_| PIECES[rng.usize(..PIECES.len())])
            .collect();
        assert_same_as_reference(&text);
    }
}

#[test]
fn agrees_with_the_reference_on_shaped_replies() {
    let mut replies = vec![
        // A stray quote in prose must not hide the object after it.
        "Look at {the \"loop} and then {\"kind\":\"verify\"}".to_string(),
        // A decision inside a failed object's string, and after it.
        "{\"note\": \"see {\\\"kind\\\":\\\"verify\\\"}\" oops} {\"kind\":\"verify\"}".to_string(),
        // Failure inside nested objects: the inner ones fail alike.
        "{\"a\":{\"b\":{\"kind\":\"verify\" \"x\":1}}}".to_string(),
        // Failure after a nested object that parsed: it is found.
        "{\"a\":{\"kind\":\"verify\"} x}".to_string(),
        // Raw line break in a nested string and a later error.
        "{\"a\": {\"kind\":\"finish\",\"summary\":\"line\nbreak\"}, bad}".to_string(),
        // Trailing commas with blanks before the closer.
        "{\"a\":[1,  \n],  }".to_string(),
        "{,   }".to_string(),
        // Escaped quotes letting string states of two starts meet.
        "x \"{\\\"kind\\\":1} {\\\"kind\\\":\\\"verify\\\"}\" {\"kind\":\"verify\"}".to_string(),
    ];
    // Around serde_json's recursion limit, with objects and arrays.
    for depth in [125, 126, 127, 128, 129, 130] {
        replies.push(format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)));
        replies.push(format!(
            "x {}1{}",
            "{\"a\":[".repeat(depth / 2),
            "]}".repeat(depth / 2)
        ));
        replies.push(format!(
            "{}{}{{\"kind\":\"verify\"}}{}",
            "{\"a\":".repeat(depth),
            "[".repeat(3),
            "}".repeat(depth)
        ));
    }
    for reply in replies {
        assert_same_as_reference(&reply);
    }
}

/// Replies of 80 KB or more shaped to make a scan slow.
fn adversarial() -> Vec<(&'static str, String)> {
    let n = 40_000;
    vec![
        ("nested braces", "{".repeat(n) + &"}".repeat(n)),
        ("only opening braces", "{".repeat(2 * n)),
        ("only closing braces", "}".repeat(2 * n)),
        (
            "braces inside strings",
            "{\"s\":\"{".repeat(n / 4) + &"\"}".repeat(n / 4),
        ),
        ("an unclosed kind, repeated", "{\"kind\":".repeat(n / 4)),
        (
            "a closed kind, repeated",
            "{\"kind\":".repeat(n / 4) + "1" + &"}".repeat(n / 4),
        ),
        ("deeply nested arrays", "[".repeat(n) + &"]".repeat(n)),
        (
            "deeply nested arrays in a decision",
            "{\"kind\":\"verify\",\"x\":".to_string() + &"[".repeat(n) + &"]".repeat(n) + "}",
        ),
        (
            "alternating braces and brackets",
            "{[".repeat(n / 2) + &"]}".repeat(n / 2),
        ),
        (
            "objects in arrays in objects",
            "{\"a\":[".repeat(n / 4) + "1" + &"]}".repeat(n / 4),
        ),
        (
            "a deep error far inside",
            "{\"a\":".repeat(100) + "[" + &"1,".repeat(n) + "x]" + &"}".repeat(100),
        ),
        (
            "commas before long blanks",
            "{".to_string() + &",".repeat(n) + &" ".repeat(n) + "}",
        ),
        ("backslashes", "\"{\\".repeat(n) + "\""),
        (
            "escaped quotes and braces",
            "{\"a\":\"".to_string() + &"\\\"{".repeat(n / 2) + "\"}" + &"}".repeat(n / 2),
        ),
        (
            "many small broken decisions",
            "{\"kind\":\"verify\" x} ".repeat(n / 10),
        ),
    ]
}

/// Far above what a linear scan needs even unoptimized (a few ms), far
/// below what the quadratic one took (12 s and more).
const GENEROUS: Duration = Duration::from_secs(2);

#[test]
fn adversarial_replies_are_refused_quickly() {
    for (shape, reply) in adversarial() {
        assert!(reply.len() >= 80_000, "{shape}: only {} bytes", reply.len());
        let started = Instant::now();
        let result = parse_decision(&reply);
        let took = started.elapsed();
        assert!(result.is_err(), "{shape}: accepted as {result:?}");
        assert!(took < GENEROUS, "{shape}: took {took:?}");
    }
}

#[test]
fn nested_braces_are_refused_as_invalid_json() {
    let reply = "{".repeat(40_000) + &"}".repeat(40_000);
    assert_eq!(
        parse_decision(&reply).unwrap_err().to_string(),
        "invalid JSON at line 1, column 2: key must be a string"
    );
    let reply = "{".repeat(80_000);
    assert_eq!(
        parse_decision(&reply).unwrap_err().to_string(),
        "invalid JSON at line 1, column 1: this object is never closed"
    );
}

#[test]
fn a_decision_after_or_inside_80_kb_of_junk_is_still_found_quickly() {
    let n = 40_000;
    for reply in [
        "{".repeat(n) + "{\"kind\":\"verify\"}",
        "}".repeat(n) + "{\"kind\":\"verify\"}",
        "Thought: {x} ".repeat(n / 12) + "{\"kind\":\"verify\"}",
        "{\"a\":".repeat(n / 5) + "{\"kind\":\"verify\"}",
    ] {
        let started = Instant::now();
        assert_eq!(parse_decision(&reply), Ok(Decision::Verify {}));
        assert!(started.elapsed() < GENEROUS, "took {:?}", started.elapsed());
    }
    // A good decision and many broken ones: every broken one counts.
    let reply = "{\"kind\":\"verify\"} ".to_string() + &"{\"kind\":\"verify\" x} ".repeat(4_000);
    assert_eq!(
        parse_decision(&reply),
        Err(DecisionError::Multiple { count: 4_001 })
    );
}

#[test]
fn adversarial_shapes_scan_like_the_reference_when_small() {
    // The same shapes at a size the quadratic reference can afford.
    for (shape, reply) in adversarial() {
        let mut cut = reply.len().min(3_000);
        while !reply.is_char_boundary(cut) {
            cut -= 1;
        }
        let small = &reply[..cut];
        let fast = scan_objects(small).unwrap();
        assert_eq!(fast, reference_scan(small), "{shape}");
    }
}

#[test]
fn objects_are_the_values_serde_json_reads() {
    let scan = scan_objects("a {\"x\":[1,],} b {\"y\":\"t\tab\"}").unwrap();
    assert_eq!(
        scan.objects,
        [
            serde_json::json!({"x": [1]}),
            Value::from(serde_json::Map::from_iter([(
                "y".to_string(),
                Value::from("t\tab")
            )]))
        ]
    );
}
