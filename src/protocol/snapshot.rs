//! The manifest as the log keeps it, in the `enqueued` and `replaced`
//! events: versioned, with the manifest's content hash, and the oracle's
//! path beside the manifest (outside the hash: setting or changing it never
//! changes the job).
//!
//! On disk: `{"format": 1, "hash": "<sha256>", "manifest": {...},
//! "oracle": {"script": PATH} | {"patch": PATH}}`. A snapshot this build
//! cannot read (another format, or a manifest it does not understand) is
//! kept as written, so the log still reads and a runner can say why it
//! cannot run the job.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::manifest::{Manifest, Oracle};

/// Version of the snapshot layout; bump when `Manifest`'s stored form
/// changes in a way an older build cannot read.
pub const SNAPSHOT_FORMAT: u64 = 1;

/// A manifest snapshot, by format.
#[derive(Debug, Clone, PartialEq)]
pub enum ManifestSnapshot {
    /// Format 1: the manifest (its `oracle` set from the snapshot's) and
    /// the hash its writer computed.
    V1 {
        hash: Option<String>,
        manifest: Box<Manifest>,
    },
    /// What this build cannot read, as written, and why.
    Unreadable {
        value: serde_json::Value,
        why: String,
    },
}

/// Format 1 on disk.
#[derive(Serialize, Deserialize)]
struct V1Form<M> {
    format: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
    manifest: M,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oracle: Option<Oracle>,
}

impl ManifestSnapshot {
    /// The snapshot of `manifest`, whose content hash is `hash`: what the
    /// log keeps of it (not where its fields were written).
    pub fn of(manifest: &Manifest, hash: String) -> ManifestSnapshot {
        let mut manifest = manifest.clone();
        manifest.origin = Default::default();
        ManifestSnapshot::V1 {
            hash: Some(hash),
            manifest: Box::new(manifest),
        }
    }

    /// The manifest, when this build reads the snapshot.
    pub fn manifest(&self) -> Option<&Manifest> {
        match self {
            ManifestSnapshot::V1 { manifest, .. } => Some(manifest),
            ManifestSnapshot::Unreadable { .. } => None,
        }
    }

    /// The hash the snapshot's writer recorded.
    pub fn hash(&self) -> Option<&str> {
        match self {
            ManifestSnapshot::V1 { hash, .. } => hash.as_deref(),
            ManifestSnapshot::Unreadable { .. } => None,
        }
    }
}

impl Serialize for ManifestSnapshot {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ManifestSnapshot::V1 { hash, manifest } => V1Form {
                format: 1,
                hash: hash.clone(),
                manifest: &**manifest,
                oracle: manifest.oracle.clone(),
            }
            .serialize(serializer),
            ManifestSnapshot::Unreadable { value, .. } => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ManifestSnapshot {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ManifestSnapshot, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let unreadable = |value, why: String| ManifestSnapshot::Unreadable { value, why };
        match value.get("format").and_then(serde_json::Value::as_u64) {
            Some(1) => match V1Form::<Manifest>::deserialize(&value) {
                Ok(form) => {
                    let mut manifest = form.manifest;
                    manifest.oracle = form.oracle;
                    Ok(ManifestSnapshot::V1 {
                        hash: form.hash,
                        manifest: Box::new(manifest),
                    })
                }
                Err(e) => Ok(unreadable(value, format!("format 1 does not read: {e}"))),
            },
            _ => {
                let format = value.get("format").cloned().unwrap_or_default();
                Ok(unreadable(
                    value,
                    format!(
                        "unsupported format {format} (this build reads format {SNAPSHOT_FORMAT})"
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
impl ManifestSnapshot {
    /// The snapshot of a small manifest with `limits`, recorded with
    /// `hash`, for tests of what reads it.
    pub(crate) fn for_tests(limits: super::Limits, hash: &str) -> ManifestSnapshot {
        use std::path::PathBuf;
        ManifestSnapshot::V1 {
            hash: Some(hash.to_string()),
            manifest: Box::new(Manifest {
                agent: None,
                id: "job".into(),
                family: "job".into(),
                prompt: "Fix it.".into(),
                prompt_file: None,
                source: PathBuf::from("/src"),
                editable: vec!["**".into()],
                allow: vec!["true".into()],
                verify: vec!["true".into()],
                trace: super::Trace::Metadata,
                env: Default::default(),
                acceptance: None,
                setup: None,
                limits,
                provider: None,
                price: None,
                sandbox: super::Sandbox::default(),
                metadata: Default::default(),
                oracle: None,
                waive: Vec::new(),
                origin: Default::default(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_back_as_written_and_an_unknown_one_is_kept() {
        let snapshot = ManifestSnapshot::for_tests(super::super::Limits::default(), "h");
        let text = serde_json::to_string(&snapshot).unwrap();
        assert!(
            text.starts_with(r#"{"format":1,"hash":"h","manifest":{"id":"job""#),
            "{text}"
        );
        let back: ManifestSnapshot = serde_json::from_str(&text).unwrap();
        assert_eq!(back, snapshot);
        let future = r#"{"format":2,"hash":"h","manifest":{"id":"job","later":true}}"#;
        let kept: ManifestSnapshot = serde_json::from_str(future).unwrap();
        match &kept {
            ManifestSnapshot::Unreadable { why, .. } => {
                assert!(why.contains("unsupported format 2"), "{why}");
            }
            other => panic!("read a format it does not know: {other:?}"),
        }
        assert_eq!(kept.manifest(), None);
        let again: serde_json::Value = serde_json::to_value(&kept).unwrap();
        assert_eq!(
            again,
            serde_json::from_str::<serde_json::Value>(future).unwrap()
        );
    }
}
