//! One line of the log: the frame (`crc`, `v`, `seq`, `ts`, `job`, `attempt`)
//! around an [`Event`], and its encoding with a CRC32 that covers every byte
//! of the record except the checksum itself.
//!
//! A line looks like
//! `{"crc":"1c291ca3","v":2,"seq":7,"ts":1764410000123,"job":"a","attempt":1,"type":"attempt_started","pid":42}`.
//! The checksum is computed over the same line with the leading
//! `"crc":"........",` removed, i.e. over `{"v":2,...}`, so a reader can verify
//! it without re-serializing anything.

use serde::{Deserialize, Serialize};

use crate::protocol::{Event, Record};

/// The log format version this build writes and the newest it can read.
/// 2: `replaced` numbers the new manifest's attempts after the earlier ones
/// (`attempts_before`) instead of restarting at 1. 3: a model call is its
/// own `model_call` event, and a `decision` carries what was asked alone
/// (a format 2 `decision` carries its call's figures too). Older lines
/// still read, with their meaning.
pub const FORMAT_VERSION: u32 = 3;

/// The fixed prefix of every line, up to the checksum digits.
const CRC_PREFIX: &[u8] = br#"{"crc":""#;
/// Prefix + 8 hex digits + `",`.
const FRAME_LEN: usize = CRC_PREFIX.len() + 8 + 2;

#[derive(Serialize)]
struct WireOut<'a> {
    v: u32,
    seq: u64,
    ts: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    #[serde(flatten)]
    event: &'a Event,
}

/// The frame fields, for lines in another key order than our writer's
/// (see `decode.rs` for the one-pass path); the event is read by a second
/// pass over the same line.
#[derive(Deserialize)]
struct WireHead<'a> {
    v: u32,
    seq: u64,
    ts: u64,
    #[serde(default, borrow)]
    job: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    attempt: Option<u32>,
}

/// Why one complete line could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not valid UTF-8")]
    NotUtf8,
    #[error("not a record frame (expected it to start with {{\"crc\":\"XXXXXXXX\",)")]
    BadFrame,
    #[error("checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    Checksum { stored: u32, computed: u32 },
    #[error(
        "format version {0} is newer than this build reads ({FORMAT_VERSION}); upgrade agent-runtime"
    )]
    NewerVersion(u32),
    #[error("invalid record: {0}")]
    Json(String),
}

impl Record {
    /// Encodes the record as one line, including the trailing newline.
    pub fn encode(&self) -> Vec<u8> {
        let wire = WireOut {
            v: FORMAT_VERSION,
            seq: self.seq,
            ts: self.ts_ms,
            job: self.job.as_deref(),
            attempt: self.attempt,
            event: &self.event,
        };
        // Serializing plain data structs into a Vec cannot fail; fall back to
        // an empty object rather than panicking so the type stays total.
        let body = serde_json::to_vec(&wire).unwrap_or_else(|_| b"{}".to_vec());
        let crc = crc32fast::hash(&body);
        let mut line = Vec::with_capacity(body.len() + FRAME_LEN + 1);
        line.extend_from_slice(CRC_PREFIX);
        line.extend_from_slice(format!("{crc:08x}").as_bytes());
        line.extend_from_slice(b"\",");
        // body starts with '{', which the frame already opened.
        line.extend_from_slice(body.get(1..).unwrap_or_default());
        line.push(b'\n');
        line
    }

    /// Decodes one line (without its newline), verifying the checksum first.
    pub fn decode(line: &[u8]) -> Result<Record, DecodeError> {
        let text = std::str::from_utf8(line).map_err(|_| DecodeError::NotUtf8)?;
        let stored = parse_frame(line).ok_or(DecodeError::BadFrame)?;
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(b"{");
        hasher.update(&line[FRAME_LEN..]);
        let computed = hasher.finalize();
        if computed != stored {
            return Err(DecodeError::Checksum { stored, computed });
        }
        // Our writer's key order decodes in one pass; anything else takes
        // the general two-pass path below.
        if let Ok(d) = super::decode::decode_line(text)
            && d.v <= FORMAT_VERSION
        {
            return Ok(Record {
                seq: d.seq,
                ts_ms: d.ts,
                job: d.job,
                attempt: d.attempt,
                event: d.event,
            });
        }
        let head: WireHead<'_> =
            serde_json::from_str(text).map_err(|e| DecodeError::Json(e.to_string()))?;
        if head.v > FORMAT_VERSION {
            return Err(DecodeError::NewerVersion(head.v));
        }
        let event: Event =
            serde_json::from_str(text).map_err(|e| DecodeError::Json(e.to_string()))?;
        Ok(Record {
            seq: head.seq,
            ts_ms: head.ts,
            job: head.job.map(std::borrow::Cow::into_owned),
            attempt: head.attempt,
            event,
        })
    }
}

