//! Reading regular files beneath a [`Dir`], with a cap checked on the open
//! descriptor before anything is allocated.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

use super::dir::{Dir, Meta};
use super::error::Error;

/// Chunk size of [`same_content`].
const CHUNK: usize = 64 * 1024;

impl Dir {
    /// The whole content of the regular file `rel`, refused as
    /// [`Error::TooLarge`] when it holds more than `cap` bytes.
    pub(crate) fn read_capped(&self, rel: &Path, cap: u64) -> Result<(Vec<u8>, Meta), Error> {
        let (file, meta) = self.open_file(rel)?;
        Ok((read_open(&file, meta, cap)?, meta))
    }

    /// At most the first `cap` bytes of the regular file `rel`, and what
    /// `fstat` said about it (its size may be larger).
    pub(crate) fn read_head(&self, rel: &Path, cap: u64) -> Result<(Vec<u8>, Meta), Error> {
        let (file, meta) = self.open_file(rel)?;
        let mut bytes = Vec::with_capacity(capacity(meta.size.min(cap)));
        (&file).take(cap).read_to_end(&mut bytes)?;
        Ok((bytes, meta))
    }
}

/// Reads an open regular file from its current offset, `meta` being what
/// `fstat` said of it: more than `cap` bytes are refused before anything is
/// allocated, and also when the file grows while it is read.
pub(crate) fn read_open(file: &File, meta: Meta, cap: u64) -> Result<Vec<u8>, Error> {
    if meta.size > cap {
        return Err(Error::TooLarge {
            size: meta.size,
            cap,
        });
    }
    let mut bytes = Vec::with_capacity(capacity(meta.size));
    let read = file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if read as u64 > cap {
        return Err(Error::TooLarge {
            size: read as u64,
            cap,
        });
    }
    Ok(bytes)
}

/// Whether two open files hold the same bytes from their current offsets
/// on, compared a chunk at a time (memory stays at two chunks, however
/// large the files).
pub(crate) fn same_content(a: &mut File, b: &mut File) -> std::io::Result<bool> {
    let (mut left, mut right) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    loop {
        let n = fill(a, &mut left)?;
        let m = fill(b, &mut right)?;
        if n != m || left[..n] != right[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Reads until `buf` is full or the end of the file.
fn fill(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn capacity(size: u64) -> usize {
    usize::try_from(size).unwrap_or(0)
}
