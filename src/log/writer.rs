//! The only code that appends to a log.
//!
//! Every append happens inside [`LogWriter::transact`]: take the exclusive OS
//! lock, catch up on whatever other writers appended since we last looked
//! (repairing a torn tail if a writer died mid-record), let the caller check
//! the replayed state and append events, each checked by the writer's
//! [`Fold`] and written with one `write`, then `fsync` if any of them
//! changed a job's state, and release the lock.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::checkpoint::{self, Covered};
use super::error::{AppendError, LogError};
use super::fold::Fold;
use super::reader::window;
use super::scan::{TornTail, scan};
use crate::protocol::LogRepairedRecord;
use crate::protocol::{Event, Record};

/// Non-transition events are synced at least this often.
const GROUP_SYNC_INTERVAL: Duration = Duration::from_millis(500);

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An open log plus the fold `F` of it (the replayed state).
#[derive(Debug)]
pub struct LogWriter<F> {
    path: PathBuf,
    file: File,
    /// The prefix of the log already replayed into `state` (its records are
    /// its lines).
    covered: Covered,
    state: F,
    /// Records covered by the last checkpoint this writer read or wrote.
    saved: u64,
    /// Whether the fold refused a record the log holds: such a fold is
    /// not checkpointed, so readers fold the whole log and see the refusal.
    skipped: bool,
    unsynced: bool,
    last_sync: Instant,
}

/// The open transaction handed to [`LogWriter::transact`] callers.
#[derive(Debug)]
pub struct Tx<'a, F> {
    writer: &'a mut LogWriter<F>,
    transitions: bool,
}

impl<F: Fold> LogWriter<F> {
    /// Opens (creating if needed) the log at `path` and replays it, repairing
    /// a torn tail under the lock.
    pub fn open(path: &Path) -> Result<LogWriter<F>, LogError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(LogError::io("create", parent))?;
        }
        let file = open_log(path)?;
        // A writer folds the whole log, so it appends only to a log that is
        // whole; it rewrites the checkpoint only once enough is new since
        // the one there.
        let saved = checkpoint::covers::<F>(path, &file).unwrap_or(0);
        let mut writer = LogWriter {
            path: path.to_path_buf(),
            file,
            covered: Covered::default(),
            state: F::default(),
            saved,
            skipped: false,
            unsynced: false,
            last_sync: Instant::now(),
        };
        writer.transact(|_| Ok::<(), LogError>(()))?;
        Ok(writer)
    }

    /// Another writer on the same log, starting from this one's fold (what
    /// it shares with it, such as manifest snapshots, stays shared)
    /// instead of replaying the log again; it catches up at its first
    /// transaction like any writer.
    pub fn fork(&self) -> Result<LogWriter<F>, LogError>
    where
        F: Clone,
    {
        Ok(LogWriter {
            path: self.path.clone(),
            file: open_log(&self.path)?,
            covered: self.covered,
            state: self.state.clone(),
            saved: self.saved,
            skipped: self.skipped,
            unsynced: false,
            last_sync: Instant::now(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state as of the last transaction (other writers may have appended since).
    pub fn state(&self) -> &F {
        &self.state
    }

    /// Byte offset of the end of the replayed log.
    pub fn offset(&self) -> u64 {
        self.covered.len
    }

    /// Runs `f` under the exclusive lock with the state fully caught up.
    pub fn transact<T, E: From<LogError>>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_, F>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.file.lock().map_err(LogError::io("lock", &self.path))?;
        let result = self.locked(f);
        // Unlocking also happens when the descriptor closes; an error here
        // leaves nothing inconsistent, so report the transaction's own result.
        let _ = self.file.unlock();
        result
    }

    fn locked<T, E: From<LogError>>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_, F>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.catch_up()?;
        let mut tx = Tx {
            writer: self,
            transitions: false,
        };
        let result = f(&mut tx);
        let transitions = tx.transitions;
        if transitions || (self.unsynced && self.last_sync.elapsed() >= GROUP_SYNC_INTERVAL) {
            self.sync()?;
        }
        if !self.skipped && checkpoint::due(self.saved, self.covered.events) {
            // Best effort: a checkpoint is a cache, and a reader without one
            // folds the whole log.
            if checkpoint::save(&self.path, &self.state, &self.covered).is_ok() {
                self.saved = self.covered.events;
            }
        }
        result
    }

    /// Replays what other writers appended; cuts off a torn tail. Must hold the lock.
    fn catch_up(&mut self) -> Result<(), LogError> {
        let len = self
            .file
            .metadata()
            .map_err(LogError::io("stat", &self.path))?
            .len();
        let offset = self.covered.len;
        if len < offset {
            return Err(LogError::Io {
                action: "read",
                path: self.path.clone(),
                source: std::io::Error::other(format!(
                    "the log shrank from {offset} to {len} bytes while open"
                )),
            });
        }
        // A window at a time, so opening a big log never holds all of it,
        // or all its decoded records, at once.
        while self.covered.len < len {
            let at = self.covered.len;
            let bytes = window(&self.file, at, len).map_err(LogError::io("read", &self.path))?;
            let first_line = self.covered.events + 1;
            let mut last_seq = self.covered.last_seq;
            let scanned =
                scan(&bytes, first_line, last_seq).map_err(|corruption| LogError::Corrupt {
                    path: self.path.clone(),
                    corruption,
                })?;
            for record in &scanned.records {
                // Records in the log were validated by their writer; an illegal one
                // can only come from a foreign writer. Replay the rest like readers do.
                if self.state.apply(record).is_err() {
                    self.state.skip(record);
                    self.skipped = true;
                }
                last_seq = record.seq;
            }
            let good = &bytes[..scanned.good_len as usize];
            self.covered
                .extend(good, scanned.records.len() as u64, last_seq);
            if let Some(torn) = scanned.torn {
                // The torn bytes go: nothing follows the repair.
                return self.repair(&torn);
            }
        }
        Ok(())
    }

    /// Cuts off the torn tail after the covered prefix and records it
    /// (`log_repaired`), synced. Must hold the lock.
    fn repair(&mut self, torn: &TornTail) -> Result<(), LogError> {
        self.file
            .set_len(self.covered.len)
            .map_err(LogError::io("truncate", &self.path))?;
        let mut tx = Tx {
            writer: self,
            transitions: false,
        };
        tx.append(
            None,
            None,
            Event::LogRepaired(LogRepairedRecord {
                line: torn.line,
                dropped_bytes: torn.bytes,
            }),
        )
        .map_err(|e| match e {
            AppendError::Log(e) => e,
            // The fold refused a log-level event: write nothing more.
            AppendError::Refused(refusal) => LogError::Io {
                action: "repair",
                path: self.path.clone(),
                source: std::io::Error::other(refusal.to_string()),
            },
        })?;
        self.sync_now()
    }

    fn sync_now(&mut self) -> Result<(), LogError> {
        self.unsynced = true;
        self.sync()
    }
}

/// The log at `path` opened to read and append, created if missing.
fn open_log(path: &Path) -> Result<File, LogError> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(LogError::io("open", path))
}

