//! Checks for single fields, each failing with the field's location:
//! durations, sizes, argv lists, globs, environment names and paths
//! relative to the file being read.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::error::{Location, ManifestError};
use super::source_map::SourceMap;
use crate::protocol::units::{ByteSize, parse_duration, parse_size};

/// Variables the runtime sets or clears itself; a manifest may not set them.
const RESERVED_ENV: &[&str] = &[
    "PATH", "HOME", "TMPDIR", "TMP", "TEMP", "PWD", "OLDPWD", "SHELL", "USER", "LOGNAME", "IFS",
    "ENV", "BASH_ENV", "CDPATH",
];

/// Prefixes of variables that change how every program loads or runs.
const RESERVED_ENV_PREFIXES: &[&str] = &["LD_", "DYLD_", "AGENT_RUNTIME_"];

/// The file being checked: its display path, its positions and the
/// directory relative paths are resolved against.
pub(super) struct Fields<'a> {
    pub map: &'a SourceMap<'a>,
    pub base_dir: PathBuf,
    pub(super) seen: std::collections::BTreeMap<String, Location>,
}

impl<'a> Fields<'a> {
    pub(super) fn new(map: &'a SourceMap<'a>, file: &Path) -> Result<Fields<'a>, ManifestError> {
        let absolute = std::path::absolute(file).map_err(|source| ManifestError::Read {
            path: file.to_path_buf(),
            source,
        })?;
        let base_dir = absolute
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        Ok(Fields {
            map,
            base_dir,
            seen: Default::default(),
        })
    }

    /// An error about `field`, at its value.
    pub(super) fn err(&self, field: &str, message: impl Into<String>) -> ManifestError {
        ManifestError::Field {
            at: self.map.locate(field),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// An error about `field`'s key (for keys that must not be there).
    pub(super) fn key_err(&self, field: &str, message: impl Into<String>) -> ManifestError {
        ManifestError::Field {
            at: self.map.locate_key(field),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// Remembers where `field` is, for checks made after loading.
    pub(super) fn remember(&mut self, field: &str) {
        let at = self.map.locate(field);
        self.seen.insert(field.to_string(), at);
    }

    pub(super) fn required<T>(&self, field: &str, value: Option<T>) -> Result<T, ManifestError> {
        value.ok_or_else(|| self.err(field, "required key is missing"))
    }

    pub(super) fn duration(
        &self,
        field: &str,
        value: Option<&toml::Value>,
        default: Duration,
    ) -> Result<Duration, ManifestError> {
        let Some(value) = value else {
            return Ok(default);
        };
        let toml::Value::String(text) = value else {
            return Err(self.err(
                field,
                format!(
                    "expected a duration string such as \"90s\", \"15m\" or \"1h\", found {}",
                    value.type_str()
                ),
            ));
        };
        let duration = parse_duration(text).map_err(|e| self.err(field, e.to_string()))?;
        if duration.is_zero() {
            return Err(self.err(field, "must be greater than zero"));
        }
        Ok(duration)
    }

    pub(super) fn size(
        &self,
        field: &str,
        value: Option<&toml::Value>,
        default: ByteSize,
    ) -> Result<ByteSize, ManifestError> {
        let size = match value {
            None => return Ok(default),
            Some(toml::Value::Integer(n)) => u64::try_from(*n)
                .map(ByteSize)
                .map_err(|_| self.err(field, format!("invalid size {n} (must not be negative)")))?,
            Some(toml::Value::String(text)) => {
                parse_size(text).map_err(|e| self.err(field, e.to_string()))?
            }
            Some(other) => {
                return Err(self.err(
                    field,
                    format!(
                        "expected a size such as 512, \"16KiB\" or \"1MiB\", found {}",
                        other.type_str()
                    ),
                ));
            }
        };
        if size.bytes() == 0 {
            return Err(self.err(field, "must be greater than zero"));
        }
        Ok(size)
    }

    /// At least 1.
    pub(super) fn positive<T>(
        &self,
        field: &str,
        value: Option<T>,
        default: T,
    ) -> Result<T, ManifestError>
    where
        T: Copy + PartialEq + From<u8>,
    {
        let value = value.unwrap_or(default);
        if value == T::from(0) {
            return Err(self.err(field, "must be at least 1"));
        }
        Ok(value)
    }

    /// A program and its arguments: non-empty, program not empty.
    pub(super) fn argv(
        &self,
        field: &str,
        value: Option<Vec<String>>,
    ) -> Result<Vec<String>, ManifestError> {
        let argv = self.required(field, value)?;
        match argv.first() {
            None => Err(self.err(field, "must name a program: e.g. [\"cargo\", \"test\"]")),
            Some(program) if program.trim().is_empty() => {
                Err(self.err(&format!("{field}[0]"), "program name is empty"))
            }
            Some(_) => Ok(argv),
        }
    }

    /// A non-empty list of globs that compile.
    pub(super) fn globs(
        &self,
        field: &str,
        value: Option<Vec<String>>,
    ) -> Result<Vec<String>, ManifestError> {
        let globs = self.required(field, value)?;
        if globs.is_empty() {
            return Err(self.err(field, "must list at least one glob"));
        }
        for (index, glob) in globs.iter().enumerate() {
            let element = format!("{field}[{index}]");
            if glob.trim().is_empty() {
                return Err(self.err(&element, "glob is empty"));
            }
            if glob.starts_with('/') || glob.split('/').any(|part| part == "..") {
                return Err(self.err(
                    &element,
                    format!("{glob:?} must be relative to the workspace, without \"..\""),
                ));
            }
            globset::Glob::new(glob)
                .map_err(|e| self.err(&element, format!("invalid glob {glob:?}: {}", e.kind())))?;
        }
        Ok(globs)
    }

    /// Command rules: whitespace-separated glob tokens; the first names a
    /// program, never a path.
    pub(super) fn allow_rules(
        &self,
        value: Option<Vec<String>>,
    ) -> Result<Vec<String>, ManifestError> {
        let rules = self.required("allow", value)?;
        for (index, rule) in rules.iter().enumerate() {
            let element = format!("allow[{index}]");
            let Some(program) = rule.split_whitespace().next() else {
                return Err(self.err(&element, "rule is empty"));
            };
            if program.contains('/') {
                return Err(self.err(
                    &element,
                    format!("rule {rule:?} must start with a program name, not a path"),
                ));
            }
            for token in rule.split_whitespace() {
                globset::Glob::new(token).map_err(|e| {
                    self.err(
                        &element,
                        format!("invalid glob {token:?} in rule {rule:?}: {}", e.kind()),
                    )
                })?;
            }
        }
        Ok(rules)
    }

    /// A variable name a manifest may set: `[A-Za-z_][A-Za-z0-9_]*`, not one
    /// the runtime controls.
    pub(super) fn env_name(&self, field: &str, name: &str) -> Result<(), ManifestError> {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(self.key_err(
                field,
                format!("{name:?} is not a variable name (letters, digits and '_')"),
            ));
        }
        if RESERVED_ENV.contains(&name) || RESERVED_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
        {
            return Err(self.key_err(
                field,
                format!("{name} is controlled by the runtime and cannot be set by a job"),
            ));
        }
        Ok(())
    }

    /// `text` resolved against the file's directory, without `.` or `..`.
    pub(super) fn path(&self, text: &str) -> PathBuf {
        normalize(&self.base_dir.join(text))
    }

    /// A path that must be an existing directory; returned canonical.
    pub(super) fn existing_dir(&self, field: &str, text: &str) -> Result<PathBuf, ManifestError> {
        let path = self.path(text);
        let canonical = path
            .canonicalize()
            .map_err(|e| self.err(field, format!("{} does not exist: {e}", path.display())))?;
        if !canonical.is_dir() {
            return Err(self.err(field, format!("{} is not a directory", path.display())));
        }
        Ok(canonical)
    }

    /// A path that must be an existing file; returned canonical.
    pub(super) fn existing_file(&self, field: &str, text: &str) -> Result<PathBuf, ManifestError> {
        let path = self.path(text);
        let canonical = path
            .canonicalize()
            .map_err(|e| self.err(field, format!("{} does not exist: {e}", path.display())))?;
        if !canonical.is_file() {
            return Err(self.err(field, format!("{} is not a file", path.display())));
        }
        Ok(canonical)
    }
}

/// Removes `.` and resolves `..` without touching the filesystem.
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `/..` is `/`; a relative path keeps its leading `..`.
                if !out.pop() && !out.has_root() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_lexically() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(normalize(Path::new("/a/../../b")), PathBuf::from("/b"));
    }
}
