//! Git's object ids for file contents, its file modes, and how it tells a
//! binary file from a text file.

use sha1::{Digest, Sha1};

/// The id git writes for "no file" in an `index` line.
pub(crate) const NULL_ID: &str = "0000000000000000000000000000000000000000";

/// Bytes git looks at to call a file binary (`FIRST_FEW_BYTES` in git's
/// `xdiff-interface.c`).
const SNIFF: usize = 8000;

/// The mode git records for a file: it keeps only the executable bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Regular,
    Executable,
    Symlink,
}

impl Mode {
    /// The mode of a regular file with permission bits `bits`: executable
    /// when its owner may execute it, as git decides.
    pub(crate) fn of_file(bits: u32) -> Mode {
        if bits & 0o100 != 0 {
            Mode::Executable
        } else {
            Mode::Regular
        }
    }

    /// As a patch writes it: `100644`, `100755`, `120000`.
    pub(crate) fn as_git(self) -> &'static str {
        match self {
            Mode::Regular => "100644",
            Mode::Executable => "100755",
            Mode::Symlink => "120000",
        }
    }

    /// The permission bits a file of this mode is written with.
    pub(crate) fn permissions(self) -> u32 {
        match self {
            Mode::Executable => 0o755,
            Mode::Regular | Mode::Symlink => 0o644,
        }
    }
}

/// Git's blob id of `content`: the SHA-1 of `blob <len>\0<content>`, in hex.
pub(crate) fn blob_id(content: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", content.len()).as_bytes());
    hasher.update(content);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether a patch carries `content` as binary: git's rule (a NUL byte in
/// the first 8000 bytes), and also content that is not UTF-8, so that a
/// patch is always text a browser or an editor shows as it is (`git apply`
/// reproduces either form byte for byte).
pub(crate) fn is_binary(content: &[u8]) -> bool {
    content[..content.len().min(SNIFF)].contains(&0) || std::str::from_utf8(content).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_gits() {
        // `git hash-object /dev/null` and `printf 'hello\n' | git hash-object --stdin`.
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn binary_is_a_nul_early_on_or_content_that_is_not_utf8() {
        assert!(!is_binary(b""));
        assert!(!is_binary("caf\u{e9}\r\n".as_bytes()));
        assert!(is_binary(b"a\0b"));
        assert!(is_binary(b"caf\xe9\n"));
        let mut late = vec![b'a'; SNIFF];
        late.push(0);
        assert!(!is_binary(&late));
    }

    #[test]
    fn only_the_owner_execute_bit_makes_a_file_executable() {
        assert_eq!(Mode::of_file(0o755), Mode::Executable);
        assert_eq!(Mode::of_file(0o744), Mode::Executable);
        assert_eq!(Mode::of_file(0o655), Mode::Regular);
        assert_eq!(Mode::of_file(0o600).as_git(), "100644");
    }
}
