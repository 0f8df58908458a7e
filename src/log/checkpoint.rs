//! The writers' checkpoint of a fold: the fold of a prefix of the log,
//! kept beside it (`state.ckpt` for the state reducer) so a reader folds
//! only what follows the prefix.
//!
//! A checkpoint is a cache and is never trusted over the log. It is used
//! only when its header is of this format and this runtime's version, its
//! table of sections ends the file and its checksum holds, the log is at
//! least as long as the prefix it covers, and the last line of that prefix
//! is still there, byte for byte (its offset and CRC are in the header).
//! Anything else, and the reader folds the whole log. Writers replace it
//! atomically (a temporary file, then a rename) under the log's lock, so
//! it always matches a prefix the log held; a torn one fails those checks.
//! Readers never write it.
//!
//! The file is one JSON header line, then the fold's sections
//! ([`Fold::save`]: its own encoding of itself, in parts it can read one
//! at a time), then a table of where each section is, its length and its
//! CRC32. A section is checked against its CRC when it is read, so a
//! reader that needs one section reads only that one.

use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fold::Fold;
use super::record::FORMAT_VERSION;

/// Bumped whenever the header's meaning changes.
const FORMAT: u32 = 1;

/// The longest last line a checkpoint is checked against; past it, the
/// checkpoint is not used (a manifest snapshot can make a long line, but
/// not this long).
const MAX_LAST_LINE: u64 = 64 << 20;

/// The prefix of the log a fold covers, and its last line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Covered {
    /// Bytes of the log.
    pub len: u64,
    /// Records (lines) in those bytes.
    pub events: u64,
    /// `seq` of the last of them.
    pub last_seq: u64,
    /// Offset of the last line, and the CRC32 of its bytes (newline
    /// included).
    pub last_start: u64,
    pub last_crc: u32,
}

impl Covered {
    /// The prefix after one more line of `line` bytes at its end, with
    /// `seq`.
    pub(super) fn push(&mut self, line: &[u8], seq: u64) {
        self.last_start = self.len;
        self.last_crc = crc32fast::hash(line);
        self.len += line.len() as u64;
        self.events += 1;
        self.last_seq = seq;
    }

    /// The prefix after `bytes`, `records` whole lines ending in `last_seq`,
    /// are folded in.
    pub(super) fn extend(&mut self, bytes: &[u8], records: u64, last_seq: u64) {
        if records == 0 || bytes.is_empty() {
            return;
        }
        let body = &bytes[..bytes.len() - 1];
        let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.last_start = self.len + start as u64;
        self.last_crc = crc32fast::hash(&bytes[start..]);
        self.len += bytes.len() as u64;
        self.events += records;
        self.last_seq = last_seq;
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: u32,
    runtime: String,
    log_format: u32,
    /// The fold's own version of its encoding ([`Fold::CHECKPOINT_FORMAT`]).
    fold_format: u32,
    covered: Covered,
    /// Sections, and the table after them: its offset after the header
    /// and its CRC32.
    sections: u64,
    table_at: u64,
    table_crc: u32,
}

/// One section's place in the body: offset (after the header), length,
/// CRC32.
#[derive(Debug, Clone, Copy)]
struct Entry {
    offset: u64,
    len: u64,
    crc: u32,
}

const ENTRY_LEN: usize = 20;

impl Entry {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.crc.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Option<Entry> {
        let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
        Some(Entry {
            offset: u64_at(0)?,
            len: u64_at(8)?,
            crc: u32::from_le_bytes(bytes.get(16..20)?.try_into().ok()?),
        })
    }
}

/// Where a fold writes its sections. Sections written apart (in
/// parallel) are kept in the parts they came in, not copied into one
/// buffer: a checkpoint of a large fold is held once while it is written.
#[derive(Debug, Default)]
pub struct CheckpointWriter {
    /// Finished parts, in order, then the one being written.
    parts: Vec<Vec<u8>>,
    bytes: Vec<u8>,
    /// Bytes in `parts`.
    before: u64,
    table: Vec<Entry>,
}

impl CheckpointWriter {
    /// Adds a section: the bytes `write` appends to the buffer it is given.
    pub fn section<E>(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = self.bytes.len();
        write(&mut self.bytes)?;
        self.table.push(Entry {
            offset: self.before + start as u64,
            len: (self.bytes.len() - start) as u64,
            crc: crc32fast::hash(&self.bytes[start..]),
        });
        Ok(())
    }

