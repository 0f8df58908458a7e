//! `doctor`: what the sandbox probe found, what `auto` and `required`
//! would apply, the test hooks of a test build, and the programs commands
//! would run. The lines are a pure function of what was found, so their
//! format has a snapshot.

use std::time::Duration;

use super::exit::Completion;
use crate::exec::SearchPath;
use crate::sandbox::{
    Grants, Layer, LayerStatus, SandboxError, SandboxMode, SandboxPolicy, joined, probe, test_hooks,
};

/// Everything `doctor` shows, found.
#[derive(Debug)]
pub(super) struct Findings {
    /// The test hooks' line, in a build with them.
    pub hooks: Option<String>,
    pub layers: Vec<LayerStatus>,
    pub root: bool,
    pub auto: Vec<Layer>,
    /// The layers `required` applies, or why it cannot run here.
    pub required: Result<Vec<Layer>, SandboxError>,
    /// `search path: ...` and a line per program.
    pub programs: Vec<String>,
}

pub(super) fn doctor(data: Option<&std::path::Path>) -> anyhow::Result<Completion> {
    let probe = probe();
    let required = SandboxPolicy {
        mode: SandboxMode::Required,
        ..SandboxPolicy::default()
    };
    let findings = Findings {
        hooks: test_hooks().map(|hooks| hooks.describe()),
        layers: probe.statuses(),
        root: nix::unistd::geteuid().is_root(),
        auto: probe.auto_layers(),
        required: crate::sandbox::prepare(&required, &Grants::default(), Duration::from_secs(1))
            .map(|prepared| prepared.layers),
        programs: super::exec::programs(&SearchPath::fixed()),
    };
    for line in lines(&findings) {
        outln!("{line}");
    }
    if let Some(data) = data {
        for line in log_lines(data)? {
            outln!("{line}");
        }
    }
    Ok(Completion::Success)
}

/// The check of a data dir's log: every record read from the first, its
/// checksum, order and transition checked (the checkpoint is not used);
/// an error names the first corrupt line.
fn log_lines(data: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let dir = crate::lifecycle::DataDir::new(data);
    let log = dir.log();
    let full = crate::log::read_snapshot_full::<crate::state::Summaries>(&log)?;
    let mut lines = vec![format!(
        "log: {} read and checked from the first (checksums, order, transitions), {} bytes",
        crate::words::count(usize::try_from(full.events).unwrap_or(usize::MAX), "record"),
        full.bytes
    )];
    for (seq, why) in &full.anomalies {
        lines.push(format!(
            "log: warning: an illegal event, ignored on replay: seq {seq}: {why}"
        ));
    }
    if let Some(torn) = &full.torn {
        lines.push(format!(
            "log: the last line ({} bytes at line {}) is torn; the next writer will repair it",
            torn.bytes, torn.line
        ));
    }
    let from_checkpoint = crate::log::read_snapshot::<crate::state::Summaries>(&log)?;
    lines.push(if from_checkpoint.checkpointed > 0 {
        format!(
            "log: the writers' checkpoint (state.ckpt) covers the first {}, which `status` takes from it",
            crate::words::count(
                usize::try_from(from_checkpoint.checkpointed).unwrap_or(usize::MAX),
                "record"
            )
        )
    } else {
        "log: no checkpoint in use: `status` reads every record".to_string()
    });
    Ok(lines)
}

/// `doctor`'s report, a line each.
pub(super) fn lines(findings: &Findings) -> Vec<String> {
    let mut lines: Vec<String> = findings.hooks.iter().cloned().collect();
    for status in &findings.layers {
        let state = if status.available {
            "available"
        } else {
            "unavailable"
        };
        lines.push(format!("{}: {state} ({})", status.layer, status.detail));
    }
    if findings.root {
        lines.push("capabilities: dropped for every sandboxed command (running as root)".into());
    }
    lines.push(format!("auto={}", joined(&findings.auto)));
    lines.push(match &findings.required {
        Ok(layers) => format!("required=ok ({})", joined(layers)),
        Err(err) => format!("required=unavailable ({err})"),
    });
    lines.extend(findings.programs.iter().cloned());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::TestHooks;

    fn status(layer: &'static str, available: bool, detail: &str) -> LayerStatus {
        LayerStatus {
            layer,
            available,
            detail: detail.to_string(),
        }
    }

    /// A machine with Landlock removed by a test hook, cgroup v2 and no
    /// keyrings, run as root.
    #[test]
    fn doctor_snapshot() {
        let findings = Findings {
            hooks: Some(
                TestHooks {
                    removed: vec!["landlock"],
                    unknown: Vec::new(),
                }
                .describe(),
            ),
            layers: vec![
                status("landlock", false, &TestHooks::reason("landlock")),
                status("network", true, "netns: private namespace, loopback down"),
                status(
                    "rlimits",
                    true,
                    "core dumps off, file size, open files, CPU seconds",
                ),
                status("pidns", true, "a PID namespace per command"),
                status("mntns", true, "a mount namespace per command"),
                status("cgroup", true, "cgroup v2 in /sys/fs/cgroup/agent"),
                status("seccomp", true, "on (107 BPF instructions)"),
                status(
                    "keyring",
                    false,
                    "the kernel has no keyrings (nothing to hide)",
                ),
            ],
            root: true,
            auto: [
                "cgroup-v2",
                "pidns",
                "mntns",
                "netns",
                "rlimits",
                "nocaps",
                "seccomp",
            ]
            .map(|name| name.parse().expect("a layer"))
            .to_vec(),
            required: Err(SandboxError::Unavailable {
                layer: "landlock".into(),
                reason: TestHooks::reason("landlock"),
            }),
            programs: vec![
                "search path: /usr/local/bin:/usr/bin:/bin".into(),
                "program cargo: /usr/bin/cargo".into(),
                "program python3: /usr/bin/python3 (runs /usr/bin/python3.11)".into(),
                "program node: not found in the search path".into(),
            ],
        };
        insta::assert_snapshot!(lines(&findings).join("\n"));
    }

    #[test]
    fn a_build_without_hooks_prints_no_hooks_line() {
        let findings = Findings {
            hooks: None,
            layers: vec![status("landlock", true, "ABI 6")],
            root: false,
            auto: vec![Layer::Landlock(6)],
            required: Ok(vec![Layer::Landlock(6)]),
            programs: Vec::new(),
        };
        assert_eq!(
            lines(&findings),
            [
                "landlock: available (ABI 6)",
                "auto=landlock-abi6",
                "required=ok (landlock-abi6)"
            ]
        );
    }
}
