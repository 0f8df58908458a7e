//! `validate` (check manifests without running them) and `schema` (print a
//! published JSON Schema).

use std::path::PathBuf;

use anyhow::bail;

use super::args::SchemaName;
use super::exit::Completion;
use crate::manifest::{ProviderConfig, expand_jobs, load_checked};
use crate::provider::load_script;
use crate::words::count;

/// Prints `ok PATH (id=..., family=...)` per valid manifest on stdout and
/// one error line per invalid one on stderr; fails if any was invalid.
/// With `verbose`, each job's search path and programs follow its line.
pub(super) fn validate(jobs: &[PathBuf], verbose: bool) -> anyhow::Result<Completion> {
    let mut files = Vec::new();
    let mut arg_errors = Vec::new();
    // Expand each argument alone so one bad argument does not hide the rest.
    for arg in jobs {
        match expand_jobs(std::slice::from_ref(arg)) {
            Ok(found) => files.extend(found),
            Err(err) => arg_errors.push(err),
        }
    }
    // Nothing to check at all: the one reason is the one line.
    if files.is_empty() && arg_errors.len() == 1 {
        return Err(arg_errors.remove(0).into());
    }
    let bad_args = arg_errors.len();
    for err in &arg_errors {
        errln!("{err}");
    }
    // Sort and deduplicate across arguments.
    let files = if files.is_empty() {
        files
    } else {
        expand_jobs(&files)?
    };
    let mut bad_files = 0usize;
    let mut loaded = Vec::new();
    for file in &files {
        match check(file, verbose) {
            Ok((line, manifest)) => {
                outln!("{line}");
                loaded.extend(manifest);
            }
            Err(message) => {
                errln!("{message}");
                bad_files += 1;
            }
        }
    }
    // Two files with one id: each is valid alone, but they cannot run
    // together. Both files are named.
    for clash in duplicate_ids(&loaded) {
        errln!("error: {clash}");
        bad_files += 1;
    }
    if bad_args > 0 {
        bail!(
            "{} named no manifest; {bad_files} of {} invalid",
            count(bad_args, "job argument"),
            count(files.len(), "manifest")
        );
    }
    if bad_files > 0 {
        bail!("{bad_files} of {} invalid", count(files.len(), "manifest"));
    }
    Ok(Completion::Success)
}

/// Loads every manifest of `files`, printing every error of each one that
/// is invalid (one line each); fails after all of them if any was.
pub(super) fn load_all(files: &[PathBuf]) -> anyhow::Result<Vec<crate::manifest::Manifest>> {
    let mut manifests = Vec::with_capacity(files.len());
    let mut errors = Vec::new();
    for file in files {
        match load_checked(file) {
            Ok(manifest) => manifests.push(manifest),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty()
        && let Some(clash) = duplicate_ids(&manifests).into_iter().next()
    {
        bail!("{clash}; nothing was run");
    }
    let lines: usize = errors.iter().map(|e| e.each().len()).sum();
    match (errors.len(), lines) {
        (0, _) => Ok(manifests),
        // One error in all: it is the one line.
        (1, 1) => Err(errors.remove(0).into()),
        (n, lines) => {
            for e in errors.iter().flat_map(|e| e.each()) {
                errln!("error: {e}");
            }
            bail!(
                "{n} of {} invalid ({} in all); nothing was run",
                count(files.len(), "manifest"),
                count(lines, "error")
            )
        }
    }
}

/// One line per job id that two or more manifests define, naming the files.
fn duplicate_ids(manifests: &[crate::manifest::Manifest]) -> Vec<String> {
    let mut seen: Vec<(&str, Vec<String>)> = Vec::new();
    for m in manifests {
        let file = m
            .file()
            .map_or_else(|| "?".to_string(), |f| f.display().to_string());
        match seen.iter_mut().find(|(id, _)| *id == m.id) {
            Some((_, files)) => files.push(file),
            None => seen.push((&m.id, vec![file])),
        }
    }
    seen.into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(id, files)| {
            format!(
                "job id {id:?} is defined by {} manifests: {}; give all but one another `id`",
                files.len(),
                files.join(" and ")
            )
        })
        .collect()
}

/// Whether `text` is a provider file rather than a job manifest: it has
/// a `[provider]` table and none of a job's keys.
fn is_provider_file(text: &str) -> bool {
    let Ok(value) = text.parse::<toml::Table>() else {
        return false;
    };
    value.contains_key("provider")
        && !["prompt", "prompt_file", "source", "verify", "editable"]
            .iter()
            .any(|k| value.contains_key(*k))
}

/// An `editable` glob that matches no file of the source: the model may
/// only create files there, which is seldom what was meant (a typo, a
/// path from another layout).
fn editable_warnings(manifest: &crate::manifest::Manifest) -> Vec<String> {
    let files = crate::check::source_files(&manifest.source);
    manifest
        .editable
        .iter()
        .filter(|glob| {
            crate::agent::editable_set(std::slice::from_ref(*glob))
                .is_ok_and(|set| !files.iter().any(|f| set.is_match(f)))
        })
        .map(|glob| {
            format!(
                "{}: editable glob {glob:?} matches no file of the source (the model could only create files there)",
                manifest.location_of("editable")
            )
        })
        .collect()
}

/// The `ok` line of a valid file, and the manifest when it is a job.
fn check(
    file: &std::path::Path,
    verbose: bool,
) -> Result<(String, Option<crate::manifest::Manifest>), String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    if is_provider_file(&text) {
        let provider = crate::manifest::load_provider_file(file).map_err(|e| e.to_string())?;
        let line = format!(
            "ok {} (provider {}, kind {})",
            file.display(),
            provider.name,
            provider.provider.kind().as_str()
        );
        return Ok((line, None));
    }
    let manifest = load_checked(file).map_err(|e| e.to_string())?;
    for warning in manifest
        .warnings()
        .into_iter()
        .chain(editable_warnings(&manifest))
    {
        eprintln!("warning: {warning}");
    }
    // A scripted provider's replies are checked too: a typo there would
    // otherwise surface only when the job runs.
    if let Some(ProviderConfig::Script(script)) = &manifest.provider {
        for path in &script.script {
            load_script(path).map_err(|e| format!("{}: provider.script: {e}", file.display()))?;
        }
    }
    let mut line = format!(
        "ok {} (id={}, family={})",
        file.display(),
        manifest.id,
        manifest.family
    );
    if manifest.provider.is_none() {
        // Valid, but `batch` and `run` refuse it without a provider file.
        line.push_str("; note: no provider (runs need --provider)");
    }
    if verbose {
        for program in super::exec::job_programs(&manifest) {
            line.push_str("\n  ");
            line.push_str(&program);
        }
    }
    Ok((line, Some(manifest)))
}

/// Prints the requested schema as pretty JSON.
pub(super) fn schema(which: SchemaName) -> anyhow::Result<Completion> {
    match which {
        SchemaName::Decision => out!("{}", crate::decision::decision_schema_text()),
    }
    Ok(Completion::Success)
}
