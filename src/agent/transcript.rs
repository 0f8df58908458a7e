//! The opt-in transcript (`trace = "full"`): what the model was sent and
//! replied, and what it observed, one JSON line per step, with secrets
//! redacted. Written beside the attempt's artifacts, never into the log.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::protocol::TranscriptLine;

/// Replacement for a redacted value.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// Environment variables whose values are treated as secrets.
pub(crate) fn secret_values_from_env() -> Vec<String> {
    std::env::vars()
        .filter(|(k, v)| {
            let k = k.to_ascii_uppercase();
            v.len() >= 6
                && [
                    "KEY",
                    "TOKEN",
                    "SECRET",
                    "PASSWORD",
                    "PASSWD",
                    "CREDENTIAL",
                    "AUTH",
                ]
                .iter()
                .any(|w| k.contains(w))
        })
        .map(|(_, v)| v)
        .collect()
}

/// Replaces every occurrence of each secret in `text`.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}

/// An open transcript file.
#[derive(Debug)]
pub(crate) struct Transcript {
    out: BufWriter<File>,
    secrets: Vec<String>,
}

impl Transcript {
    pub(crate) fn create(path: &Path, secrets: Vec<String>) -> std::io::Result<Transcript> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Transcript {
            out: BufWriter::new(File::create(path)?),
            secrets,
        })
    }

    /// Appends one line, its text redacted.
    pub(crate) fn write(&mut self, mut line: TranscriptLine) -> std::io::Result<()> {
        line.reply = redact(&line.reply, &self.secrets);
        if let Some(observation) = &mut line.observation {
            *observation = redact(observation, &self.secrets);
        }
        serde_json::to_writer(&mut self.out, &line)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_everywhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::create(&path, vec!["sk-live-123456".into()]).unwrap();
        t.write(TranscriptLine {
            step: 1,
            reply: "key is sk-live-123456".into(),
            observation: Some("x sk-live-123456".into()),
            ..TranscriptLine::default()
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-live"));
        assert_eq!(text.matches(REDACTED).count(), 2);
    }
}
