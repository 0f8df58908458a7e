//! The documentation names what the code has: every failure kind in each
//! place the docs list them, and every key `exec` prints. (The manifest's
//! keys are compared with docs/manifest.md beside their shape, in
//! `src/manifest/shape_tests.rs`.)

use agent_runtime::protocol::FailureKind;

/// Every failure kind. The match has no wildcard, so a new kind does not
/// compile until it is added here, and then to the docs.
fn every_kind() -> Vec<&'static str> {
    use FailureKind::*;
    let all = [
        StepLimit,
        WallTimeout,
        TokenBudget,
        InvalidDecisions,
        ProviderError,
        NoEdit,
        VerifyFailed,
        Cancelled,
        Interrupted,
        InvalidBaseline,
        AcceptanceFailed,
        SandboxUnavailable,
        PatchRejected,
        TestsFailed,
        TestsMissing,
        InfraError,
        BudgetExceeded,
        SetupFailed,
        HarnessError,
        Tampered,
        AgentError,
        NoFinish,
    ];
    for kind in all {
        match kind {
            StepLimit | WallTimeout | TokenBudget | InvalidDecisions | ProviderError | NoEdit
            | VerifyFailed | Cancelled | Interrupted | InvalidBaseline | AcceptanceFailed
            | SandboxUnavailable | PatchRejected | TestsFailed | TestsMissing | InfraError
            | BudgetExceeded | SetupFailed | HarnessError | Tampered | AgentError | NoFinish => {}
        }
    }
    all.iter()
        .map(|kind| {
            // The name the log and the reports write.
            let json = serde_json::to_value(kind).unwrap();
            let name = json.as_str().unwrap();
            assert_eq!(name, kind.as_str());
            kind.as_str()
        })
        .collect()
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The text from the line starting with `start` to the next blank line.
fn paragraph<'a>(text: &'a str, start: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in the docs"));
    let rest = &text[from..];
    &rest[..rest.find("\n\n").unwrap_or(rest.len())]
}

#[track_caller]
fn lists_every_kind(place: &str, text: &str) {
    let missing: Vec<&str> = every_kind()
        .into_iter()
        .filter(|kind| !text.contains(&format!("`{kind}`")))
        .collect();
    assert!(missing.is_empty(), "{place} does not name {missing:?}");
}

#[test]
fn every_failure_kind_is_documented_where_the_kinds_are_listed() {
    let reference = doc("reference.md");
    lists_every_kind(
        "reference.md's list of failure kinds",
        paragraph(&reference, "Failure kinds: "),
    );
    lists_every_kind(
        "reference.md's table of failure kinds",
        paragraph(&reference, "| order | kind | when |"),
    );
    lists_every_kind(
        "reference.md's failure kinds of an attempt",
        paragraph(&reference, "Failure kinds of an attempt: "),
    );
    let reports = doc("reports.md");
    let row = reports
        .lines()
        .find(|l| l.starts_with("| `failure_kind` |"))
        .expect("reports.md has a failure_kind row");
    lists_every_kind("reports.md's failure_kind row", row);
}

/// `exec` prints `key=value` lines, each documented in reference.md.
#[test]
fn every_key_exec_prints_is_documented() {
    let sb = crate::harness::Sandbox::new();
    let run = sb.run(&["exec", "--sandbox", "off", "--", "true"]).ok();
    let reference = doc("reference.md");
    let row = reference
        .lines()
        .find(|l| l.starts_with("| `exec "))
        .expect("reference.md has an exec row");
    let keys: Vec<&str> = run
        .stdout
        .lines()
        .take_while(|l| !l.starts_with("--- "))
        .filter_map(|l| l.split_once('=').map(|(key, _)| key))
        .collect();
    assert!(keys.contains(&"exit"), "{}", run.stdout);
    for key in keys {
        assert!(
            row.contains(&format!("`{key}`")),
            "exec prints {key}= but reference.md does not document it"
        );
    }
}
