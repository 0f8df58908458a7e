//! `validate` (check manifests without running them) and `schema` (print a
//! published JSON Schema).

use std::path::PathBuf;

use anyhow::bail;

use super::args::SchemaName;
use super::exit::Completion;
use crate::manifest::{ProviderConfig, expand_jobs, load_checked};
use crate::provider::load_script;

/// Prints `ok PATH (id=..., family=...)` per valid manifest on stdout and
/// one error line per invalid one on stderr; fails if any was invalid.
pub fn validate(jobs: &[PathBuf]) -> anyhow::Result<Completion> {
    let mut files = Vec::new();
    let mut bad_args = 0usize;
    // Expand each argument alone so one bad argument does not hide the rest.
    for arg in jobs {
        match expand_jobs(std::slice::from_ref(arg)) {
            Ok(found) => files.extend(found),
            Err(err) => {
                eprintln!("{err}");
                bad_args += 1;
            }
        }
    }
    // Sort and deduplicate across arguments.
    let files = if files.is_empty() {
        files
    } else {
        expand_jobs(&files)?
    };
    let mut bad_files = 0usize;
    for file in &files {
        match check(file) {
            Ok(line) => outln!("{line}"),
            Err(message) => {
                eprintln!("{message}");
                bad_files += 1;
            }
        }
    }
    if bad_args > 0 {
        bail!(
            "{bad_args} job argument(s) named no manifest; {bad_files} of {} manifest(s) invalid",
            files.len()
        );
    }
    if bad_files > 0 {
        bail!("{bad_files} of {} manifest(s) invalid", files.len());
    }
    Ok(Completion::Success)
}

fn check(file: &std::path::Path) -> Result<String, String> {
    let manifest = load_checked(file).map_err(|e| e.to_string())?;
    // A scripted provider's replies are checked too: a typo there would
    // otherwise surface only when the job runs.
    if let Some(ProviderConfig::Script(script)) = &manifest.provider {
        for path in &script.script {
            load_script(path).map_err(|e| format!("{}: provider.script: {e}", file.display()))?;
        }
    }
    Ok(format!(
        "ok {} (id={}, family={})",
        file.display(),
        manifest.id,
        manifest.family
    ))
}

/// Prints the requested schema as pretty JSON.
pub fn schema(which: SchemaName) -> anyhow::Result<Completion> {
    match which {
        SchemaName::Decision => out!("{}", crate::decision::decision_schema_text()),
    }
    Ok(Completion::Success)
}
