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
    /// Every error of one file, in file order (at least two), one per line.
    #[error("{}", lines(.0))]
    Several(Vec<ManifestError>),
}

fn lines(errors: &[ManifestError]) -> String {
    errors
        .iter()
        .map(ManifestError::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl ManifestError {
    /// The dotted field the error is about, if any (`limits.wall_time`; the
    /// first one's, for several).
    pub fn field(&self) -> Option<&str> {
        match self {
            ManifestError::Field { field, .. } => Some(field),
            ManifestError::Several(errors) => errors.first().and_then(ManifestError::field),
            _ => None,
        }
    }

    /// The errors of a file in file order (by line and column, the whole
    /// file first), as one error: the only one, or [`ManifestError::Several`].
    /// `None` when there are none.
    pub fn all(mut errors: Vec<ManifestError>) -> Option<ManifestError> {
        errors.sort_by_key(|e| e.place());
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(ManifestError::Several(errors)),
        }
    }

    /// Each single error: this one, or each of several.
    pub fn each(&self) -> Vec<&ManifestError> {
        match self {
            ManifestError::Several(errors) => errors.iter().flat_map(ManifestError::each).collect(),
            other => vec![other],
        }
    }

    /// `(line, column)` for sorting; 0 for the whole file.
    fn place(&self) -> (usize, usize) {
        match self {
            ManifestError::Syntax { at, .. } | ManifestError::Field { at, .. } => {
                (at.line, at.column)
            }
            ManifestError::Several(errors) => errors.first().map_or((0, 0), ManifestError::place),
            ManifestError::Read { .. } | ManifestError::Snapshot(_) => (0, 0),
        }
    }
}
