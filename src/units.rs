//! Parsing of human durations (`500ms`, `1s`, `2m`, `1h`) and byte sizes
//! (`512`, `64KiB`, `1MiB`, `2GiB`, `10kB`), as used on the command line
//! and in manifests.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("bad duration `{0}`: expected a whole number with a unit, e.g. 500ms, 30s, 2m, 1h")]
    Duration(String),
    #[error(
        "bad size `{0}`: expected a whole number with an optional unit, e.g. 4096, 64KiB, 1MiB"
    )]
    Size(String),
}

/// Splits `64KiB` into (64, "KiB").
fn split(text: &str) -> Option<(u64, &str)> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits == 0 {
        return None;
    }
    let value = text[..digits].parse().ok()?;
    Some((value, text[digits..].trim_start()))
}

pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let err = || UnitError::Duration(text.to_string());
    let (value, unit) = split(text).ok_or_else(err)?;
    let millis_per = match unit {
        "ms" => 1,
        "s" | "sec" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return Err(err()),
    };
    value
        .checked_mul(millis_per)
        .map(Duration::from_millis)
        .ok_or_else(err)
}

pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let err = || UnitError::Size(text.to_string());
    let (value, unit) = split(text).ok_or_else(err)?;
    let factor: u64 = match unit {
        "" | "B" => 1,
        "KiB" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return Err(err()),
    };
    value.checked_mul(factor).ok_or_else(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration(" 3 s "), Ok(Duration::from_secs(3)));
        for bad in ["", "s", "1", "1.5s", "-1s", "1d", "99999999999999999999s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("10kB"), Ok(10_000));
        for bad in ["", "KiB", "1.5MiB", "1TiB", "-1", "99999999999GiB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
