//! Errors from loading manifests and provider files. Each one names the file,
//! the line and column, and the field, so a user can go straight to it.

use std::fmt;
use std::path::PathBuf;

/// A place in a manifest: `file:line:column`, 1-based. A line of 0 means
/// "the whole file" (or a snapshot, which has no lines) and prints the file
/// alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl Location {
    pub fn whole(file: impl Into<PathBuf>) -> Location {
        Location {
            file: file.into(),
            line: 0,
            column: 0,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
        }
    }
}

/// Why a manifest or provider file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML, or not in the shape expected, at a place no
    /// single field owns.
    #[error("{at}: {message}")]
    Syntax { at: Location, message: String },
    /// A field is missing, has the wrong type, or a value that is refused.
    #[error("{at}: {field}: {message}")]
    Field {
        at: Location,
        field: String,
        message: String,
    },
    /// A stored snapshot could not be turned back into a manifest.
    #[error("manifest snapshot: {0}")]
    Snapshot(String),
}

impl ManifestError {
    /// The dotted field the error is about, if any (`limits.wall_time`).
    pub fn field(&self) -> Option<&str> {
        match self {
            ManifestError::Field { field, .. } => Some(field),
            _ => None,
        }
    }
}
