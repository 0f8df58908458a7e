//! Nothing raw reaches a terminal or a report: a `write_file` path and an
//! `error:` line of a command, both holding ESC, BEL and U+202E (a title
//! change, a screen clear, a right-to-left override), show up as visible
//! escapes in the progress lines, the summary, `status`, `watch` and every
//! report, on a pipe and on a pseudo-terminal; results.json keeps the exact
//! values, written as `\uXXXX`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{BIN, Sandbox};

/// The hostile text: set the terminal's title, clear the screen, reverse
/// what follows.
const HOSTILE: &str = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{202e}";
/// How the one escaping function shows it.
const SHOWN: &str = "\\u{1b}]0;PWNED\\u{7}\\u{1b}[2J\\u{202e}";

/// A job whose model writes a file named with [`HOSTILE`] and whose verify
/// prints an `error:` line holding it and fails: `verify_failed`.
fn hostile_job(sb: &Sandbox, id: &str) -> PathBuf {
    let dir = sb.path().join(id);
    std::fs::create_dir_all(dir.join("source")).unwrap();
    std::fs::write(dir.join("source/value.txt"), "old\n").unwrap();
    std::fs::write(
        dir.join("source/boom.sh"),
        "printf 'error: \\033]0;PWNED\\007\\033[2J\\342\\200\\256 in the code\\n' >&2\nexit 1\n",
    )
    .unwrap();
    let path = format!("evil{HOSTILE}.txt");
    let replies = [
        serde_json::json!({"kind": "write_file", "path": path, "content": "x\n"}),
        serde_json::json!({"kind": "verify"}),
        serde_json::json!({"kind": "finish", "summary": format!("done {HOSTILE}")}),
    ];
    let text: String = replies.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(dir.join("replies.jsonl"), text).unwrap();
    let manifest = dir.join(format!("{id}.toml"));
    std::fs::write(
        &manifest,
        format!(
            "id = \"{id}\"\nprompt = \"Fix it.\"\nsource = \"source\"\neditable = [\"**\"]\nallow = [\"sh **\"]\nverify = [\"sh\", \"boom.sh\"]\n\n[limits]\nattempts = 1\nmax_steps = 3\n\n[provider]\nkind = \"script\"\nscript = \"replies.jsonl\"\n"
        ),
    )
    .unwrap();
    manifest
}

/// Fails if `bytes` holds any of `forbidden`.
#[track_caller]
fn assert_clean(what: &str, bytes: &[u8], forbidden: &[&[u8]]) {
    for needle in forbidden {
        if let Some(at) = bytes.windows(needle.len()).position(|w| w == *needle) {
            let from = at.saturating_sub(60);
            let to = (at + 60).min(bytes.len());
            panic!(
                "{what} holds {:?} raw at byte {at}: {:?}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(&bytes[from..to])
            );
        }
    }
}

/// On a pipe nothing may hold ESC, BEL or U+202E at all.
const ON_A_PIPE: &[&[u8]] = &[b"\x1b", b"\x07", "\u{202e}".as_bytes()];
/// On a terminal the progress bars draw with escape sequences of their
/// own; the hostile ones (a title change, a screen clear) and BEL and
/// U+202E must not appear.
const ON_A_TTY: &[&[u8]] = &[b"\x1b]", b"\x1b[2J", b"\x07", "\u{202e}".as_bytes()];
/// `watch` clears the screen itself before each frame: the rest must hold.
const WATCH_ON_A_TTY: &[&[u8]] = &[b"\x1b]", b"\x07", "\u{202e}".as_bytes()];

fn output_bytes(output: &std::process::Output) -> Vec<u8> {
    let mut all = output.stdout.clone();
    all.extend_from_slice(&output.stderr);
    all
}

