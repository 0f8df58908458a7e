//! Tailing a log from an offset, for runners that must notice what other
//! processes append (a cancel) without taking the writer lock.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::error::LogError;
use super::scan::scan;
use crate::protocol::Record;

/// Reads records appended after a known offset.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    file: File,
    offset: u64,
    next_line: u64,
    last_seq: u64,
}

impl Follower {
    /// Follows `path` from `offset`, where the next line is `next_line` and
    /// the last record seen had `last_seq`.
    pub fn new(
        path: &Path,
        offset: u64,
        next_line: u64,
        last_seq: u64,
    ) -> Result<Follower, LogError> {
        let file = File::open(path).map_err(LogError::io("open", path))?;
        Ok(Follower {
            path: path.to_path_buf(),
            file,
            offset,
            next_line,
            last_seq,
        })
    }

    /// Returns complete records appended since the last call. A line still
    /// being written is left for the next call.
    pub fn poll(&mut self) -> Result<Vec<Record>, LogError> {
        let len = self
            .file
            .metadata()
            .map_err(LogError::io("stat", &self.path))?
            .len();
        if len <= self.offset {
            return Ok(Vec::new());
        }
        let mut bytes = vec![0; (len - self.offset) as usize];
        self.file
            .read_exact_at(&mut bytes, self.offset)
            .map_err(LogError::io("read", &self.path))?;
        let scanned = scan(&bytes, self.next_line, self.last_seq).map_err(|corruption| {
            LogError::Corrupt {
                path: self.path.clone(),
                corruption,
            }
        })?;
        self.offset += scanned.good_len;
        self.next_line += scanned.records.len() as u64;
        if let Some(last) = scanned.records.last() {
            self.last_seq = last.seq;
        }
        Ok(scanned.records)
    }
}
