//! A set of grants' root is built once and copied for each command (see
//! `mounts.rs`): the copy must still show what the grants name now. A
//! workspace removed and made again at the same path, and a granted file
//! replaced by a rename, are what the next command sees, never the old
//! ones held by the built root. Skips, saying why, without PID and mount
//! namespaces (fails instead under AGENT_RUNTIME_REQUIRE_LAYERS=1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use agent_runtime_sandbox::cancel::CancelToken;
use agent_runtime_sandbox::exec::{AllowList, ExecRequest, run};
use agent_runtime_sandbox::sandbox::{SandboxMode, probe};
use agent_runtime_test_support::require_layer;

fn namespaces_here(test: &str) -> bool {
    let namespaces = probe().namespaces.as_ref();
    require_layer(
        test,
        namespaces.map_err(|reason| format!("no PID and mount namespaces: {reason}")),
    )
    .is_some()
}

/// `cat` of `file` inside `ws`, with `readable` granted.
fn cat(ws: &Path, file: &Path, readable: &Path) -> String {
    let argv = vec!["cat".to_string(), file.display().to_string()];
    let allow = AllowList::program_any_args("cat").unwrap();
    let mut req = ExecRequest::new(argv, allow, ws.to_path_buf());
    req.sandbox.mode = SandboxMode::Auto;
    req.sandbox.readable = vec![readable.to_path_buf()];
    let out = run(&req, &CancelToken::new()).unwrap();
    assert!(out.sandbox_layers.iter().any(|l| l == "mntns"), "{out:?}");
    assert!(out.success(), "{out:?}\n{}", out.stderr.to_text());
    out.stdout.to_text()
}

#[test]
fn a_workspace_made_again_and_a_file_renamed_over_are_seen_as_they_are_now() {
    if !namespaces_here("a_workspace_made_again_and_a_file_renamed_over_are_seen_as_they_are_now") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let granted = tmp.path().join("granted");
    std::fs::create_dir_all(&granted).unwrap();
    let file = granted.join("data.txt");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("mark"), "first\n").unwrap();
    std::fs::write(&file, "one\n").unwrap();
    assert_eq!(cat(&ws, &ws.join("mark"), &file), "first\n");
    assert_eq!(cat(&ws, &file, &file), "one\n");

    // The workspace removed and made again, the file replaced by a rename.
    std::fs::remove_dir_all(&ws).unwrap();
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("mark"), "second\n").unwrap();
    let next = granted.join("data.txt.new");
    std::fs::write(&next, "two\n").unwrap();
    std::fs::rename(&next, &file).unwrap();

    assert_eq!(cat(&ws, &ws.join("mark"), &file), "second\n");
    assert_eq!(cat(&ws, &file, &file), "two\n");
}