impl<F> LogWriter<F> {
    /// Flushes appended events to disk.
    pub fn sync(&mut self) -> Result<(), LogError> {
        if self.unsynced {
            self.file
                .sync_data()
                .map_err(LogError::io("sync", &self.path))?;
            self.unsynced = false;
            self.last_sync = Instant::now();
        }
        Ok(())
    }
}

impl<F: Fold> Tx<'_, F> {
    /// The replayed state, including events appended in this transaction.
    pub fn state(&self) -> &F {
        &self.writer.state
    }

    /// The `seq` the next appended record gets.
    pub fn next_seq(&self) -> u64 {
        self.writer.covered.last_seq + 1
    }

    pub fn path(&self) -> &Path {
        &self.writer.path
    }

    /// Checks `event` with the fold and appends it as one `write`.
    pub fn append(
        &mut self,
        job: Option<&str>,
        attempt: Option<u32>,
        event: Event,
    ) -> Result<Record, AppendError<F::Refusal>> {
        let w = &mut *self.writer;
        let record = Record {
            seq: w.covered.last_seq + 1,
            ts_ms: now_ms(),
            job: job.map(str::to_string),
            attempt,
            event,
        };
        w.state.check(&record).map_err(AppendError::Refused)?;
        let line = record.encode();
        // O_APPEND puts the record at the end; the lock keeps writers apart.
        w.file
            .write_all(&line)
            .map_err(LogError::io("append to", &w.path))?;
        w.covered.push(&line, record.seq);
        // Checked just above: applying cannot be refused now.
        w.state.apply(&record).map_err(AppendError::Refused)?;
        w.unsynced = true;
        self.transitions |= record.event.is_transition();
        Ok(record)
    }
}

impl<F> Drop for LogWriter<F> {
    fn drop(&mut self) {
        // Best effort: grouped events not yet synced reach the disk.
        let _ = self.sync();
    }
}