    /// Adds the sections of `other` after these, in their order (for
    /// sections written in parallel).
    pub fn append(&mut self, other: CheckpointWriter) {
        let base = self.len();
        self.before = base + other.len();
        let mine = std::mem::take(&mut self.bytes);
        self.parts.extend(
            std::iter::once(mine)
                .chain(other.parts)
                .chain(std::iter::once(other.bytes))
                .filter(|part| !part.is_empty()),
        );
        self.table.extend(other.table.into_iter().map(|e| Entry {
            offset: e.offset + base,
            ..e
        }));
    }

    /// Bytes of every section.
    fn len(&self) -> u64 {
        self.before + self.bytes.len() as u64
    }

    /// Writes every section's bytes, in order.
    fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        for part in self.parts.iter().chain(std::iter::once(&self.bytes)) {
            out.write_all(part)?;
        }
        Ok(())
    }
}

/// A checkpoint's sections as a fold reads them back: one at a time, or
/// all at once.
#[derive(Debug)]
pub struct CheckpointBody {
    file: File,
    /// Offset of the body in the file (just after the header).
    start: u64,
    table: Vec<Entry>,
}

impl CheckpointBody {
    pub fn sections(&self) -> usize {
        self.table.len()
    }

    /// Section `i`, when its bytes are whole.
    pub fn section(&self, i: usize) -> Option<Vec<u8>> {
        let entry = self.table.get(i)?;
        let mut bytes = vec![0; usize::try_from(entry.len).ok()?];
        self.file
            .read_exact_at(&mut bytes, self.start + entry.offset)
            .ok()?;
        (crc32fast::hash(&bytes) == entry.crc).then_some(bytes)
    }

    /// Every section, read at once.
    pub fn all(&self) -> Option<AllSections<'_>> {
        let len = self
            .table
            .iter()
            .map(|e| e.offset + e.len)
            .max()
            .unwrap_or(0);
        let mut bytes = vec![0; usize::try_from(len).ok()?];
        self.file.read_exact_at(&mut bytes, self.start).ok()?;
        Some(AllSections {
            bytes,
            table: &self.table,
        })
    }
}

/// Every section of a checkpoint, in memory.
#[derive(Debug)]
pub struct AllSections<'a> {
    bytes: Vec<u8>,
    table: &'a [Entry],
}

impl AllSections<'_> {
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Section `i`, when its bytes are whole.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let entry = self.table.get(i)?;
        let start = usize::try_from(entry.offset).ok()?;
        let bytes = self
            .bytes
            .get(start..start.checked_add(usize::try_from(entry.len).ok()?)?)?;
        (crc32fast::hash(bytes) == entry.crc).then_some(bytes)
    }
}

/// Where fold `F` keeps its checkpoint for the log at `log`, if it keeps one.
pub(super) fn path_of<F: Fold>(log: &Path) -> Option<PathBuf> {
    F::CHECKPOINT.map(|name| log.with_file_name(name))
}

/// The fold and prefix of `F`'s checkpoint for the log open as `file`,
/// when it is present and still holds (see the module's words); `None`
/// otherwise, for the caller to fold the whole log.
pub(super) fn load<F: Fold>(log: &Path, file: &File) -> Option<(F, Covered)> {
    let (ckpt, header_len, header) = open::<F>(log, file)?;
    let start = header_len;
    let count = usize::try_from(header.sections).ok()?;
    let table_len = count.checked_mul(ENTRY_LEN)?;
    // The table ends the file: a header that says otherwise (or a file cut
    // short) is not read further, and nothing is sized from it.
    let expected = start
        .checked_add(header.table_at)?
        .checked_add(table_len as u64)?;
    if ckpt.metadata().ok()?.len() != expected {
        return None;
    }
    let mut table = vec![0; table_len];
    ckpt.read_exact_at(&mut table, start + header.table_at)
        .ok()?;
    if crc32fast::hash(&table) != header.table_crc {
        return None;
    }
    let table = table
        .chunks_exact(ENTRY_LEN)
        .map(Entry::decode)
        .collect::<Option<Vec<_>>>()?;
    if table
        .iter()
        .any(|e| e.offset.saturating_add(e.len) > header.table_at)
    {
        return None;
    }
    let body = CheckpointBody {
        file: ckpt,
        start,
        table,
    };
    Some((F::restore(body)?, header.covered))
}

/// The records covered by `F`'s checkpoint for the log open as `file`,
/// when its header still holds (its sections are not read).
pub(super) fn covers<F: Fold>(log: &Path, file: &File) -> Option<u64> {
    Some(open::<F>(log, file)?.2.covered.events)
}

/// The longest header line read.
const MAX_HEADER: u64 = 4096;

