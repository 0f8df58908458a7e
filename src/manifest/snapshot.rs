//! A manifest's identity and its stored form: a SHA-256 content hash of
//! the normalized manifest (defaults applied, paths absolute, prompt text
//! included), and the snapshot for the event log (the protocol's
//! [`ManifestSnapshot`]) that rebuilds the same manifest.
//!
//! SHA-256 rather than a fast non-cryptographic hash: enqueue decides "same
//! id and same hash means same job" from it, so a collision must not be
//! something two different manifests can plausibly hit.

use sha2::{Digest, Sha256};

use super::error::ManifestError;
use crate::protocol::{Manifest, ManifestSnapshot, validate_id};

/// Prefix of the hashed bytes, so a hash never means two formats.
const HASH_DOMAIN: &[u8] = b"agent-runtime manifest v1\n";

impl Manifest {
    /// Lowercase hex SHA-256 of the normalized manifest. The prompt text
    /// (inline or the bytes of `prompt_file`) is part of it; the files under
    /// `source` are not.
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(HASH_DOMAIN);
        // Serializing the struct (not a `Value`) keeps field order fixed by
        // the type, and `env` is a BTreeMap, so the bytes are canonical.
        match serde_json::to_vec(self) {
            Ok(bytes) => hasher.update(&bytes),
            // Unreachable for this type (string keys, finite floats);
            // hashing the debug form keeps the function total.
            Err(_) => hasher.update(format!("{self:?}").as_bytes()),
        }
        hex(&hasher.finalize())
    }

    /// The form stored in the log (see [`ManifestSnapshot`]): the
    /// manifest, its hash, and the oracle outside the hash.
    pub fn to_snapshot(&self) -> ManifestSnapshot {
        ManifestSnapshot::of(self, self.hash())
    }

    /// Rebuilds a manifest from its snapshot; refuses one this build
    /// cannot read, or whose hash does not match its content.
    pub fn from_snapshot(snapshot: &ManifestSnapshot) -> Result<Manifest, ManifestError> {
        let bad = |message: String| ManifestError::Snapshot(message);
        let manifest = match snapshot {
            ManifestSnapshot::V1 { manifest, .. } => (**manifest).clone(),
            ManifestSnapshot::Unreadable { why, .. } => return Err(bad(why.clone())),
        };
        validate_id(&manifest.id).map_err(|e| bad(e.to_string()))?;
        if let Some(stored) = snapshot.hash() {
            let actual = manifest.hash();
            if stored != actual {
                return Err(bad(format!(
                    "hash mismatch for job {}: stored {stored}, content {actual}",
                    manifest.id
                )));
            }
        }
        Ok(manifest)
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}
