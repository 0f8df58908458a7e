//! Bounded capture of one output stream: the first bytes and the last bytes
//! up to a cap, with totals, so memory stays bounded however much a child
//! prints while the pipe is still drained to its end.

use serde::Serialize;

/// What was kept of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Captured {
    #[serde(skip)]
    pub head: Vec<u8>,
    #[serde(skip)]
    pub tail: Vec<u8>,
    /// Every byte the child wrote to the stream, kept or not.
    pub total_bytes: u64,
    /// Whether bytes between `head` and `tail` were dropped.
    pub truncated: bool,
}

impl Captured {
    /// Bytes dropped between head and tail.
    pub fn omitted(&self) -> u64 {
        self.total_bytes
            .saturating_sub((self.head.len() + self.tail.len()) as u64)
    }

    /// Lossy UTF-8 text of what was kept, with a marker where bytes were
    /// dropped.
    pub fn to_text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.truncated {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[... {} bytes omitted ...]\n", self.omitted()));
        }
        text.push_str(&String::from_utf8_lossy(&self.tail));
        text
    }
}

/// Accumulates a stream into a [`Captured`]: half the cap for the head, the
/// rest for a ring holding the tail.
#[derive(Debug)]
pub struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    ring: Vec<u8>,
    ring_cap: usize,
    /// Next write position in `ring` once it is full.
    ring_pos: usize,
    total: u64,
}

impl Capture {
    pub fn new(cap: usize) -> Capture {
        let head_cap = cap / 2;
        Capture {
            head: Vec::new(),
            head_cap,
            ring: Vec::new(),
            ring_cap: cap - head_cap,
            ring_pos: 0,
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.is_empty() || self.ring_cap == 0 {
            return;
        }
        if bytes.len() >= self.ring_cap {
            // Only the last `ring_cap` bytes can survive; lay them out in order.
            self.ring.clear();
            self.ring
                .extend_from_slice(&bytes[bytes.len() - self.ring_cap..]);
            self.ring_pos = 0;
            return;
        }
        if self.ring.len() < self.ring_cap {
            let fill = (self.ring_cap - self.ring.len()).min(bytes.len());
            self.ring.extend_from_slice(&bytes[..fill]);
            bytes = &bytes[fill..];
        }
        // The ring is full; overwrite the oldest bytes, wrapping once at most.
        while !bytes.is_empty() {
            let run = (self.ring_cap - self.ring_pos).min(bytes.len());
            self.ring[self.ring_pos..self.ring_pos + run].copy_from_slice(&bytes[..run]);
            self.ring_pos = (self.ring_pos + run) % self.ring_cap;
            bytes = &bytes[run..];
        }
    }

    pub fn finish(self) -> Captured {
        let mut tail = Vec::with_capacity(self.ring.len());
        tail.extend_from_slice(&self.ring[self.ring_pos..]);
        tail.extend_from_slice(&self.ring[..self.ring_pos]);
        let kept = (self.head.len() + tail.len()) as u64;
        Captured {
            head: self.head,
            tail,
            total_bytes: self.total,
            truncated: self.total > kept,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(cap: usize, chunks: &[&[u8]]) -> Captured {
        let mut capture = Capture::new(cap);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn small_output_is_kept_whole() {
        let got = capture(16, &[b"hello ", b"world"]);
        assert_eq!(got.total_bytes, 11);
        assert!(!got.truncated);
        assert_eq!(got.to_text(), "hello world");
    }

    #[test]
    fn large_output_keeps_head_and_tail() {
        let data: Vec<u8> = (0..100u8).collect();
        for chunk in [1, 3, 7, 8, 50, 100] {
            let chunks: Vec<&[u8]> = data.chunks(chunk).collect();
            let got = capture(16, &chunks);
            assert_eq!(got.head, &data[..8], "chunk {chunk}");
            assert_eq!(got.tail, &data[92..], "chunk {chunk}");
            assert_eq!(got.total_bytes, 100);
            assert!(got.truncated);
            assert_eq!(got.omitted(), 84);
        }
    }

    #[test]
    fn exactly_the_cap_is_not_truncated() {
        let got = capture(10, &[b"0123456789"]);
        assert!(!got.truncated);
        assert_eq!(got.to_text(), "0123456789");
    }

    #[test]
    fn text_marks_the_gap() {
        let got = capture(8, &[b"abcd", b"xxxxxxxxxx", b"wxyz"]);
        assert_eq!(got.to_text(), "abcd\n[... 10 bytes omitted ...]\nwxyz");
    }

    #[test]
    fn zero_cap_keeps_only_counts() {
        let got = capture(0, &[b"abc"]);
        assert_eq!(got.total_bytes, 3);
        assert!(got.truncated);
        assert!(got.head.is_empty() && got.tail.is_empty());
    }
}
