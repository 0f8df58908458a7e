//! Read-only access to a log. Readers never create, lock, repair or write.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::checkpoint;
use super::error::LogError;
use super::fold::Fold;
use super::scan::{Scan, TornTail, scan};
use crate::protocol::Record;

/// A replayed log as a reader sees it: the fold `F` of its records.
#[derive(Debug)]
pub struct Snapshot<F: Fold> {
    pub path: PathBuf,
    pub state: F,
    /// Events the fold refused (written by something that skipped the checks).
    pub anomalies: Vec<(u64, F::Refusal)>,
    /// The unterminated tail, if the last write was cut short.
    pub torn: Option<TornTail>,
    pub events: u64,
    pub bytes: u64,
}

/// Reads every record of the log at `path` (a torn tail is left out).
pub fn read_records(path: &Path) -> Result<(Vec<Record>, Option<TornTail>), LogError> {
    let bytes = read_bytes(path)?;
    let Scan { records, torn, .. } =
        scan(&bytes, 1, 0).map_err(|corruption| LogError::Corrupt {
            path: path.to_path_buf(),
            corruption,
        })?;
    Ok((records, torn))
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, LogError> {
    std::fs::read(path).map_err(|e| missing_or(path, "read", e))
}

/// A log that is not there is [`LogError::Missing`]; anything else failed
/// to `action` it.
fn missing_or(path: &Path, action: &'static str, e: std::io::Error) -> LogError {
    match e.kind() {
        std::io::ErrorKind::NotFound => LogError::Missing {
            path: path.to_path_buf(),
        },
        _ => LogError::io(action, path)(e),
    }
}

/// Bytes decoded and folded at a time, so a big log never holds all its
/// decoded records in memory at once.
const CHUNK: usize = 8 << 20;

/// Reads the log at `path` and folds it into `F`, starting from the
/// writers' checkpoint of `F` when it still holds (`log/checkpoint.rs`),
/// so only the records after it are read.
pub fn read_snapshot<F: Fold>(path: &Path) -> Result<Snapshot<F>, LogError> {
    read_from(path, true)
}

/// Reads the whole log at `path` and folds every record into `F`,
/// whatever checkpoint there is.
pub fn read_snapshot_full<F: Fold>(path: &Path) -> Result<Snapshot<F>, LogError> {
    read_from(path, false)
}

fn read_from<F: Fold>(path: &Path, checkpoint: bool) -> Result<Snapshot<F>, LogError> {
    let file = File::open(path).map_err(|e| missing_or(path, "open", e))?;
    let (mut state, covered) = checkpoint
        .then(|| checkpoint::load::<F>(path, &file))
        .flatten()
        .unwrap_or_default();
    let len = file.metadata().map_err(LogError::io("stat", path))?.len();
    let mut bytes = vec![0; len.saturating_sub(covered.len) as usize];
    file.read_exact_at(&mut bytes, covered.len)
        .map_err(LogError::io("read", path))?;
    let corrupt = |corruption| LogError::Corrupt {
        path: path.to_path_buf(),
        corruption,
    };
    let mut anomalies = Vec::new();
    let (mut events, mut last_seq) = (covered.events, covered.last_seq);
    let (mut offset, mut torn) = (0usize, None);
    while offset < bytes.len() {
        let end = chunk_end(&bytes, offset);
        let chunk = scan(&bytes[offset..end], events + 1, last_seq).map_err(corrupt)?;
        for record in &chunk.records {
            if let Err(e) = state.apply(record) {
                anomalies.push((record.seq, e));
                state.skip(record);
            }
            last_seq = record.seq;
        }
        events += chunk.records.len() as u64;
        if let Some(t) = chunk.torn {
            torn = Some(TornTail {
                offset: t.offset + covered.len + offset as u64,
                ..t
            });
        }
        offset = end;
    }
    if covered.events > 0 && state.incomplete() {
        return read_from(path, false);
    }
    Ok(Snapshot {
        path: path.to_path_buf(),
        state,
        anomalies,
        torn,
        events,
        bytes: len,
    })
}

/// End of the chunk starting at `offset`: just after a newline about
/// [`CHUNK`] bytes on, or the end of the log.
fn chunk_end(bytes: &[u8], offset: usize) -> usize {
    let limit = (offset + CHUNK).min(bytes.len());
    if limit == bytes.len() {
        return limit;
    }
    match bytes[offset..limit].iter().rposition(|&b| b == b'\n') {
        Some(i) => offset + i + 1,
        None => bytes[limit..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| limit + i + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Event;

    /// Counts what it is given; refuses nothing.
    #[derive(Default)]
    struct Count {
        records: u64,
        last_seq: u64,
    }

    impl Fold for Count {
        type Refusal = std::io::Error;

        fn check(&self, _: &Record) -> Result<(), std::io::Error> {
            Ok(())
        }

        fn apply(&mut self, record: &Record) -> Result<(), std::io::Error> {
            self.records += 1;
            self.last_seq = record.seq;
            Ok(())
        }
    }

    #[test]
    fn chunks_end_after_a_newline_and_cover_everything() {
        let bytes = b"aaaa\nbb\ncccccc\n";
        assert_eq!(chunk_end(bytes, 0), bytes.len(), "a small log is one chunk");
        let big: Vec<u8> = (0..(CHUNK / 10 + 5))
            .flat_map(|_| b"123456789\n".to_vec())
            .collect();
        let mut offset = 0;
        while offset < big.len() {
            let end = chunk_end(&big, offset);
            assert!(end > offset && big[end - 1] == b'\n');
            offset = end;
        }
    }

    #[test]
    fn a_chunked_replay_equals_a_whole_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.log");
        let mut bytes = Vec::new();
        let n = CHUNK / 80 + 1000;
        for seq in 1..=n as u64 {
            let record = Record {
                seq,
                ts_ms: seq,
                job: Some(format!("job-{seq}")),
                attempt: None,
                event: Event::bare_enqueued(1),
            };
            bytes.extend(record.encode());
        }
        bytes.extend_from_slice(b"{\"crc\":\"00");
        std::fs::write(&path, &bytes).unwrap();
        let snapshot = read_snapshot::<Count>(&path).unwrap();
        assert!(bytes.len() > CHUNK, "the test must span chunks");
        assert_eq!(snapshot.events, n as u64);
        assert_eq!(snapshot.state.records, n as u64);
        assert_eq!(snapshot.state.last_seq, n as u64);
        let torn = snapshot.torn.unwrap();
        assert_eq!(torn.line, n as u64 + 1);
        assert_eq!(torn.offset as usize, bytes.len() - 10);
    }
}
