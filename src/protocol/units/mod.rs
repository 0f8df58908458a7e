//! Human-written quantities shared by manifests and the command line:
//! durations (`500ms`, `90s`, `15m`, `1h`) and byte sizes (`512`, `16KiB`,
//! `1MiB`). Pure parsing and canonical formatting; no I/O.

mod duration;
mod size;

pub use duration::{DurationError, format_duration, parse_duration};
pub use size::{ByteSize, SizeError, format_size, parse_size};

/// Serde helpers that store a [`std::time::Duration`] as its canonical text
/// (`"15m"`), so snapshots read like the manifest they came from.
pub mod duration_text {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::format_duration(*value))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

/// [`duration_text`] for an optional duration (absent stays absent).
pub mod optional_duration_text {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => super::duration_text::serialize(value, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| super::parse_duration(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}
