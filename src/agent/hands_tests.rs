//! The decision seam alone: decisions checked and executed against a real
//! workspace, a recorder that keeps the events and a runner that runs
//! nothing.

use std::time::{Duration, Instant};

use super::super::agent_loop::{CommandRole, CommandRunner, RecordError, Recorder, Used};
use super::super::workspace::Workspace;
use super::{Acted, Hands};
use crate::cancel::CancelToken;
use crate::decision::{Decision, parse_decision};
use crate::exec::{AllowList, Captured, ExecError, ExecOutcome, Refusal, Resources};
use crate::protocol::{DecisionKind, Event, FailureKind, Outcome};

#[derive(Default)]
struct Kept(Vec<Event>);

impl Recorder for Kept {
    fn record(&mut self, event: Event) -> Result<(), RecordError> {
        self.0.push(event);
        Ok(())
    }

    fn used(&self) -> Used {
        Used::default()
    }
}

impl Kept {
    fn kinds(&self) -> Vec<&'static str> {
        self.0.iter().map(Event::type_name).collect()
    }
}

/// Allows `cargo test **`; every command it runs exits `exit`.
struct Runner {
    allow: AllowList,
    exit: i32,
    ran: Vec<Vec<String>>,
}

impl CommandRunner for Runner {
    fn allows(&self, argv: &[String]) -> Result<(), Refusal> {
        self.allow.check(argv)
    }

    fn run(
        &mut self,
        argv: &[String],
        _role: CommandRole,
        _cancel: &CancelToken,
    ) -> Result<ExecOutcome, ExecError> {
        self.allow.check(argv)?;
        self.ran.push(argv.to_vec());
        Ok(ExecOutcome {
            program: argv[0].clone(),
            resolved: format!("/usr/bin/{}", argv[0]).into(),
            argc: argv.len(),
            exit_code: Some(self.exit),
            signal: None,
            duration: Duration::from_millis(3),
            stdout: Captured::default(),
            stderr: Captured::default(),
            timed_out: false,
            cancelled: false,
            leaked: false,
            drain_timed_out: false,
            oom: false,
            sandbox_layers: Vec::new(),
            resources: Resources::default(),
        })
    }
}

fn fixture() -> (tempfile::TempDir, Workspace, Runner) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn f() -> u32 { 1 }\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "read me\n").unwrap();
    let workspace = Workspace::open(dir.path(), &["src/**/*.rs".to_string()]).unwrap();
    let runner = Runner {
        allow: AllowList::parse(&["cargo test **".to_string()]).unwrap(),
        exit: 0,
        ran: Vec::new(),
    };
    (dir, workspace, runner)
}

fn decision(json: &str) -> Result<Decision, crate::decision::DecisionError> {
    parse_decision(json)
}

#[test]
fn a_reply_that_is_no_decision_is_an_invalid_decision_and_an_observation() {
    let (_dir, workspace, mut runner) = fixture();
    let cancel = CancelToken::new();
    let verify = ["cargo".to_string(), "test".to_string()];
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut hands = Hands::new(&workspace, &mut runner, &verify, 1024, deadline, &cancel);
    let mut kept = Kept::default();
    let acted = hands.decide(&mut kept, 1, decision("not json")).unwrap();
    let Acted::Observe {
        observation,
        invalid,
    } = acted
    else {
        panic!("{acted:?}");
    };
    assert!(invalid.is_some());
    assert!(
        observation.starts_with("invalid decision: "),
        "{observation}"
    );
    assert_eq!(kept.kinds(), ["decision"]);
    let logged = serde_json::to_value(&kept.0[0]).unwrap();
    assert_eq!(logged["kind"], DecisionKind::Invalid.as_str(), "{logged}");
}

#[test]
fn refusals_are_recorded_invalid_and_touch_nothing() {
    let (dir, workspace, mut runner) = fixture();
    let cancel = CancelToken::new();
    let verify = ["cargo".to_string(), "test".to_string()];
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut hands = Hands::new(&workspace, &mut runner, &verify, 1024, deadline, &cancel);
    let mut kept = Kept::default();
    for (json, why) in [
        (
            r#"{"kind":"write_file","path":"README.md","content":"x"}"#,
            "editable",
        ),
        (r#"{"kind":"read_file","path":"../outside"}"#, ""),
        (
            r#"{"kind":"run_tool","program":"cargo","args":["install","x"]}"#,
            "does not match any allow rule",
        ),
    ] {
        let acted = hands.decide(&mut kept, 1, decision(json)).unwrap();
        let Acted::Observe {
            invalid: Some(reason),
            ..
        } = acted
        else {
            panic!("{json}: {acted:?}");
        };
        assert!(reason.contains(why), "{json}: {reason}");
    }
    assert_eq!(kept.kinds(), ["decision", "decision", "decision"]);
    // The refused command's arguments are not in the log.
    assert!(!format!("{:?}", kept.0).contains("install"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        "read me\n"
    );
    let _ = hands;
    assert!(runner.ran.is_empty());
}

#[test]
fn an_edit_opens_debt_that_a_finish_pays_with_the_runtime_s_verify() {
    let (_dir, workspace, mut runner) = fixture();
    let cancel = CancelToken::new();
    let verify = ["cargo".to_string(), "test".to_string()];
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut hands = Hands::new(&workspace, &mut runner, &verify, 1024, deadline, &cancel);
    let mut kept = Kept::default();
    let finish = r#"{"kind":"finish","summary":"done"}"#;
    // No edit: nothing to finish.
    let Acted::End(result) = hands.decide(&mut kept, 1, decision(finish)).unwrap() else {
        panic!("a finish without an edit ends the attempt");
    };
    assert_eq!(result.failure_kind, Some(FailureKind::NoEdit));
    let edit = r#"{"kind":"replace_text","path":"src/lib.rs","expected":"1","replacement":"2"}"#;
    assert!(matches!(
        hands.decide(&mut kept, 2, decision(edit)).unwrap(),
        Acted::Observe { invalid: None, .. }
    ));
    let Acted::End(result) = hands.decide(&mut kept, 3, decision(finish)).unwrap() else {
        panic!("a passing verify accepts the finish");
    };
    assert_eq!(result.outcome, Outcome::Succeeded);
    assert_eq!(
        kept.kinds(),
        [
            "decision", "decision", "edit", "decision", "command", "verify"
        ]
    );
    let _ = hands;
    assert_eq!(runner.ran, [verify.to_vec()]);
}

#[test]
fn a_failing_verify_refuses_the_finish_and_the_attempt_goes_on() {
    let (_dir, workspace, mut runner) = fixture();
    runner.exit = 101;
    let cancel = CancelToken::new();
    let verify = ["cargo".to_string(), "test".to_string()];
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut hands = Hands::new(&workspace, &mut runner, &verify, 1024, deadline, &cancel);
    let mut kept = Kept::default();
    let edit = r#"{"kind":"write_file","path":"src/new.rs","content":"pub fn g() {}\n"}"#;
    hands.decide(&mut kept, 1, decision(edit)).unwrap();
    let finish = r#"{"kind":"finish","summary":"done"}"#;
    let Acted::Observe { observation, .. } = hands.decide(&mut kept, 2, decision(finish)).unwrap()
    else {
        panic!("a failing verify refuses the finish");
    };
    assert!(observation.starts_with("finish refused"), "{observation}");
    assert!(hands.last_verify_failed());
}
