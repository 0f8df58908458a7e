//! One line of an attempt's `transcript.jsonl` (`trace = "full"`): what the
//! model replied at a step and what it observed. One type writes it and
//! every reader (the reports, the exports, `replay`) reads it.

use serde::{Deserialize, Serialize};

/// A model step as the transcript keeps it, secrets already redacted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptLine {
    pub step: u32,
    /// The model's reply, as sent back.
    pub reply: String,
    /// What the runtime told the model after acting on the reply; `None`
    /// when the attempt ended there.
    #[serde(default)]
    pub observation: Option<String>,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
}

impl TranscriptLine {
    /// Reads one line; `None` when it is not a transcript line.
    pub fn parse(line: &str) -> Result<TranscriptLine, serde_json::Error> {
        serde_json::from_str(line)
    }

    /// The lines of a transcript that read; the rest are skipped (it is a
    /// diagnostic artifact, cut short when its attempt was).
    pub fn read_all(text: &str) -> Vec<TranscriptLine> {
        text.lines()
            .filter_map(|line| TranscriptLine::parse(line).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_and_a_torn_one_is_skipped() {
        let line = TranscriptLine {
            step: 2,
            reply: "{\"kind\":\"finish\"}".into(),
            observation: Some("ok".into()),
            input_tokens: 10,
            output_tokens: 3,
        };
        let written = serde_json::to_string(&line).unwrap();
        let text = format!("{written}\n{{\"step\":3,\"rep");
        assert_eq!(TranscriptLine::read_all(&text), [line]);
        // Written before the token counts were kept.
        let old = TranscriptLine::parse(r#"{"step":1,"reply":"x","observation":null}"#).unwrap();
        assert_eq!((old.step, old.input_tokens), (1, 0));
    }
}