/// Returns the stored checksum if the line starts with a well-formed frame.
fn parse_frame(line: &[u8]) -> Option<u32> {
    if line.len() < FRAME_LEN + 1 || !line.starts_with(CRC_PREFIX) {
        return None;
    }
    let hex = &line[CRC_PREFIX.len()..CRC_PREFIX.len() + 8];
    if &line[CRC_PREFIX.len() + 8..FRAME_LEN] != b"\"," {
        return None;
    }
    let hex = std::str::from_utf8(hex).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AttemptFinishedRecord, PatchRecord, PatchRejectedRecord};
    use crate::protocol::{FailureKind, Outcome};

    fn sample() -> Record {
        Record {
            seq: 7,
            ts_ms: 1_764_410_000_123,
            job: Some("demo-task".into()),
            attempt: Some(1),
            event: Event::AttemptFinished(AttemptFinishedRecord {
                outcome: Outcome::Failed,
                failure_kind: Some(FailureKind::VerifyFailed),
                integrity: None,
            }),
        }
    }

    fn strip_newline(mut line: Vec<u8>) -> Vec<u8> {
        assert_eq!(line.pop(), Some(b'\n'));
        line
    }

    #[test]
    fn round_trips_and_is_plain_json() {
        let line = strip_newline(sample().encode());
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["type"], "attempt_finished");
        assert_eq!(value["v"], FORMAT_VERSION);
        assert_eq!(Record::decode(&line).unwrap(), sample());
    }

    #[test]
    fn a_rejected_patch_and_its_failure_kind_on_the_wire() {
        let rejected = Record {
            event: Event::PatchRejected(PatchRejectedRecord {
                reason: "src/a.rs: is a FIFO, not a regular file".into(),
            }),
            ..sample()
        };
        let line = strip_newline(rejected.encode());
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["type"], "patch_rejected");
        assert_eq!(value["reason"], "src/a.rs: is a FIFO, not a regular file");
        assert_eq!(Record::decode(&line).unwrap(), rejected);
        let finished = Record {
            event: Event::AttemptFinished(AttemptFinishedRecord {
                outcome: Outcome::Failed,
                failure_kind: Some(FailureKind::PatchRejected),
                integrity: None,
            }),
            ..sample()
        };
        let line = strip_newline(finished.encode());
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["failure_kind"], "patch_rejected");
        assert_eq!(FailureKind::PatchRejected.as_str(), "patch_rejected");
        assert_eq!(Record::decode(&line).unwrap(), finished);
    }

    #[test]
    fn a_patch_without_a_copy_reads_and_writes_as_before() {
        let patch = |files_hash: Option<&str>, partial| Record {
            event: Event::Patch(PatchRecord {
                bytes: 10,
                files: 1,
                hash: "0123456789abcdef".into(),
                files_hash: files_hash.map(String::from),
                partial,
                integrity: Vec::new(),
            }),
            ..sample()
        };
        // What an older writer wrote: no `files_hash`, no `partial`.
        let old = strip_newline(patch(None, false).encode());
        let value: serde_json::Value = serde_json::from_slice(&old).unwrap();
        assert!(value.get("files_hash").is_none() && value.get("partial").is_none());
        assert_eq!(Record::decode(&old).unwrap(), patch(None, false));
        let new = patch(Some("ab"), true);
        let line = strip_newline(new.encode());
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            (value["files_hash"].as_str(), value["partial"].as_bool()),
            (Some("ab"), Some(true))
        );
        assert_eq!(Record::decode(&line).unwrap(), new);
    }

    #[test]
    fn every_single_byte_flip_is_detected() {
        let line = strip_newline(sample().encode());
        for i in 0..line.len() {
            let mut bad = line.clone();
            bad[i] ^= 0x01;
            assert!(
                Record::decode(&bad).is_err(),
                "flip at byte {i} went unnoticed"
            );
        }
    }

    #[test]
    fn rejects_non_utf8_and_bad_frames() {
        assert_eq!(Record::decode(b"\xff\xfe"), Err(DecodeError::NotUtf8));
        assert_eq!(Record::decode(br#"{"v":1}"#), Err(DecodeError::BadFrame));
    }

    #[test]
    fn newer_versions_are_named() {
        let body = br#"{"v":9,"seq":1,"ts":1,"type":"from_the_future"}"#;
        let crc = crc32fast::hash(body);
        let line = format!(
            r#"{{"crc":"{crc:08x}",{}"#,
            std::str::from_utf8(&body[1..]).unwrap()
        );
        assert_eq!(
            Record::decode(line.as_bytes()),
            Err(DecodeError::NewerVersion(9))
        );
    }
}
