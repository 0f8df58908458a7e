//! The data lines of a `GIT binary patch` block: zlib-deflated bytes cut in
//! runs of 52, each line a length character (`A`..`Z` for 1..26, `a`..`z`
//! for 27..52) and the run in git's base85 (`base85.c`: big-endian groups
//! of four bytes, five digits each, the last group padded with zeros).

use std::fmt::Write as _;
use std::io::Write as _;

use flate2::Compression;
use flate2::write::ZlibEncoder;

/// Git's base85 digits.
const ALPHABET: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
/// Bytes per line.
const LINE: usize = 52;

/// Appends the lines encoding `data` (already deflated) to `out`.
pub(crate) fn encode_lines(data: &[u8], out: &mut String) {
    for run in data.chunks(LINE) {
        let n = run.len() as u8;
        out.push(char::from(if n <= 26 {
            b'A' + n - 1
        } else {
            b'a' + n - 27
        }));
        for group in run.chunks(4) {
            let mut word = [0u8; 4];
            word[..group.len()].copy_from_slice(group);
            let mut value = u32::from_be_bytes(word);
            let mut digits = [0u8; 5];
            for digit in digits.iter_mut().rev() {
                *digit = ALPHABET[(value % 85) as usize];
                value /= 85;
            }
            out.extend(digits.iter().map(|&d| char::from(d)));
        }
        out.push('\n');
    }
}

/// Appends a `literal <len>` block of `content` (deflated with zlib at its
/// fastest level, git's default `core.compression`), with the blank line
/// that ends it.
pub(super) fn literal(content: &[u8], out: &mut String) {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::fast());
    // Writing into a Vec cannot fail.
    let deflated = encoder
        .write_all(content)
        .and_then(|()| encoder.finish())
        .unwrap_or_default();
    let _ = writeln!(out, "literal {}", content.len());
    encode_lines(&deflated, out);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_literal_is_the_one_git_writes() {
        let mut out = String::new();
        literal(b"", &mut out);
        assert_eq!(out, "literal 0\nHcmV?d00001\n\n");
    }

    #[test]
    fn lines_carry_52_bytes_and_say_how_many() {
        let mut out = String::new();
        encode_lines(&[0u8; 53], &mut out);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with('z') && lines[0].len() == 1 + 13 * 5);
        assert_eq!(lines[1], "A00000");
        let mut one = String::new();
        encode_lines(&[0xff, 0xff, 0xff, 0xff], &mut one);
        assert_eq!(one, "D|NsC0\n");
    }
}
