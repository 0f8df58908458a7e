//! Token counts a reply reports, checked before anything adds them up: a
//! count is a whole number from 0 to [`MAX_TOKENS_PER_REPLY`]. A reply that
//! claims more (2^64-1 prompt tokens, say), a negative count or a fraction
//! is a provider error naming the number, never a total that wraps or a
//! budget that cannot trip.

use super::api::Usage;

/// The most input or output tokens one reply may claim. Far above any
/// model's context window; a claim beyond it is a broken or hostile server.
pub(crate) const MAX_TOKENS_PER_REPLY: u64 = 10_000_000;

/// Why a reported count is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UsageError {
    #[error("the reply claims a negative token count ({field} = {value})")]
    Negative { field: String, value: String },
    #[error("the reply's token count is not a whole number ({field} = {value})")]
    Fraction { field: String, value: String },
    #[error("the reply claims {value} {what} tokens, more than the 10,000,000 one reply may use")]
    TooMany { what: &'static str, value: String },
}

/// The count in `object[field]`: `None` when it is absent or not a number
/// (the caller estimates then), an error when it is negative, a fraction
/// or more than [`MAX_TOKENS_PER_REPLY`].
#[cfg(test)]
pub(crate) fn token_count(
    object: &serde_json::Value,
    field: &str,
) -> Result<Option<u64>, UsageError> {
    count_of(
        object.get(field).and_then(serde_json::Value::as_number),
        field,
    )
}

/// A reported `number` named `field`, checked as [`token_count`] does.
pub(super) fn count_of(
    number: Option<&serde_json::Number>,
    field: &str,
) -> Result<Option<u64>, UsageError> {
    let Some(number) = number else {
        return Ok(None);
    };
    let text = number.to_string();
    if let Some(n) = number.as_u64() {
        return within(n, field, &text).map(Some);
    }
    if number.as_i64().is_some_and(|n| n < 0) || number.as_f64().is_some_and(|f| f < 0.0) {
        return Err(UsageError::Negative {
            field: field.to_string(),
            value: text,
        });
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && f <= MAX_TOKENS_PER_REPLY as f64 => Ok(Some(f as u64)),
        Some(f) if f.fract() == 0.0 || f > MAX_TOKENS_PER_REPLY as f64 => {
            Err(UsageError::TooMany {
                what: what(field),
                value: text,
            })
        }
        _ => Err(UsageError::Fraction {
            field: field.to_string(),
            value: text,
        }),
    }
}

fn within(n: u64, field: &str, text: &str) -> Result<u64, UsageError> {
    if n > MAX_TOKENS_PER_REPLY {
        return Err(UsageError::TooMany {
            what: what(field),
            value: text.to_string(),
        });
    }
    Ok(n)
}

/// `input` or `output`, as a field's name says.
fn what(field: &str) -> &'static str {
    if field.contains("completion") || field.contains("output") {
        "output"
    } else {
        "input"
    }
}

impl Usage {
    /// The usage with its totals checked: input (cached tokens and cache
    /// writes included, added without wrapping) and output each at most
    /// [`MAX_TOKENS_PER_REPLY`], cached at most input.
    pub(crate) fn checked(self) -> Result<Usage, UsageError> {
        within(self.input, "input_tokens", &self.input.to_string())?;
        within(self.output, "output_tokens", &self.output.to_string())?;
        Ok(Usage {
            cached: self.cached.min(self.input),
            ..self
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_are_whole_numbers_up_to_the_limit() {
        let usage = json!({
            "ok": 12, "zero": 0, "max": 10_000_000, "float": 12.0,
            "huge": u64::MAX, "over": 10_000_001, "negative": -5,
            "half": 1.5, "big_float": 1e30, "text": "12",
        });
        assert_eq!(token_count(&usage, "ok"), Ok(Some(12)));
        assert_eq!(token_count(&usage, "zero"), Ok(Some(0)));
        assert_eq!(token_count(&usage, "max"), Ok(Some(10_000_000)));
        assert_eq!(token_count(&usage, "float"), Ok(Some(12)));
        assert_eq!(token_count(&usage, "absent"), Ok(None));
        assert_eq!(token_count(&usage, "text"), Ok(None));
        let e = token_count(&usage, "huge").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the reply claims 18446744073709551615 input tokens, more than the 10,000,000 one reply may use"
        );
        assert!(token_count(&usage, "over").is_err());
        assert_eq!(
            token_count(&usage, "negative").unwrap_err().to_string(),
            "the reply claims a negative token count (negative = -5)"
        );
        assert!(matches!(
            token_count(&usage, "half"),
            Err(UsageError::Fraction { .. })
        ));
        assert!(matches!(
            token_count(&usage, "big_float"),
            Err(UsageError::TooMany { .. })
        ));
        assert!(
            token_count(&json!({"completion_tokens": u64::MAX}), "completion_tokens")
                .unwrap_err()
                .to_string()
                .contains("output tokens")
        );
    }

    #[test]
    fn totals_are_checked_too() {
        let sum = Usage {
            input: 9_000_000u64.saturating_add(9_000_000),
            cached: 0,
            output: 1,
        };
        assert!(sum.checked().is_err());
        let fine = Usage {
            input: 10,
            cached: 20,
            output: 3,
        };
        assert_eq!(fine.checked().unwrap().cached, 10);
    }
}
