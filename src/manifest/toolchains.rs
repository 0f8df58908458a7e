//! `[sandbox] toolchains`: a job's own toolchain directories, checked
//! where they are written. Each is granted read-only to every command
//! together with its prefix, so neither may expose what the model must
//! not read (the hidden tests, the oracle) or lie in what it edits.

use std::path::Path;

use super::error::ManifestError;
use super::fields::Fields;
use crate::protocol::CACHE_PLACEHOLDER;

/// What a job's toolchain directories must stay clear of.
pub(super) struct Confined<'a> {
    pub source: &'a Path,
    pub acceptance: Option<&'a Path>,
    pub oracle: Option<&'a Path>,
    pub has_setup: bool,
}

/// `[sandbox] toolchains`: directories relative to the manifest (or
/// absolute), or `{cache}/...` in the job cache (jobs with `[setup]`).
/// Each is granted read-only with its prefix (`DIR/..`), so neither may
/// lie inside `source`, nor may the prefix hold the source, the hidden
/// tests or the oracle.
pub(super) fn toolchains(
    fields: &Fields<'_>,
    entries: Vec<String>,
    confined: &Confined<'_>,
) -> Result<Vec<String>, ManifestError> {
    let mut out = Vec::with_capacity(entries.len());
    for (index, text) in entries.into_iter().enumerate() {
        let field = format!("sandbox.toolchains[{index}]");
        if text.starts_with(CACHE_PLACEHOLDER) {
            if !confined.has_setup {
                return Err(fields.err(
                    &field,
                    format!(
                        "{CACHE_PLACEHOLDER} names the job cache, which only a job with [setup] has"
                    ),
                ));
            }
            let rest = text
                .strip_prefix(CACHE_PLACEHOLDER)
                .and_then(|rest| rest.strip_prefix('/'))
                .map(Path::new)
                .filter(|rest| {
                    !rest.as_os_str().is_empty()
                        && rest
                            .components()
                            .all(|c| matches!(c, std::path::Component::Normal(_)))
                });
            let Some(rest) = rest else {
                return Err(fields.err(
                    &field,
                    format!("{text:?} must name a directory inside {CACHE_PLACEHOLDER}/ (no `..`)"),
                ));
            };
            let rest: std::path::PathBuf = rest.components().collect();
            out.push(format!("{CACHE_PLACEHOLDER}/{}", rest.display()));
            continue;
        }
        if text.contains(CACHE_PLACEHOLDER) {
            return Err(fields.err(
                &field,
                format!("{CACHE_PLACEHOLDER} may only start the path, as in \"{CACHE_PLACEHOLDER}/venv/bin\""),
            ));
        }
        let dir = fields.existing_dir(&field, &text)?;
        let prefix = dir.parent().unwrap_or(&dir);
        let inside = |what: &str, path: &Path| {
            fields.err(
                &field,
                format!("{} is inside {what} {}", dir.display(), path.display()),
            )
        };
        let holds = |what: &str, path: &Path| {
            fields.err(
                &field,
                format!(
                    "its prefix {} (granted with it) holds {what} {}",
                    prefix.display(),
                    path.display()
                ),
            )
        };
        if dir.starts_with(confined.source) {
            return Err(inside("source", confined.source));
        }
        if prefix == Path::new("/") {
            return Err(fields.err(
                &field,
                format!("{} has no prefix to grant but `/`", dir.display()),
            ));
        }
        if confined.source.starts_with(prefix) {
            return Err(holds("source", confined.source));
        }
        if let Some(hidden) = confined.acceptance {
            if dir.starts_with(hidden) {
                return Err(inside("acceptance.dir", hidden));
            }
            if hidden.starts_with(prefix) {
                return Err(holds("the hidden tests", hidden));
            }
        }
        if let Some(oracle) = confined.oracle
            && oracle.starts_with(prefix)
        {
            return Err(holds("the oracle", oracle));
        }
        let Some(text) = dir.to_str() else {
            return Err(fields.err(&field, format!("{} is not a UTF-8 path", dir.display())));
        };
        out.push(text.to_string());
    }
    Ok(out)
}
