//! `check --write-flaky`: the tests a check found flaky, written into each
//! job's manifest as `[acceptance] flaky = [...]` (merged with the names
//! already there, sorted), in place: the file's comments, order and
//! layout kept. A manifest without `[acceptance]` has no inventory to
//! leave tests out of, and is left alone.

use std::path::Path;

/// Why a manifest could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteFlakyError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", .path.display())]
    Toml {
        path: std::path::PathBuf,
        #[source]
        source: toml_edit::TomlError,
    },
    #[error(transparent)]
    Write(#[from] crate::report::ReportError),
}

/// `text` with `flaky` merged into `[acceptance] flaky`; `None` when it
/// names them all already or has no `[acceptance]`.
pub(crate) fn with_flaky(
    text: &str,
    flaky: &[String],
) -> Result<Option<String>, toml_edit::TomlError> {
    let mut doc: toml_edit::DocumentMut = text.parse()?;
    let Some(acceptance) = doc
        .get_mut("acceptance")
        .and_then(toml_edit::Item::as_table_like_mut)
    else {
        return Ok(None);
    };
    let mut names: Vec<String> = acceptance
        .get("flaky")
        .and_then(toml_edit::Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let before = names.len();
    for name in flaky {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    if names.len() == before {
        return Ok(None);
    }
    names.sort();
    let array: toml_edit::Array = names.iter().map(String::as_str).collect();
    acceptance.insert("flaky", toml_edit::value(array));
    Ok(Some(doc.to_string()))
}

/// Writes `flaky` into the manifest at `path`; whether it changed.
pub(crate) fn write_flaky(path: &Path, flaky: &[String]) -> Result<bool, WriteFlakyError> {
    let io = |source| WriteFlakyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let text = std::fs::read_to_string(path).map_err(io)?;
    let Some(updated) = with_flaky(&text, flaky).map_err(|source| WriteFlakyError::Toml {
        path: path.to_path_buf(),
        source,
    })?
    else {
        return Ok(false);
    };
    // Whole or not at all, as the reports are written.
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::report::write_atomic(path, dir, updated.as_bytes())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flaky_names_merge_into_acceptance_keeping_the_file_as_it_was() {
        let text = "# a job\nprompt = \"Fix it.\"\n\n[acceptance]\n# hidden tests\ndir = \"hidden\"\ncommand = [\"pytest\"]\n\n[limits]\nattempts = 1\n";
        let once = with_flaky(text, &["t::b".into(), "t::a".into()])
            .unwrap()
            .unwrap();
        assert!(
            once.starts_with("# a job\nprompt = \"Fix it.\"\n\n[acceptance]\n# hidden tests\n"),
            "{once}"
        );
        assert!(once.contains("flaky = [\"t::a\", \"t::b\"]"), "{once}");
        assert!(once.contains("[limits]\nattempts = 1"), "{once}");
        let parsed: toml::Value = toml::from_str(&once).unwrap();
        assert_eq!(parsed["acceptance"]["flaky"].as_array().unwrap().len(), 2);
        // Merged, and nothing to do when all are named.
        let twice = with_flaky(&once, &["t::c".into(), "t::a".into()])
            .unwrap()
            .unwrap();
        assert!(
            twice.contains("flaky = [\"t::a\", \"t::b\", \"t::c\"]"),
            "{twice}"
        );
        assert_eq!(with_flaky(&twice, &["t::b".into()]).unwrap(), None);
        // No [acceptance]: nothing to leave out of.
        assert_eq!(with_flaky("prompt = \"x\"\n", &["t".into()]).unwrap(), None);
        assert!(with_flaky("[acceptance\n", &["t".into()]).is_err());
    }
}
