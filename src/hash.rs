//! Short content hashes for the log: SHA-256, first 16 hex digits. Enough to
//! tell contents apart in a log and a report; not a security boundary.

use sha2::{Digest, Sha256};

/// First 16 lowercase hex digits of SHA-256 of `bytes`.
pub(crate) fn short_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_value() {
        assert_eq!(super::short_hash(b""), "e3b0c44298fc1c14");
    }
}