/// `F`'s checkpoint file, the length of its header line, and the header,
/// when the header holds for the log open as `file`.
fn open<F: Fold>(log: &Path, file: &File) -> Option<(File, u64, Header)> {
    let ckpt = File::open(path_of::<F>(log)?).ok()?;
    let mut head = Vec::new();
    std::io::BufReader::new(&ckpt)
        .take(MAX_HEADER)
        .read_until(b'\n', &mut head)
        .ok()?;
    let line = head.strip_suffix(b"\n")?;
    let header = holds::<F>(line, file)?;
    Some((ckpt, head.len() as u64, header))
}

/// `line` as a header, when it is of this format and the prefix it covers
/// is still the log's (its length and its last line).
fn holds<F: Fold>(line: &[u8], file: &File) -> Option<Header> {
    let header: Header = serde_json::from_slice(line).ok()?;
    let covered = header.covered;
    let fits = header.format == FORMAT
        && header.runtime == env!("CARGO_PKG_VERSION")
        && header.log_format == FORMAT_VERSION
        && header.fold_format == F::CHECKPOINT_FORMAT
        && covered.events > 0
        && covered.last_start < covered.len
        && covered.len - covered.last_start <= MAX_LAST_LINE;
    if !fits || file.metadata().ok()?.len() < covered.len {
        return None;
    }
    let mut last = vec![0; (covered.len - covered.last_start) as usize];
    file.read_exact_at(&mut last, covered.last_start).ok()?;
    let one_line = last.iter().position(|&b| b == b'\n') == Some(last.len() - 1);
    if !one_line || crc32fast::hash(&last) != covered.last_crc {
        return None;
    }
    // The line before the last one must end just where the last one starts.
    if covered.last_start > 0 {
        let mut before = [0u8; 1];
        file.read_exact_at(&mut before, covered.last_start - 1)
            .ok()?;
        if before[0] != b'\n' {
            return None;
        }
    }
    Some(header)
}

/// Writes `state`, the fold of the prefix `covered` of the log at `log`,
/// as its checkpoint. The caller holds the log's lock.
pub(super) fn save<F: Fold>(log: &Path, state: &F, covered: &Covered) -> std::io::Result<()> {
    let Some(path) = path_of::<F>(log) else {
        return Ok(());
    };
    let mut sections = CheckpointWriter::default();
    if !state.save(&mut sections) {
        return Ok(());
    }
    let mut table = Vec::with_capacity(sections.table.len() * ENTRY_LEN);
    for entry in &sections.table {
        entry.encode(&mut table);
    }
    let header = Header {
        format: FORMAT,
        runtime: env!("CARGO_PKG_VERSION").to_string(),
        log_format: FORMAT_VERSION,
        fold_format: F::CHECKPOINT_FORMAT,
        covered: *covered,
        sections: sections.table.len() as u64,
        table_at: sections.len(),
        table_crc: crc32fast::hash(&table),
    };
    let mut head = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    head.push(b'\n');
    let dir = path.parent().unwrap_or(Path::new("."));
    // Readable as the log is: by whoever may read the data dir.
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)?;
    let mut out = std::io::BufWriter::new(tmp.as_file_mut());
    out.write_all(&head)?;
    sections.write_to(&mut out)?;
    out.write_all(&table)?;
    out.flush()?;
    drop(out);
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether a writer whose checkpoint covers `saved` records should write
/// a new one now that the log holds `events`: once enough has been added
/// that the cost of writing it (which grows with the fold, so with the
/// log) is spread over as many new records, so appending stays O(1)
/// amortized and a reader folds at most a fraction of the log.
pub(super) fn due(saved: u64, events: u64) -> bool {
    const MIN_NEW: u64 = 64;
    let new = events.saturating_sub(saved);
    new >= MIN_NEW && new >= saved / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_tracks_the_last_line_both_ways() {
        let lines: [&[u8]; 3] = [b"{\"a\":1}\n", b"{\"b\":22}\n", b"{\"c\":333}\n"];
        let mut pushed = Covered::default();
        for (i, line) in lines.iter().enumerate() {
            pushed.push(line, i as u64 + 1);
        }
        let mut extended = Covered::default();
        extended.extend(&lines[..2].concat(), 2, 2);
        extended.extend(lines[2], 1, 3);
        assert_eq!(pushed, extended);
        let mut whole = Covered::default();
        whole.extend(&lines.concat(), 3, 3);
        assert_eq!(pushed, whole);
        assert_eq!(whole.last_start, (lines[0].len() + lines[1].len()) as u64);
        assert_eq!(whole.last_crc, crc32fast::hash(lines[2]));
    }

    #[test]
    fn a_checkpoint_is_due_after_a_fraction_of_new_records() {
        assert!(!due(0, 63));
        assert!(due(0, 64));
        assert!(!due(80_000, 89_000));
        assert!(due(80_000, 90_000));
        assert!(!due(90_000, 90_000));
    }
}
