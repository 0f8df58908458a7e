//! With the sandbox off, commands still start from the zygote, which
//! forks them and adds no layer of its own.

use super::{command_layers, finish_steps, job, run_tool};
use crate::harness::Sandbox;

#[test]
fn with_the_sandbox_off_commands_still_start_from_the_zygote() {
    // No layer is needed: the binary always serves as a zygote.
    let sb = Sandbox::new();
    let mut steps = vec![run_tool("sh", &["-c", "echo off"])];
    steps.extend(finish_steps());
    let manifest = job(&sb, &steps);
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("mode = \"auto\"", "mode = \"off\"")).unwrap();
    let run = crate::harness::Run::from(
        sb.command(&["batch", "DATA", manifest.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:#?}");
    // The command and the verify: from the zygote, with no layer around
    // them (the zygote forks; it adds no sandbox of its own).
    let layers = command_layers(&sb);
    assert!(layers.len() >= 2, "{layers:?}");
    for command in &layers {
        assert_eq!(command, &["zygote".to_string()], "{layers:?}");
    }
}
