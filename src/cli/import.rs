//! `import exercism` and `import swebench`: what was written, what was left
//! out and why.

use std::time::Instant;

use super::args::ImportCommand;
use super::exit::Completion;
use crate::import::{
    ExercismOptions, ImportReport, SetupChoice, SwebenchOptions, import_exercism, import_swebench,
};

pub(super) fn import(which: ImportCommand) -> anyhow::Result<Completion> {
    let started = Instant::now();
    let (report, out) = match which {
        ImportCommand::Exercism {
            paths,
            out,
            visible_tests,
        } => {
            let options = ExercismOptions {
                paths,
                out: out.clone(),
                visible_tests,
            };
            (import_exercism(&options)?, out)
        }
        ImportCommand::Swebench {
            instances,
            repo,
            out,
            test_cmd,
            setup,
            python,
        } => {
            let split = |text: &str| {
                crate::lang::split_command(text)
                    .filter(|argv| !argv.is_empty())
                    .ok_or_else(|| anyhow::anyhow!("not a command line: {text:?}"))
            };
            let test_cmd = test_cmd.as_deref().map(split).transpose()?;
            let setup = match setup.as_slice() {
                [] => SetupChoice::Venv,
                [only] if only == "none" => SetupChoice::None,
                commands => SetupChoice::Commands(
                    commands
                        .iter()
                        .map(|c| split(c))
                        .collect::<anyhow::Result<_>>()?,
                ),
            };
            let python = python
                .map(|dir| {
                    dir.canonicalize()
                        .map_err(|e| anyhow::anyhow!("--python {}: {e}", dir.display()))
                })
                .transpose()?;
            let options = SwebenchOptions {
                instances,
                repos: repo,
                out: out.clone(),
                test_cmd,
                setup,
                python_bin: python,
            };
            (import_swebench(&options)?, out)
        }
    };
    print_report(&report, &out, started.elapsed())?;
    Ok(if report.written.is_empty() {
        Completion::JobsFailed
    } else {
        Completion::Success
    })
}

fn print_report(
    report: &ImportReport,
    out: &std::path::Path,
    took: std::time::Duration,
) -> anyhow::Result<()> {
    for (id, why) in &report.skipped {
        errln!("left out {id}: {why}");
    }
    for (id, note) in &report.notes {
        errln!("note: {id}: {note}");
    }
    if report.written.is_empty() {
        outln!(
            "imported no job into {}, left out {}",
            out.display(),
            report.skipped.len()
        );
        return Ok(());
    }
    outln!(
        "imported {} into {} in {:.2}s, left out {}; check them with: agent-runtime check {}",
        crate::words::count(report.written.len(), "job"),
        out.display(),
        took.as_secs_f64(),
        report.skipped.len(),
        out.display()
    );
    Ok(())
}
