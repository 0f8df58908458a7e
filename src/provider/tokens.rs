//! Token estimates for providers that do not report usage (the scripted
//! provider): one token per four bytes, rounded up. Deterministic, so
//! reports of offline runs are reproducible; only an estimate of what a
//! real tokenizer would count.

use super::api::ProviderRequest;

/// Estimated tokens in `text`: `ceil(bytes / 4)`.
pub(crate) fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Estimated input tokens of `request`: its system prompt and messages.
pub(super) fn estimate_request(request: &ProviderRequest) -> u64 {
    estimate_tokens(&request.system)
        + request
            .messages
            .iter()
            .map(|m| estimate_tokens(&m.content))
            .sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_per_four_bytes() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("é"), 1);
    }
}
