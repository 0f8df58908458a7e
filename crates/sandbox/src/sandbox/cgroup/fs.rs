//! Small reads and writes of cgroup files with as few system calls as
//! possible: one open, one write or reads into a stack buffer, one close;
//! and for the files of a cgroup read once per command it serves, one
//! `pread` each ([`Kept`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::error::CgroupError;

/// Writes `value` with a single write(2), as cgroup files expect.
pub(crate) fn write(path: &Path, value: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).open(path)?;
    whole(path, value, file.write(value)?)
}

/// Whether `written` bytes were all of `value`, written to `path`.
fn whole(path: &Path, value: &[u8], written: usize) -> io::Result<()> {
    if written == value.len() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::WriteZero,
            format!("short write to {}", path.display()),
        ))
    }
}

/// Like [`write`], adding the path to the error.
pub(crate) fn write_value(path: &Path, value: &[u8]) -> Result<(), CgroupError> {
    write(path, value).map_err(|source| CgroupError::Write {
        value: String::from_utf8_lossy(value).trim().to_string(),
        path: path.to_path_buf(),
        source,
    })
}

/// A small text file (at most 4 KiB are kept), e.g. `freezer.state`.
pub(crate) fn read_small(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    read_from(&mut file)
}

/// Reads what `file` holds from its current offset, up to 4 KiB.
pub(crate) fn read_from(file: &mut impl Read) -> io::Result<String> {
    let mut buf = [0u8; 4096];
    let mut len = 0;
    while let Some(rest) = buf.get_mut(len..)
        && !rest.is_empty()
    {
        match file.read(rest) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(String::from_utf8_lossy(buf.get(..len).unwrap_or_default()).into_owned())
}

/// The number after `key ` in a flat-keyed file such as `memory.events`.
pub(crate) fn keyed_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        if name == key {
            value.trim().parse().ok()
        } else {
            None
        }
    })
}

/// Calls `each` with every pid listed in a `cgroup.procs` file, streaming
/// through a stack buffer (the list can be long).
pub(crate) fn for_each_pid(procs: &Path, each: impl FnMut(i32)) -> io::Result<()> {
    pids_in(&File::open(procs)?, each)
}

/// [`for_each_pid`] of an open `cgroup.procs`, read from its start.
fn pids_in(file: &File, mut each: impl FnMut(i32)) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    let mut offset = 0;
    let mut current: Option<i32> = None;
    loop {
        let n = match file.read_at(&mut buf, offset) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        offset += n as u64;
        for byte in buf.iter().take(n) {
            match byte {
                b'0'..=b'9' => {
                    let digit = i32::from(byte - b'0');
                    current = Some(
                        current
                            .unwrap_or(0)
                            .saturating_mul(10)
                            .saturating_add(digit),
                    );
                }
                _ => {
                    if let Some(pid) = current.take() {
                        each(pid);
                    }
                }
            }
        }
    }
    if let Some(pid) = current {
        each(pid);
    }
    Ok(())
}

/// Files of one cgroup read (and reset) again and again (its counters and
/// members, once per command it serves), each opened the first time and
/// then read or written at offset 0 with `pread` or `pwrite`: a cgroup
/// file makes its text afresh for a read at offset 0 and takes each write
/// whole, so one system call replaces an open, a read or write and a
/// close.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// Each file's path, the file, and whether it was opened for writing.
    files: Mutex<Vec<(PathBuf, File, bool)>>,
}

impl Kept {
    /// [`read_small`] of `path`. A file that cannot be opened is tried
    /// again next time.
    pub(crate) fn read_small(&self, path: &Path) -> io::Result<String> {
        self.with(path, false, |file| {
            let mut buf = [0u8; 4096];
            let n = loop {
                match file.read_at(&mut buf, 0) {
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    // The whole of a small cgroup file comes in one read.
                    read => break read?,
                }
            };
            Ok(String::from_utf8_lossy(buf.get(..n).unwrap_or_default()).into_owned())
        })
    }

    /// [`for_each_pid`] of `path`.
    pub(crate) fn for_each_pid(&self, path: &Path, each: impl FnMut(i32)) -> io::Result<()> {
        self.with(path, false, |file| pids_in(file, each))
    }

    /// [`write`] of `value` to `path`, through the file kept open for it.
    pub(crate) fn write_small(&self, path: &Path, value: &[u8]) -> io::Result<()> {
        self.with(path, true, |file| {
            let written = loop {
                match file.write_at(value, 0) {
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    written => break written?,
                }
            };
            whole(path, value, written)
        })
    }

