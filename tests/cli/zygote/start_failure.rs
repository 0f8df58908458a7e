//! A command that cannot exec in the warm process made for it: the warm
//! process says why on its socket before it exits, and the command is
//! reported as any command that could not start (what is missing inside
//! the sandbox), with the attempt going on from the zygote.

use super::{attempt_namespace_here, command_layers, finish_steps, job_with, run_tool};
use crate::harness::{Sandbox, observations, tool_with_a_hidden_interpreter};

#[test]
fn a_warm_command_that_cannot_exec_says_why_and_the_attempt_goes_on() {
    let test = "a_warm_command_that_cannot_exec_says_why_and_the_attempt_goes_on";
    if !attempt_namespace_here(test) {
        return;
    }
    let sb = Sandbox::new();
    let (tool, interp) = tool_with_a_hidden_interpreter(sb.path());
    // The first command is spawned by the zygote; the second and third
    // start in the warm process made for each while the one before ran.
    let mut steps = vec![
        run_tool("sh", &["-c", "echo FIRST"]),
        run_tool("mytool", &[]),
        run_tool("sh", &["-c", "echo AFTER"]),
    ];
    steps.extend(finish_steps());
    let manifest = job_with(
        &sb,
        &steps,
        r#", "mytool""#,
        r#"toolchains = ["tools/bin"]"#,
    );
    let run = sb.run(&["batch", "DATA", manifest.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:#?}");
    let seen = observations(&sb, "zygote", 1);
    let resolved = tool.canonicalize().unwrap();
    assert!(
        seen.contains(&format!("`mytool` ({})", resolved.display())),
        "{seen}"
    );
    assert!(
        seen.contains(&format!("its interpreter `{}`", interp.display())),
        "{seen}"
    );
    assert!(seen.contains("AFTER"), "{seen}");
    // Every command that ran came from the zygote, never lost.
    let layers = command_layers(&sb);
    assert!(layers.len() >= 3, "{layers:?}");
    for command in &layers {
        assert!(command.contains(&"zygote".to_string()), "{layers:?}");
        assert!(command.contains(&"pidns".to_string()), "{layers:?}");
    }
}
