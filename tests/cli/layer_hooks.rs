//! The proof that sandbox tests can fail: with Landlock removed by the
//! sandbox's test hook (`AGENT_RUNTIME_TEST_DISABLE_LAYERS`, on in the
//! test build through the dev-dependency on the sandbox crate), real
//! sandbox tests of this binary, run again in a child process, fail under
//! `AGENT_RUNTIME_REQUIRE_LAYERS=1` naming `landlock`, and skip saying why
//! without it. One checks the layer with the probe in its own process,
//! the other through `exec --sandbox required` of the binary, so both
//! paths a test takes to find a layer missing are covered.

use std::process::{Command, Output};

use agent_runtime::sandbox::{TEST_HOOKS_ENV, probe, test_hooks};
use agent_runtime_test_support::{Need, skip};

use crate::harness::BIN;

const REQUIRE: &str = "AGENT_RUNTIME_REQUIRE_LAYERS";

/// Whether this build has the hooks (a release-profile `cargo test`
/// compiles them out); says why not.
pub(crate) fn hooks_built(test: &str) -> bool {
    if test_hooks().is_none() {
        skip(
            Need::Layer,
            test,
            "the test hooks are compiled out of this build",
        );
        return false;
    }
    true
}

/// Runs `test` of this test binary alone, in a child process, with
/// Landlock removed, and `AGENT_RUNTIME_REQUIRE_LAYERS=1` when `require`.
/// Its skip is not one of this run's: it goes to no skip log.
fn rerun(test: &str, require: bool) -> (Output, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(TEST_HOOKS_ENV, "landlock")
        .env_remove("AGENT_RUNTIME_SKIP_LOG");
    if require {
        command.env(REQUIRE, "1");
    } else {
        command.env_remove(REQUIRE);
    }
    let out = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

/// `test` fails under the requirement, naming the layer, and skips
/// without it, saying why.
fn fails_when_required_and_skips_otherwise(test: &str) {
    let (out, text) = rerun(test, true);
    assert!(
        !out.status.success(),
        "{test} passed without Landlock:\n{text}"
    );
    let failure = text
        .lines()
        .find(|l| l.contains("a required sandbox layer is missing"))
        .unwrap_or_else(|| panic!("{test} failed for another reason:\n{text}"));
    assert!(failure.contains("landlock"), "{failure}");
    assert!(failure.contains(TEST_HOOKS_ENV), "{failure}");
    assert!(failure.contains(&format!("({REQUIRE}=1)")), "{failure}");
    assert!(
        text.contains("test result: FAILED. 0 passed; 1 failed"),
        "{text}"
    );

    let (out, text) = rerun(test, false);
    assert!(out.status.success(), "{test} did not skip:\n{text}");
    let short = test.rsplit("::").next().unwrap_or(test);
    let skip = text
        .lines()
        .find(|l| l.starts_with(&format!("skipping {short}: ")))
        .unwrap_or_else(|| panic!("{test} did not say why it skipped:\n{text}"));
    assert!(skip.contains("landlock"), "{skip}");
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
}

#[test]
fn a_test_that_probes_in_process_fails_without_landlock_when_layers_are_required() {
    if !hooks_built("a_test_that_probes_in_process_fails_without_landlock_when_layers_are_required")
    {
        return;
    }
    fails_when_required_and_skips_otherwise("sandbox::required_reports_its_layers");
}

#[test]
fn a_test_that_asks_the_binary_fails_without_landlock_when_layers_are_required() {
    let test = "a_test_that_asks_the_binary_fails_without_landlock_when_layers_are_required";
    if !hooks_built(test) {
        return;
    }
    // The test it reruns asks for every layer `required` applies: where
    // one is missing anyway, that one, not Landlock, would be named.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["exec", "--sandbox", "required", "--workspace"])
        .arg(dir.path())
        .args(["--", "true"])
        .env_remove(TEST_HOOKS_ENV)
        .output()
        .unwrap();
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        skip(
            Need::Layer,
            test,
            &format!("`required` does not run here: {why}"),
        );
        return;
    }
    fails_when_required_and_skips_otherwise(
        "containment::an_inherited_descriptor_does_not_reach_the_command",
    );
}

#[test]
fn doctor_says_the_hooks_are_on_and_what_they_removed() {
    if !hooks_built("doctor_says_the_hooks_are_on_and_what_they_removed") {
        return;
    }
    let out = Command::new(BIN)
        .arg("doctor")
        .env(TEST_HOOKS_ENV, "landlock,cgroup")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "test hooks: on in this build; AGENT_RUNTIME_TEST_DISABLE_LAYERS removed landlock; \
             ignored cgroup (removable: landlock, network, rlimits, namespaces, seccomp, keyring, agent_builtins)"
        ),
        "{text}"
    );
    assert_eq!(
        lines.next(),
        Some(
            "landlock: unavailable (removed by a test hook: \
             AGENT_RUNTIME_TEST_DISABLE_LAYERS names landlock)"
        ),
        "{text}"
    );
    let auto = text.lines().find(|l| l.starts_with("auto=")).unwrap();
    assert!(!auto.contains("landlock"), "{auto}");
    // Only removing: every other layer reads as the probe of this process
    // (no hook) finds it.
    let network = text.lines().find(|l| l.starts_with("network: ")).unwrap();
    assert_eq!(
        network.starts_with("network: available"),
        probe().network.is_ok(),
        "{network}"
    );
}

/// `doctor` with every layer a hook can remove removed reads the same on
/// every machine, but for what the hooks cannot touch: the cgroup line,
/// `required=` (which looks at the cgroup first), capabilities (root
/// only) and the programs, redacted.
#[test]
fn doctor_with_every_removable_layer_removed() {
    if !hooks_built("doctor_with_every_removable_layer_removed") {
        return;
    }
    let out = Command::new(BIN)
        .arg("doctor")
        .env(
            TEST_HOOKS_ENV,
            agent_runtime::sandbox::REMOVABLE_LAYERS.join(","),
        )
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut settings = crate::snapshot::redacted(None);
    settings.add_filter(r"(?m)^cgroup: .*$", "cgroup: [HOST]");
    settings.add_filter(r"(?m)^capabilities: .*\n", "");
    settings.add_filter(r"(?m)^required=.*$", "required=[HOST]");
    settings.add_filter(r"(?m)^(search path|program [a-z0-9]+): .*$", "$1: [HOST]");
    settings.add_filter(r"\b(cgroup-v[12]|nocaps)\b,?", "");
    settings.add_filter(r",(\n|$)", "$1");
    settings.bind(|| insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout)));
}
