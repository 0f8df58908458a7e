//! Splitting raw log bytes into verified records. Pure: no I/O, so readers,
//! writers and followers share exactly one definition of "whole", "torn" and
//! "corrupt".

use rayon::prelude::*;

use super::record::DecodeError;
use crate::protocol::Record;

/// Below this many lines decoding stays on the calling thread.
const PARALLEL_THRESHOLD: usize = 4096;

/// The verified prefix of a log, plus what follows it if it is torn.
#[derive(Debug, Default)]
pub struct Scan {
    pub records: Vec<Record>,
    /// Offset just past the last complete, valid line (relative to the scanned bytes).
    pub good_len: u64,
    /// Bytes after the last newline: a record whose write was cut short.
    pub torn: Option<TornTail>,
}

/// An unterminated fragment at the end of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// 1-based line number of the fragment.
    pub line: u64,
    /// Offset where it starts, relative to the scanned bytes.
    pub offset: u64,
    pub bytes: u64,
}

/// A complete line that is not a valid record, or that breaks `seq` order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct Corruption {
    pub line: u64,
    pub reason: CorruptReason,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorruptReason {
    #[error("{0}")]
    Decode(#[from] DecodeError),
    #[error("seq {seq} does not follow seq {previous}")]
    SeqOrder { seq: u64, previous: u64 },
    /// Writers number records one by one, so a gap means records were
    /// removed (by hand, or by a broken copy).
    #[error("seq {seq} follows seq {previous}: {} missing before this line", missing_records(.seq - .previous - 1))]
    SeqGap { seq: u64, previous: u64 },
    #[error("empty line")]
    Empty,
}

/// Scans `bytes`, whose first line is line `first_line` and whose records must
/// all have a `seq` greater than `last_seq`.
pub fn scan(bytes: &[u8], first_line: u64, last_seq: u64) -> Result<Scan, Corruption> {
    let complete_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines: Vec<&[u8]> = if complete_len == 0 {
        Vec::new()
    } else {
        bytes[..complete_len - 1].split(|&b| b == b'\n').collect()
    };
    let decode = |line: &&[u8]| -> Result<Record, CorruptReason> {
        if line.is_empty() {
            return Err(CorruptReason::Empty);
        }
        Ok(Record::decode(line)?)
    };
    let decoded: Vec<Result<Record, CorruptReason>> = if lines.len() >= PARALLEL_THRESHOLD {
        lines.par_iter().map(decode).collect()
    } else {
        lines.iter().map(decode).collect()
    };

    let mut records = Vec::with_capacity(decoded.len());
    let mut previous = last_seq;
    for (i, result) in decoded.into_iter().enumerate() {
        let line = first_line + i as u64;
        let record = result.map_err(|reason| Corruption { line, reason })?;
        if record.seq <= previous {
            return Err(Corruption {
                line,
                reason: CorruptReason::SeqOrder {
                    seq: record.seq,
                    previous,
                },
            });
        }
        if record.seq > previous + 1 {
            return Err(Corruption {
                line,
                reason: CorruptReason::SeqGap {
                    seq: record.seq,
                    previous,
                },
            });
        }
        previous = record.seq;
        records.push(record);
    }

    let torn = (complete_len < bytes.len()).then(|| TornTail {
        line: first_line + lines.len() as u64,
        offset: complete_len as u64,
        bytes: (bytes.len() - complete_len) as u64,
    });
    Ok(Scan {
        records,
        good_len: complete_len as u64,
        torn,
    })
}

/// "1 record is" or "N records are", for the gap of a `SeqGap`.
fn missing_records(n: u64) -> String {
    let verb = if n == 1 { "is" } else { "are" };
    format!("{} {verb}", crate::words::count(n as usize, "record"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Event;

    fn line(seq: u64) -> Vec<u8> {
        Record {
            seq,
            ts_ms: 1,
            job: Some(format!("job{seq}")),
            attempt: None,
            event: Event::bare_enqueued(2),
        }
        .encode()
    }

    fn log(seqs: &[u64]) -> Vec<u8> {
        seqs.iter().flat_map(|&s| line(s)).collect()
    }

    #[test]
    fn whole_log() {
        let bytes = log(&[1, 2, 3]);
        let scan = scan(&bytes, 1, 0).unwrap();
        assert_eq!(scan.records.len(), 3);
        assert_eq!(scan.good_len, bytes.len() as u64);
        assert_eq!(scan.torn, None);
    }

    #[test]
    fn empty_log() {
        let scan = scan(b"", 1, 0).unwrap();
        assert!(scan.records.is_empty());
        assert_eq!(scan.torn, None);
    }

    #[test]
    fn torn_tail_is_reported_not_fatal() {
        let mut bytes = log(&[1, 2]);
        let whole = bytes.len();
        bytes.extend_from_slice(&line(3)[..20]);
        let scan = scan(&bytes, 1, 0).unwrap();
        assert_eq!(scan.records.len(), 2);
        assert_eq!(scan.good_len, whole as u64);
        assert_eq!(
            scan.torn,
            Some(TornTail {
                line: 3,
                offset: whole as u64,
                bytes: 20
            })
        );
    }

    #[test]
    fn middle_corruption_names_the_line() {
        let mut bytes = log(&[1, 2, 3]);
        let second = line(1).len() + 30;
        bytes[second] ^= 0x20;
        let err = scan(&bytes, 1, 0).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(matches!(
            err.reason,
            CorruptReason::Decode(DecodeError::Checksum { .. })
        ));
    }

    #[test]
    fn seq_must_increase_one_by_one() {
        let bytes = log(&[1, 2, 2]);
        let err = scan(&bytes, 1, 0).unwrap_err();
        assert_eq!(err.line, 3);
        assert_eq!(
            err.reason,
            CorruptReason::SeqOrder {
                seq: 2,
                previous: 2
            }
        );
        // A record removed from the middle leaves a gap.
        let err = scan(&log(&[1, 2, 4]), 1, 0).unwrap_err();
        assert_eq!(err.line, 3);
        assert_eq!(
            err.reason,
            CorruptReason::SeqGap {
                seq: 4,
                previous: 2
            }
        );
        assert!(err.to_string().contains("1 record is missing"));
        // Continuing a scan: the first new record must follow the last known seq.
        let err = scan(&log(&[5]), 10, 5).unwrap_err();
        assert_eq!(err.line, 10);
    }

    #[test]
    fn empty_line_is_corruption() {
        let mut bytes = log(&[1]);
        bytes.push(b'\n');
        bytes.extend(line(2));
        assert_eq!(scan(&bytes, 1, 0).unwrap_err().reason, CorruptReason::Empty);
    }

    #[test]
    fn parallel_path_matches_serial() {
        let seqs: Vec<u64> = (1..=PARALLEL_THRESHOLD as u64 + 10).collect();
        let scan = scan(&log(&seqs), 1, 0).unwrap();
        assert_eq!(scan.records.len(), seqs.len());
        assert!(scan.records.windows(2).all(|w| w[0].seq < w[1].seq));
    }
}
