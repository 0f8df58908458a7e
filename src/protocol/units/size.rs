//! Byte sizes: a plain integer (bytes) or an integer with a binary unit
//! (`B`, `KiB`, `MiB`, `GiB`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A number of bytes, written canonically as `64KiB` etc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for ByteSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_size(self.0))
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format_size(self.0))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ByteSize, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_size(&text).map_err(serde::de::Error::custom)
    }
}

/// Why a text is not a size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid size {text:?} (use e.g. 512, 16KiB, 1MiB)")]
pub struct SizeError {
    pub text: String,
}

const UNITS: [(&str, u64); 4] = [
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
    ("B", 1),
];

/// Parses `<digits>` (bytes) or `<digits><unit>` with unit `B`, `KiB`, `MiB`
/// or `GiB`. Decimal units (`KB`) are refused rather than guessed at.
pub fn parse_size(text: &str) -> Result<ByteSize, SizeError> {
    let err = || SizeError {
        text: text.to_string(),
    };
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(digits_end);
    if digits.is_empty() {
        return Err(err());
    }
    let amount: u64 = digits.parse().map_err(|_| err())?;
    let per = if unit.is_empty() {
        1
    } else {
        UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, per)| *per)
            .ok_or_else(err)?
    };
    amount.checked_mul(per).map(ByteSize).ok_or_else(err)
}

/// The shortest exact text for `bytes`: `64KiB`, `1MiB`, `1000`.
pub fn format_size(bytes: u64) -> String {
    for (unit, per) in UNITS.iter().take(3) {
        if bytes != 0 && bytes.is_multiple_of(*per) {
            return format!("{}{unit}", bytes / per);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_bytes_and_binary_units() {
        assert_eq!(parse_size("512"), Ok(ByteSize(512)));
        assert_eq!(parse_size("512B"), Ok(ByteSize(512)));
        assert_eq!(parse_size("16KiB"), Ok(ByteSize(16 * 1024)));
        assert_eq!(parse_size("64KiB"), Ok(ByteSize(65_536)));
        assert_eq!(parse_size("1MiB"), Ok(ByteSize(1 << 20)));
        assert_eq!(parse_size("2GiB"), Ok(ByteSize(2 << 30)));
    }

    #[test]
    fn refuses_guesses() {
        for bad in [
            "",
            "KiB",
            "16KB",
            "16 kib",
            "1.5MiB",
            "-1",
            "16k",
            "99999999999GiB",
        ] {
            assert_eq!(
                parse_size(bad).unwrap_err().to_string(),
                format!("invalid size {bad:?} (use e.g. 512, 16KiB, 1MiB)")
            );
        }
    }

    #[test]
    fn formats_canonically_and_round_trips() {
        assert_eq!(format_size(65_536), "64KiB");
        assert_eq!(format_size(1 << 20), "1MiB");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(0), "0");
        for n in [0, 1, 1023, 1024, 1536, 1 << 20, 3 << 30] {
            assert_eq!(parse_size(&format_size(n)), Ok(ByteSize(n)));
        }
        let json = serde_json::to_string(&ByteSize(16384)).unwrap();
        assert_eq!(json, "\"16KiB\"");
        assert_eq!(
            serde_json::from_str::<ByteSize>(&json).unwrap(),
            ByteSize(16384)
        );
    }
}
