//! Read-only access to a log. Readers never create, lock, repair or write.

use std::path::{Path, PathBuf};

use super::error::LogError;
use super::scan::{Scan, TornTail, scan};
use crate::state::{Illegal, State, replay};

/// A replayed log as a reader sees it.
#[derive(Debug)]
pub struct Snapshot {
    pub path: PathBuf,
    pub state: State,
    /// Events the reducer refused (written by something that skipped the checks).
    pub anomalies: Vec<(u64, Illegal)>,
    /// The unterminated tail, if the last write was cut short.
    pub torn: Option<TornTail>,
    pub events: u64,
    pub bytes: u64,
}

/// Reads every record of the log at `path` (a torn tail is left out).
pub fn read_records(path: &Path) -> Result<(Vec<crate::log::Record>, Option<TornTail>), LogError> {
    let bytes = read_bytes(path)?;
    let Scan { records, torn, .. } =
        scan(&bytes, 1, 0).map_err(|corruption| LogError::Corrupt {
            path: path.to_path_buf(),
            corruption,
        })?;
    Ok((records, torn))
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, LogError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LogError::Missing {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(LogError::io("read", path)(e)),
    }
}

/// Reads and replays the whole log at `path`.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, LogError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LogError::Missing {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(LogError::io("read", path)(e)),
    };
    let Scan { records, torn, .. } =
        scan(&bytes, 1, 0).map_err(|corruption| LogError::Corrupt {
            path: path.to_path_buf(),
            corruption,
        })?;
    let (state, anomalies) = replay(&records);
    Ok(Snapshot {
        path: path.to_path_buf(),
        state,
        anomalies,
        torn,
        events: records.len() as u64,
        bytes: bytes.len() as u64,
    })
}
