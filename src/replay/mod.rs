//! `replay`: a recorded attempt (`trace = "full"`) as a self-contained job
//! that reproduces it with no model. The job is the original manifest's
//! settings with a scripted provider whose script is the model's raw
//! replies, in order, each sent verbatim (invalid ones included), and
//! copies of the source and the acceptance tests beside it.
//!
//! - `build.rs`: the pure script and manifest builders.
//! - `mod.rs` (here): reading the log and copying the source and tests.
//!
//! Never runs anything.

mod build;

pub(crate) use build::{REPLAY_SCRIPT, ReplayError, ReplayInput, replay_manifest, replay_script};

use std::path::{Path, PathBuf};

use crate::lifecycle::DataDir;
use crate::log::read_snapshot;
use crate::protocol::{ManifestSnapshot, Trace};
use crate::state::State;

/// What `write_replay` wrote.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub manifest: PathBuf,
    pub replies: usize,
    pub attempt: u32,
}

/// Builds the replay of `instance`'s attempt `attempt` (default: its last)
/// from the data dir `data` into the new directory `out`.
pub(crate) fn write_replay(
    data: &Path,
    instance: &str,
    attempt: Option<u32>,
    out: &Path,
) -> Result<Written, ReplayError> {
    let dir = DataDir::new(data);
    let snapshot =
        read_snapshot::<State>(&dir.log()).map_err(|e| ReplayError::Log(e.to_string()))?;
    let job = snapshot
        .state
        .job(instance)
        .ok_or_else(|| ReplayError::NoInstance(instance.to_string()))?;
    let attempt = match attempt {
        Some(n) if n == 0 || n > job.last_attempt() => {
            return Err(ReplayError::NoAttempt {
                instance: instance.to_string(),
                attempt: n,
                started: job.last_attempt(),
            });
        }
        Some(n) => n,
        None if job.last_attempt() == 0 => {
            return Err(ReplayError::NoAttempt {
                instance: instance.to_string(),
                attempt: 1,
                started: 0,
            });
        }
        None => job.last_attempt(),
    };
    let snapshot = job
        .manifest
        .as_deref()
        .ok_or_else(|| ReplayError::NoManifest(instance.to_string()))?;
    let manifest = match snapshot {
        ManifestSnapshot::V1 { manifest, .. } => &**manifest,
        ManifestSnapshot::Unreadable { why, .. } => {
            return Err(ReplayError::UnreadableManifest {
                instance: instance.to_string(),
                why: why.clone(),
            });
        }
    };
    let transcript_path = dir.runs(instance, attempt).join("transcript.jsonl");
    let transcript = match std::fs::read(&transcript_path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let trace = match manifest.trace {
                Trace::Metadata => "metadata",
                Trace::Full => "full",
            };
            return Err(ReplayError::NoTrace {
                instance: instance.to_string(),
                attempt,
                trace: trace.to_string(),
            });
        }
        Err(e) => return Err(ReplayError::io(&transcript_path, e)),
    };
    let input = ReplayInput {
        instance,
        attempt,
        provider: job.provider.as_deref(),
        manifest,
        hash: snapshot.hash(),
        transcript: &transcript,
    };
    let script = replay_script(&input)?;
    let toml = replay_manifest(&input)?;

    if out.exists() {
        return Err(ReplayError::OutExists(out.to_path_buf()));
    }
    std::fs::create_dir_all(out).map_err(|e| ReplayError::io(out, e))?;
    let copy = |from: &Path, to: &str| -> Result<(), ReplayError> {
        crate::beneath::copy_tree(from, &out.join(to), &["target"])
            .map(|_| ())
            .map_err(|e| ReplayError::Copy(from.to_path_buf(), e.to_string()))
    };
    copy(&manifest.source, "source")?;
    if let Some(acceptance) = &manifest.acceptance {
        copy(&acceptance.dir, "acceptance")?;
    }
    let script_path = out.join(REPLAY_SCRIPT);
    std::fs::write(&script_path, &script.text).map_err(|e| ReplayError::io(&script_path, e))?;
    let manifest_path = out.join("job.toml");
    std::fs::write(&manifest_path, toml).map_err(|e| ReplayError::io(&manifest_path, e))?;
    Ok(Written {
        manifest: manifest_path,
        replies: script.replies,
        attempt,
    })
}
