//! The exit-code policy, in one place.
//!
//! 0 success (all jobs succeeded), 1 some job failed or was rejected, 2 the
//! command could not do what was asked (usage, manifest, configuration, an
//! illegal transition, or a log that cannot be read), 130 interrupted by
//! Ctrl-C with state saved.

use std::process::ExitCode;

/// How a command that ran to its end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    Success,
    JobsFailed,
    Interrupted,
}

pub const EXIT_FAILED: u8 = 1;
pub const EXIT_ERROR: u8 = 2;
pub const EXIT_INTERRUPTED: u8 = 130;

/// Maps a command's result to the process exit code, printing errors as one
/// line on stderr.
pub fn exit_code(result: anyhow::Result<Completion>) -> ExitCode {
    match result {
        Ok(Completion::Success) => ExitCode::SUCCESS,
        Ok(Completion::JobsFailed) => ExitCode::from(EXIT_FAILED),
        Ok(Completion::Interrupted) => ExitCode::from(EXIT_INTERRUPTED),
        // The reader of our output went away (`status | head`): not an error.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // Every error of a manifest is a line of its own.
            match several(&err) {
                Some(errors) => {
                    for error in errors.each() {
                        errln!("error: {}", crate::escape::line(&error.to_string()));
                    }
                }
                None => errln!("error: {}", crate::escape::line(&one_line(&err))),
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The several errors of one file, when that is what `err` is.
fn several(err: &anyhow::Error) -> Option<&crate::manifest::ManifestError> {
    err.chain()
        .find_map(|cause| cause.downcast_ref::<crate::manifest::ManifestError>())
        .filter(|e| matches!(e, crate::manifest::ManifestError::Several(_)))
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error chain joined into one line, without repeating a cause that the
/// outer message already quotes.
fn one_line(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text.replace('\n', " ")
}