#[test]
fn hostile_paths_and_output_lines_reach_no_terminal_or_report_raw() {
    let sb = Sandbox::new();
    let manifest = hostile_job(&sb, "hostile");
    let data = sb.data();
    let batch = sb
        .command(&["batch", "DATA", manifest.to_str().unwrap()])
        .env("CI", "true")
        .output()
        .unwrap();
    assert_eq!(batch.status.code(), Some(1), "{batch:?}");
    let shown = output_bytes(&batch);
    assert_clean("batch on a pipe", &shown, ON_A_PIPE);
    let text = String::from_utf8_lossy(&shown);
    assert!(text.contains(SHOWN), "the escapes are visible: {text}");
    assert!(
        text.contains("hostile: verify_failed: error: \\u{1b}]0;PWNED"),
        "{text}"
    );

    for args in [
        vec!["status", "DATA"],
        vec!["status", "DATA", "--json"],
        vec!["watch", "DATA"],
        vec!["report", "DATA", "--out", "again"],
    ] {
        let output = sb.command(&args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert_clean(&format!("{args:?}"), &output_bytes(&output), ON_A_PIPE);
    }
    let status = sb.run(&["status", "DATA"]).ok();
    assert!(status.stderr.contains(SHOWN), "{status:#?}");

    for dir in [data.join("report"), sb.path().join("again")] {
        for file in [
            "report.md",
            "results.tsv",
            "results.json",
            "junit.xml",
            "report.html",
        ] {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            assert_clean(file, &bytes, ON_A_PIPE);
        }
    }
    // results.json keeps the exact values, escaped as \uXXXX.
    let json = std::fs::read_to_string(data.join("report/results.json")).unwrap();
    assert!(
        json.contains("\\u001b]0;PWNED\\u0007\\u001b[2J\\u202e"),
        "{json}"
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let job = &doc["jobs"][0];
    assert!(job["cause"].as_str().unwrap().contains(HOSTILE), "{job:#}");
    let path = format!("evil{HOSTILE}.txt");
    assert!(
        crate::results::timeline_actions(job)
            .iter()
            .any(|e| e["text"].as_str().unwrap().contains(&path)),
        "the exact path is kept: {job:#}"
    );
    // The human reports show the escapes.
    let html = std::fs::read_to_string(data.join("report/report.html")).unwrap();
    let instance = job["instance"].as_str().unwrap();
    assert!(
        crate::harness::html_job_text(&html, instance).contains(SHOWN),
        "report.html"
    );
}

/// Runs `args` on a pseudo-terminal (util-linux `script`), returning what
/// the terminal received, or `None` (`test` skips, saying why) when
/// `script` is missing.
fn on_a_pty(test: &str, cwd: &Path, args: &[String]) -> Option<(i32, Vec<u8>)> {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut line = quote(BIN);
    for arg in args {
        line.push(' ');
        line.push_str(&quote(arg));
    }
    let output = Command::new("script")
        .args(["-qefc", &line, "/dev/null"])
        .current_dir(cwd)
        .env_remove("CI")
        .env_remove("COLUMNS")
        .env("TERM", "xterm-256color")
        .output();
    match output {
        Ok(output) => Some((output.status.code().unwrap_or(-1), output_bytes(&output))),
        Err(e) => {
            agent_runtime_test_support::skip(
                agent_runtime_test_support::Need::Tool,
                test,
                &format!("cannot run `script`: {e}"),
            );
            None
        }
    }
}

#[test]
fn on_a_terminal_the_hostile_sequences_are_escaped_too() {
    let sb = Sandbox::new();
    let test = "on_a_terminal_the_hostile_sequences_are_escaped_too";
    let manifest = hostile_job(&sb, "hostile");
    let data = sb.data().to_str().unwrap().to_string();
    let batch = vec![
        "batch".to_string(),
        data.clone(),
        manifest.to_str().unwrap().to_string(),
    ];
    let Some((code, shown)) = on_a_pty(test, sb.path(), &batch) else {
        return;
    };
    assert_eq!(code, 1, "{}", String::from_utf8_lossy(&shown));
    assert_clean("batch on a terminal", &shown, ON_A_TTY);
    let text = String::from_utf8_lossy(&shown);
    assert!(text.contains(SHOWN), "{text}");
    for (args, forbidden) in [
        (vec!["status".to_string(), data.clone()], ON_A_TTY),
        (vec!["watch".to_string(), data.clone()], WATCH_ON_A_TTY),
    ] {
        let Some((code, shown)) = on_a_pty(test, sb.path(), &args) else {
            return;
        };
        assert_eq!(code, 0, "{args:?}");
        assert_clean(&format!("{args:?} on a terminal"), &shown, forbidden);
        assert!(String::from_utf8_lossy(&shown).contains(SHOWN), "{args:?}");
    }
}
