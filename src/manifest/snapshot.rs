//! A manifest's identity and its stored form: a SHA-256 content hash of
//! the normalized manifest (defaults applied, paths absolute, prompt text
//! included), and a JSON snapshot for the event log that rebuilds the same
//! manifest.
//!
//! SHA-256 rather than a fast non-cryptographic hash: enqueue decides "same
//! id and same hash means same job" from it, so a collision must not be
//! something two different manifests can plausibly hit.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::error::ManifestError;
use crate::protocol::validate_id;
use crate::protocol::{Manifest, Oracle};

/// Version of the snapshot layout; bump when `Manifest`'s JSON changes.
pub const SNAPSHOT_FORMAT: u64 = 1;

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

    /// The form stored in the log: `{"format", "hash", "manifest"}`, and
    /// `oracle` (`{"script": PATH}` or `{"patch": PATH}`) when the job has
    /// one: outside the hashed manifest, so setting or changing it never
    /// changes the job, but the runner can list the oracle's tests when the
    /// baseline cannot collect the hidden ones.
    pub fn to_snapshot(&self) -> Value {
        let mut snapshot = json!({
            "format": SNAPSHOT_FORMAT,
            "hash": self.hash(),
            "manifest": serde_json::to_value(self).unwrap_or(Value::Null),
        });
        let oracle = match &self.oracle {
            Some(Oracle::Script(path)) => Some(json!({ "script": path })),
            Some(Oracle::Patch(path)) => Some(json!({ "patch": path })),
            None => None,
        };
        if let (Some(oracle), Some(map)) = (oracle, snapshot.as_object_mut()) {
            map.insert("oracle".into(), oracle);
        }
        snapshot
    }

    /// Rebuilds a manifest from [`Manifest::to_snapshot`]'s output; refuses
    /// an unknown format or a snapshot whose hash does not match.
    pub fn from_snapshot(snapshot: &Value) -> Result<Manifest, ManifestError> {
        let bad = |message: String| ManifestError::Snapshot(message);
        let format = snapshot.get("format").and_then(Value::as_u64);
        if format != Some(SNAPSHOT_FORMAT) {
            return Err(bad(format!(
                "unsupported format {} (this build reads format {SNAPSHOT_FORMAT})",
                snapshot.get("format").unwrap_or(&Value::Null)
            )));
        }
        let body = snapshot
            .get("manifest")
            .ok_or_else(|| bad("missing \"manifest\"".to_string()))?;
        let mut manifest = Manifest::deserialize_value(body).map_err(|e| bad(e.to_string()))?;
        let oracle = snapshot.get("oracle");
        let path = |key: &str| {
            oracle
                .and_then(|o| o.get(key))
                .and_then(Value::as_str)
                .map(std::path::PathBuf::from)
        };
        manifest.oracle = path("script")
            .map(Oracle::Script)
            .or_else(|| path("patch").map(Oracle::Patch));
        validate_id(&manifest.id).map_err(|e| bad(e.to_string()))?;
        if let Some(stored) = snapshot.get("hash").and_then(Value::as_str) {
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

    fn deserialize_value(body: &Value) -> Result<Manifest, serde_json::Error> {
        serde::Deserialize::deserialize(body)
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
