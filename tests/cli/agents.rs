//! `agents` and `agents install`: the table of external agents, and
//! installs into a data dir's cache, through the real binary. The install
//! flow (staging, record, rename into place, nothing left by a failure) is
//! driven by an `npm` of the test's own on PATH, which writes what npm
//! would; installing the real packages needs the registry.

use std::path::Path;

use crate::harness::Sandbox;

/// An `npm` that installs `PACKAGE@VERSION` as a program under
/// `--prefix`'s `node_modules/.bin`, or fails for version `0.0.0`.
fn fake_npm(dir: &Path) -> String {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = r#"#!/bin/sh
prefix=""; spec=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    -*) shift ;;
    *) spec="$1"; shift ;;
  esac
done
case "$spec" in *@0.0.0) echo "npm error notarget No matching version for $spec" >&2; exit 1 ;; esac
mkdir -p "$prefix/node_modules/.bin"
case "$spec" in
  @anthropic-ai/claude-code@*) name=claude ;;
  @openai/codex@*) name=codex ;;
esac
printf '#!/bin/sh\necho %s\n' "$spec" > "$prefix/node_modules/.bin/$name"
chmod +x "$prefix/node_modules/.bin/$name"
echo "$spec" >> "$(dirname "$0")/installs"
"#;
    let npm = bin.join("npm");
    std::fs::write(&npm, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn the_table_lists_every_agent_and_what_a_data_dir_has_installed() {
    let sb = Sandbox::new();
    let out = sb.run(&["agents"]).ok().stdout;
    for (agent, version) in [
        ("claude-code", "2.1.197"),
        ("codex", "0.171.0"),
        ("mini-swe-agent", "2.4.6"),
        ("command", "-"),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(agent))
            .unwrap_or_else(|| panic!("no {agent} in:\n{out}"));
        assert!(line.contains(version), "{line}");
    }
    assert!(out.contains("leashed, contained"), "{out}");
    assert!(out.contains("anthropic_messages"), "{out}");

    let path = fake_npm(sb.path());
    let install = crate::harness::Run::from(
        sb.command(&["agents", "install", "DATA", "claude-code", "codex@0.170.0"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    )
    .ok();
    assert!(
        install.stdout.contains("claude-code@2.1.197: installed in"),
        "{}",
        install.stdout
    );
    let agents = sb.data().join("cache/agents");
    let program = agents.join("claude-code@2.1.197/node_modules/.bin/claude");
    assert!(program.exists(), "{}", program.display());
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(agents.join("codex@0.170.0/agent.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["package"], "@openai/codex");
    assert_eq!(record["version"], "0.170.0");

    // Installed once: a second install leaves it as it is.
    let again = crate::harness::Run::from(
        sb.command(&["agents", "install", "DATA", "claude-code"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    )
    .ok();
    assert!(
        again.stdout.contains("already installed"),
        "{}",
        again.stdout
    );
    let installs = std::fs::read_to_string(sb.path().join("fake-bin/installs")).unwrap();
    assert_eq!(installs.lines().count(), 2, "{installs}");

    let listed = sb.run(&["agents", "DATA"]).ok().stdout;
    let codex = listed.lines().find(|l| l.starts_with("codex")).unwrap();
    assert!(codex.trim_end().ends_with("0.170.0"), "{codex}");
    let mini = listed
        .lines()
        .find(|l| l.starts_with("mini-swe-agent"))
        .unwrap();
    assert!(mini.trim_end().ends_with("no"), "{mini}");
}

#[test]
fn a_failed_install_says_why_and_leaves_nothing_that_looks_installed() {
    let sb = Sandbox::new();
    let path = fake_npm(sb.path());
    let failed = crate::harness::Run::from(
        sb.command(&["agents", "install", "DATA", "codex@0.0.0"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    )
    .code(2);
    assert!(
        failed.stderr.contains("installing codex@0.0.0 failed")
            && failed.stderr.contains("No matching version"),
        "{}",
        failed.stderr
    );
    let agents = sb.data().join("cache/agents");
    assert!(!agents.join("codex@0.0.0").exists());
    let listed = sb.run(&["agents", "DATA"]).ok().stdout;
    let codex = listed.lines().find(|l| l.starts_with("codex")).unwrap();
    assert!(codex.trim_end().ends_with("no"), "{codex}");

    // A typo, a bad version, an agent with nothing to install: exit 2.
    let typo = sb.run(&["agents", "install", "DATA", "claude"]).code(2);
    assert!(
        typo.stderr.contains("unknown agent `claude`"),
        "{}",
        typo.stderr
    );
    let version = sb.run(&["agents", "install", "DATA", "codex@../x"]).code(2);
    assert!(
        version.stderr.contains("is not a version"),
        "{}",
        version.stderr
    );
    let command = sb.run(&["agents", "install", "DATA", "command"]).code(2);
    assert!(
        command.stderr.contains("nothing to install"),
        "{}",
        command.stderr
    );
}
