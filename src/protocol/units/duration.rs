//! Durations written as an integer and a unit: `500ms`, `90s`, `15m`, `1h`.

use std::time::Duration;

/// Why a text is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {text:?} (use e.g. 90s, 15m, 1h)")]
pub struct DurationError {
    pub text: String,
}

/// Parses `<digits><unit>` with unit `ms`, `s`, `m` or `h`. A bare number is
/// refused: whether `120` means seconds or milliseconds is a guess.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let err = || DurationError {
        text: text.to_string(),
    };
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(err)?;
    let (digits, unit) = trimmed.split_at(digits_end);
    if digits.is_empty() {
        return Err(err());
    }
    let amount: u64 = digits.parse().map_err(|_| err())?;
    let millis_per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(err()),
    };
    let millis = amount.checked_mul(millis_per_unit).ok_or_else(err)?;
    Ok(Duration::from_millis(millis))
}

/// The shortest exact text for `value` at millisecond precision: `15m`,
/// `90s`, `1h`, `1500ms`. `parse_duration(format_duration(d)) == d` for any
/// whole number of milliseconds.
pub fn format_duration(value: Duration) -> String {
    let millis = value.as_millis();
    if millis == 0 {
        return "0s".to_string();
    }
    for (unit, per) in [("h", 3_600_000u128), ("m", 60_000), ("s", 1_000)] {
        if millis.is_multiple_of(per) {
            return format!("{}{unit}", millis / per);
        }
    }
    format!("{millis}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("120s"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration(" 2s "), Ok(Duration::from_secs(2)));
    }

    #[test]
    fn refuses_ambiguous_or_malformed_text() {
        for bad in [
            "",
            "120",
            "15 minutes",
            "m",
            "1.5h",
            "-1s",
            "1d",
            "1H",
            "s1",
            "99999999999999999999s",
        ] {
            let err = parse_duration(bad).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("invalid duration {bad:?} (use e.g. 90s, 15m, 1h)")
            );
        }
    }

    #[test]
    fn formats_canonically_and_round_trips() {
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
        assert_eq!(format_duration(Duration::from_secs(90)), "90s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(format_duration(Duration::ZERO), "0s");
        for ms in [1, 999, 1000, 61_000, 3_600_000, 5_400_000] {
            let d = Duration::from_millis(ms);
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
    }
}
