//! The pure part of a replay: the script from a transcript, the manifest
//! from a snapshot.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::protocol::{Manifest, Trace, TranscriptLine};

/// The script's file name beside the replay's manifest.
pub(crate) const REPLAY_SCRIPT: &str = "replies.jsonl";

/// Why a replay cannot be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplayError {
    #[error("cannot read the log: {0}")]
    Log(String),
    #[error("no job instance {0:?} in the log")]
    NoInstance(String),
    #[error("{instance} has no attempt {attempt} ({started} started)")]
    NoAttempt {
        instance: String,
        attempt: u32,
        started: u32,
    },
    #[error("{0} has no manifest snapshot (a bare lifecycle task): nothing to replay")]
    NoManifest(String),
    #[error("the manifest snapshot of {instance} cannot be read: {why}")]
    UnreadableManifest { instance: String, why: String },
    #[error(
        "attempt {attempt} of {instance} has no transcript: it ran with trace = \"{trace}\"; only a trace = \"full\" attempt keeps the model's replies"
    )]
    NoTrace {
        instance: String,
        attempt: u32,
        trace: String,
    },
    #[error("transcript of attempt {attempt} of {instance}, line {line}: {message}")]
    BadTranscript {
        instance: String,
        attempt: u32,
        line: usize,
        message: String,
    },
    #[error("{0} already exists; choose a new --out directory")]
    OutExists(PathBuf),
    #[error("cannot copy {0}: {1}")]
    Copy(PathBuf, String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the manifest: {0}")]
    Toml(String),
}

impl ReplayError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> ReplayError {
        ReplayError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What a replay is made from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplayInput<'a> {
    pub instance: &'a str,
    pub attempt: u32,
    /// The provider the instance ran with, if it named one.
    pub provider: Option<&'a str>,
    /// The instance's manifest, as its snapshot holds it.
    pub manifest: &'a Manifest,
    /// The manifest hash the snapshot recorded.
    pub hash: Option<&'a str>,
    /// The attempt's `transcript.jsonl`, as written.
    pub transcript: &'a [u8],
}

impl ReplayInput<'_> {
    fn transcript_hash(&self) -> String {
        Sha256::digest(self.transcript)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn header(&self) -> String {
        format!(
            "# Replay of attempt {} of {} (provider {}), made by `agent-runtime replay`.\n# Transcript sha256 {}; original manifest hash {}.\n",
            self.attempt,
            self.instance,
            self.provider.unwrap_or("of the manifest"),
            self.transcript_hash(),
            self.hash.unwrap_or("unknown"),
        )
    }
}

/// The replay's script and how many replies it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReplayScript {
    pub text: String,
    pub replies: usize,
}

/// The model's replies, in step order, each as a JSON string (sent
/// verbatim by the script provider, so invalid replies stay invalid).
pub(crate) fn replay_script(input: &ReplayInput<'_>) -> Result<ReplayScript, ReplayError> {
    let bad = |line: usize, message: String| ReplayError::BadTranscript {
        instance: input.instance.to_string(),
        attempt: input.attempt,
        line,
        message,
    };
    let text =
        std::str::from_utf8(input.transcript).map_err(|e| bad(0, format!("not UTF-8: {e}")))?;
    let mut steps = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        // Every line must read: a replay of half a transcript is not one.
        let line = TranscriptLine::parse(line)
            .map_err(|e| bad(i + 1, format!("not a transcript line: {e}")))?;
        steps.push(line);
    }
    steps.sort_by_key(|line| line.step);
    let mut out = input.header();
    for TranscriptLine { reply, .. } in &steps {
        out.push_str(&Value::String(reply.clone()).to_string());
        out.push('\n');
    }
    Ok(ReplayScript {
        text: out,
        replies: steps.len(),
    })
}

