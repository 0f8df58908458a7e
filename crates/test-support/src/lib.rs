//! How a test that cannot run on this machine says so: one line,
//! `skipping TEST: WHY`, on stderr and, where `AGENT_RUNTIME_SKIP_LOG`
//! names a file, appended to it (so a CI run can count its skips; a
//! passing test's stderr is captured). Where the machine must have what
//! the test needs, it fails instead:
//!
//! - `AGENT_RUNTIME_REQUIRE_LAYERS=1`: a sandbox layer (Landlock, a
//!   namespace, cgroups, seccomp, keyrings, the root or capabilities the
//!   sandbox needs for one, the test hooks);
//! - `AGENT_RUNTIME_REQUIRE_TOOLS=1`: a tool (python3, pytest, node, npm
//!   or another registry, chromium, the inspect-ai and harbor venvs, git,
//!   bash, `script`, `setsid`, `unshare`, a rustup toolchain, root to
//!   mount a tmpfs).
//!
//! Dev-only: a dev-dependency of both crates, never of a build for use.

use std::io::Write;

/// What a test needs that a machine may lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A sandbox layer.
    Layer,
    /// A program, a package or a registry.
    Tool,
}

impl Need {
    /// The variable that makes a missing one a failure.
    pub fn switch(self) -> &'static str {
        match self {
            Need::Layer => "AGENT_RUNTIME_REQUIRE_LAYERS",
            Need::Tool => "AGENT_RUNTIME_REQUIRE_TOOLS",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Need::Layer => "a required sandbox layer is missing",
            Need::Tool => "a required tool is missing",
        }
    }
}

/// `found`'s value where the machine has what `test` needs; else `None`,
/// after saying why the test skips (or failing it, under the switch of
/// `need`).
#[track_caller]
pub fn require<T, E: std::fmt::Display>(need: Need, test: &str, found: Result<T, E>) -> Option<T> {
    match found {
        Ok(value) => Some(value),
        Err(why) => {
            skip(need, test, &why.to_string());
            None
        }
    }
}

/// [`require`] for a sandbox layer.
#[track_caller]
pub fn require_layer<T, E: std::fmt::Display>(test: &str, found: Result<T, E>) -> Option<T> {
    require(Need::Layer, test, found)
}

/// [`require`] for a tool.
#[track_caller]
pub fn require_tool<T, E: std::fmt::Display>(test: &str, found: Result<T, E>) -> Option<T> {
    require(Need::Tool, test, found)
}

/// Says that `test` skips because of `why`; under the switch of `need`,
/// fails it instead.
#[track_caller]
#[allow(clippy::panic)]
pub fn skip(need: Need, test: &str, why: &str) {
    if std::env::var(need.switch()).as_deref() == Ok("1") {
        panic!("{test}: {} ({}=1): {why}", need.what(), need.switch());
    }
    let line = format!("skipping {test}: {why}");
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("AGENT_RUNTIME_SKIP_LOG")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{line}");
    }
}

/// Copies the tree at `from` to `to` (made if missing): directories and
/// regular files, as a test fixture holds them.
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    /// Set in the child process the tests below start.
    const CHILD: &str = "AGENT_RUNTIME_TEST_SUPPORT_CHILD";
    const CHILD_TEST: &str = "tests::a_test_whose_tool_is_missing";

    #[test]
    fn what_is_found_is_given_back() {
        assert_eq!(require_tool::<u32, String>("t", Ok(3)), Some(3));
    }

    /// Only in the child: a test whose tool is missing.
    #[test]
    fn a_test_whose_tool_is_missing() {
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        let found: Result<(), &str> = Err("no-such-tool is not installed");
        assert!(require_tool("a_test_whose_tool_is_missing", found).is_none());
    }

    /// Runs the test above alone, in a child process of this test binary,
    /// logging skips to `log`, with `AGENT_RUNTIME_REQUIRE_TOOLS=1` when
    /// `require`: whether it passed, and what it printed.
    fn rerun(require: bool, log: &std::path::Path) -> (bool, String) {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("AGENT_RUNTIME_SKIP_LOG", log)
            .env_remove(Need::Layer.switch());
        if require {
            command.env(Need::Tool.switch(), "1");
        } else {
            command.env_remove(Need::Tool.switch());
        }
        let out = command.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    #[test]
    fn a_missing_tool_fails_the_test_when_tools_are_required_and_skips_it_otherwise() {
        let dir = std::env::temp_dir().join(format!("agent-runtime-skips-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skips.log");
        let _ = std::fs::remove_file(&log);

        let (passed, text) = rerun(true, &log);
        assert!(!passed, "passed without its tool:\n{text}");
        assert!(
            text.contains(
                "a_test_whose_tool_is_missing: a required tool is missing \
                 (AGENT_RUNTIME_REQUIRE_TOOLS=1): no-such-tool is not installed"
            ),
            "{text}"
        );
        assert!(!log.exists(), "a failure is not a skip");

        let (passed, text) = rerun(false, &log);
        assert!(passed, "did not skip:\n{text}");
        let line = "skipping a_test_whose_tool_is_missing: no-such-tool is not installed";
        assert!(text.lines().any(|l| l == line), "{text}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), format!("{line}\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
