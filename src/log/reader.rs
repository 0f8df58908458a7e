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
    /// Records taken from the writers' checkpoint, not read again (their
    /// checksums unchecked by this reader); 0 when every record was read.
    pub checkpointed: u64,
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
const CHUNK: usize = 2 << 20;

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
    let corrupt = |corruption| LogError::Corrupt {
        path: path.to_path_buf(),
        corruption,
    };
    let mut anomalies = Vec::new();
    let (mut events, mut last_seq) = (covered.events, covered.last_seq);
    let (mut at, mut torn) = (covered.len, None);
    while at < len {
        let bytes = window(&file, at, len).map_err(LogError::io("read", path))?;
        let chunk = scan(&bytes, events + 1, last_seq).map_err(corrupt)?;
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
                offset: t.offset + at,
                ..t
            });
        }
        at += bytes.len() as u64;
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
        checkpointed: covered.events,
    })
}

/// The bytes of the log open as `file` from `at` (the start of a line)
/// that are read, decoded and folded at once: about [`CHUNK`] of them,
/// ending just after a newline, or at `len`, the end of the log (a torn
/// tail can only be in the last window).
pub(super) fn window(file: &File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut want = CHUNK as u64;
    loop {
        let end = at.saturating_add(want).min(len);
        let mut bytes = vec![0; usize::try_from(end.saturating_sub(at)).unwrap_or(usize::MAX)];
        file.read_exact_at(&mut bytes, at)?;
        if end == len {
            return Ok(bytes);
        }
        if let Some(i) = bytes.iter().rposition(|&b| b == b'\n') {
            bytes.truncate(i + 1);
            return Ok(bytes);
        }
        // One line longer than a window: read on to its end.
        want = want.saturating_mul(2);
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
    fn windows_end_after_a_newline_and_cover_everything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.log");
        let mut bytes: Vec<u8> = (0..(CHUNK / 10 + 5))
            .flat_map(|_| b"123456789\n".to_vec())
            .collect();
        // A line longer than a window, then a torn tail.
        bytes.extend(std::iter::repeat_n(b'x', CHUNK * 2 + 3));
        bytes.extend_from_slice(b"\nshort\ntorn");
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        let len = bytes.len() as u64;
        let small = window(&file, len - 10, len).unwrap();
        assert_eq!(small, b"short\ntorn", "the end of a log is one window");
        let mut at = 0;
        let mut windows = 0;
        while at < len {
            let got = window(&file, at, len).unwrap();
            assert!(!got.is_empty());
            assert_eq!(got, bytes[at as usize..at as usize + got.len()]);
            at += got.len() as u64;
            assert!(at == len || got.ends_with(b"\n"));
            windows += 1;
        }
        assert_eq!(at, len);
        assert!(windows >= 3, "{windows} windows");
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
