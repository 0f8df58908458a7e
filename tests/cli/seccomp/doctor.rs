//! `doctor` lists the seccomp layer and the programs commands would run.

use super::*;

#[test]
fn doctor_lists_seccomp_and_the_programs_commands_would_run() {
    let out = Command::new(BIN).arg("doctor").output().unwrap();
    let text = stdout(&out);
    let seccomp = text
        .lines()
        .find(|l| l.starts_with("seccomp: "))
        .unwrap_or_else(|| panic!("no seccomp line:\n{text}"));
    if probe().seccomp.is_ok() {
        assert!(seccomp.starts_with("seccomp: available"), "{seccomp}");
        assert!(seccomp.contains("clone3 ENOSYS"), "{seccomp}");
        let auto = text.lines().find(|l| l.starts_with("auto=")).unwrap();
        assert!(auto.contains("seccomp"), "{auto}");
    } else {
        skip(
            Need::Layer,
            "doctor_lists_seccomp_and_the_programs_commands_would_run",
            seccomp,
        );
    }
    assert!(
        text.lines().any(|l| l.starts_with("search path: /")),
        "{text}"
    );
    for program in ["cargo", "python3", "node"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("program {program}: "))),
            "{text}"
        );
    }
}