    /// Runs `use_file` on the file kept for `path`, opened for writing too
    /// when `write`.
    fn with<T>(
        &self,
        path: &Path,
        write: bool,
        use_file: impl FnOnce(&File) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut files = self
            .files
            .lock()
            .map_err(|_| io::Error::other("a user of this cgroup's files panicked"))?;
        let at = files.iter().position(|(kept, _, _)| kept == path);
        if let Some((_, file, writable)) = at.and_then(|at| files.get(at))
            && (*writable || !write)
        {
            return use_file(file);
        }
        let file = OpenOptions::new().read(true).write(write).open(path)?;
        let out = use_file(&file);
        let entry = (path.to_path_buf(), file, write);
        match at.and_then(|at| files.get_mut(at)) {
            Some(slot) => *slot = entry,
            None => files.push(entry),
        }
        out
    }
}

/// Short sleeps that grow from 50 µs to 5 ms, until `deadline`; only used
/// on slow paths (a cgroup that still holds processes after a kill), where
/// cgroup v1 offers nothing to wait on.
pub(crate) struct Backoff {
    deadline: Instant,
    step: Duration,
}

impl Backoff {
    pub(crate) fn new(budget: Duration) -> Backoff {
        Backoff {
            deadline: Instant::now() + budget,
            step: Duration::from_micros(50),
        }
    }

    /// Sleeps one step; `false` once the deadline has passed.
    pub(crate) fn wait(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.deadline {
            return false;
        }
        std::thread::sleep(self.step.min(self.deadline - now));
        self.step = (self.step * 2).min(Duration::from_millis(5));
        true
    }

    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_values() {
        let events = "low 0\nhigh 3\nmax 9\noom 1\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(keyed_value(events, "oom_kill"), Some(2));
        assert_eq!(keyed_value(events, "oom"), Some(1));
        assert_eq!(keyed_value(events, "absent"), None);
    }

    #[test]
    fn pids_are_streamed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cgroup.procs");
        let text: String = (1..3000).map(|pid| format!("{pid}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let mut seen = Vec::new();
        for_each_pid(&path, |pid| seen.push(pid)).unwrap();
        assert_eq!(seen, (1..3000).collect::<Vec<_>>());
    }

    #[test]
    fn kept_files_are_opened_once_and_read_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let (peak, procs) = (
            dir.path().join("pids.peak"),
            dir.path().join("cgroup.procs"),
        );
        let kept = Kept::default();
        // Not there yet: an error, and tried again next time.
        assert!(kept.read_small(&peak).is_err());
        std::fs::write(&peak, "3\n").unwrap();
        assert_eq!(kept.read_small(&peak).unwrap(), "3\n");
        // Rewritten in place (as the kernel remakes a cgroup file's text):
        // the same descriptor reads the new text from the start.
        std::fs::write(&peak, "12\n").unwrap();
        assert_eq!(kept.read_small(&peak).unwrap(), "12\n");
        let text: String = (1..3000).map(|pid| format!("{pid}\n")).collect();
        std::fs::write(&procs, text).unwrap();
        for _ in 0..2 {
            let mut seen = Vec::new();
            kept.for_each_pid(&procs, |pid| seen.push(pid)).unwrap();
            assert_eq!(seen, (1..3000).collect::<Vec<_>>());
        }
        assert_eq!(kept.files.lock().unwrap().len(), 2);
    }

    #[test]
    fn a_kept_file_written_is_opened_for_writing_once_and_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let usage = dir.path().join("memory.max_usage_in_bytes");
        std::fs::write(&usage, "7\n").unwrap();
        let kept = Kept::default();
        // Read first: kept read-only, then opened again to be written.
        assert_eq!(kept.read_small(&usage).unwrap(), "7\n");
        for value in ["0", "5"] {
            kept.write_small(&usage, value.as_bytes()).unwrap();
            assert_eq!(kept.read_small(&usage).unwrap(), format!("{value}\n"));
        }
        // One file for the path, the one that can be written.
        let files = kept.files.lock().unwrap();
        assert_eq!(files.len(), 1);
        assert!(files[0].2);
        drop(files);
        // A file that cannot be opened for writing says so.
        assert!(kept.write_small(&dir.path().join("gone"), b"0").is_err());
    }
}