/// The replay's manifest: the original settings, one attempt, a full
/// trace, the scripted provider, and the copies of the source and the
/// acceptance tests beside it.
pub(crate) fn replay_manifest(input: &ReplayInput<'_>) -> Result<String, ReplayError> {
    let mut manifest = input.manifest.clone();
    // The prompt text is in the snapshot; the file it came from is not
    // part of the replay.
    manifest.prompt_file = None;
    manifest.source = PathBuf::from("source");
    if let Some(acceptance) = &mut manifest.acceptance {
        acceptance.dir = PathBuf::from("acceptance");
    }
    manifest.trace = Trace::Full;
    manifest.limits.attempts = 1;
    manifest.provider = None;
    let mut table =
        toml::Table::try_from(&manifest).map_err(|e| ReplayError::Toml(e.to_string()))?;
    let mut provider = toml::Table::new();
    provider.insert("kind".into(), "script".into());
    provider.insert("script".into(), REPLAY_SCRIPT.into());
    table.insert("provider".into(), provider.into());
    let body = toml::to_string(&table).map_err(|e| ReplayError::Toml(e.to_string()))?;
    Ok(format!("{}{body}", input.header()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        let text = r#"{
            "id": "job", "family": "fam", "prompt": "Fix it.", "prompt_file": null,
            "source": "/somewhere/src", "editable": ["*.txt"], "allow": ["true"],
            "verify": ["true"], "trace": "full", "env": {},
            "acceptance": {"dir": "/somewhere/tests", "command": ["true"], "baseline": "must_fail"},
            "limits": {"attempts": 3, "max_steps": 8, "max_invalid": 3, "wall_time": "15m",
                "command_timeout": "2m", "output_cap": "64KiB", "observation_cap": "16KiB",
                "token_budget": 1000},
            "provider": {"kind": "openai", "base_url": "http://x/v1", "model": "m",
                "api_key_env": null, "mode": "json_schema", "temperature": null,
                "max_tokens": null, "timeout": "2m", "max_retries": 2},
            "price": null,
            "sandbox": {"mode": "auto", "network": false}
        }"#;
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn replies_are_kept_verbatim_in_step_order() {
        let transcript = concat!(
            r#"{"step":2,"reply":"{\"kind\":\"finish\"}","observation":null}"#,
            "\n",
            r#"{"step":1,"reply":"not json at all","observation":"invalid decision"}"#,
            "\n"
        );
        let manifest = manifest();
        let input = ReplayInput {
            instance: "job@local",
            attempt: 1,
            provider: Some("local"),
            manifest: &manifest,
            hash: Some("abc"),
            transcript: transcript.as_bytes(),
        };
        let script = replay_script(&input).unwrap();
        assert_eq!(script.replies, 2);
        let replies: Vec<&str> = script
            .text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect();
        assert_eq!(
            replies,
            [r#""not json at all""#, r#""{\"kind\":\"finish\"}""#]
        );
        assert!(script.text.contains("job@local"));
    }

    #[test]
    fn the_manifest_is_the_original_with_a_script_provider() {
        let manifest = manifest();
        let input = ReplayInput {
            instance: "job@local",
            attempt: 2,
            provider: Some("local"),
            manifest: &manifest,
            hash: Some("abc"),
            transcript: b"",
        };
        let text = replay_manifest(&input).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(value["provider"]["kind"].as_str(), Some("script"));
        assert_eq!(value["provider"]["script"].as_str(), Some(REPLAY_SCRIPT));
        assert_eq!(value["source"].as_str(), Some("source"));
        assert_eq!(value["acceptance"]["dir"].as_str(), Some("acceptance"));
        assert_eq!(value["limits"]["attempts"].as_integer(), Some(1));
        assert_eq!(value["limits"]["max_steps"].as_integer(), Some(8));
        assert!(value.get("prompt_file").is_none());
        assert!(text.starts_with("# Replay of attempt 2 of job@local (provider local)"));
    }

    #[test]
    fn a_broken_transcript_names_its_line() {
        let manifest = manifest();
        let input = ReplayInput {
            instance: "job",
            attempt: 1,
            provider: None,
            manifest: &manifest,
            hash: Some("abc"),
            transcript: b"{\"step\":1,\"reply\":\"x\"}\nnot json\n",
        };
        let err = replay_script(&input).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }
}
