//! `[price]`: what a provider's tokens cost, in USD per million tokens.

use serde::{Deserialize, Serialize};

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Input tokens served from the provider's prompt cache; the input
    /// price when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_mtok: Option<f64>,
}

impl Price {
    /// The cost of one call: `input` tokens (of which `cached` came from
    /// the cache) and `output` tokens.
    /// Always finite (at most `f64::MAX`), whatever the counts and prices.
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let cached = cached.min(input);
        let fresh = (input - cached) as f64;
        let cached_rate = self.cached_input_per_mtok.unwrap_or(self.input_per_mtok);
        finite(
            (fresh * self.input_per_mtok
                + cached as f64 * cached_rate
                + output as f64 * self.output_per_mtok)
                / 1_000_000.0,
        )
    }
}

/// `a + b` in USD, saturating at `f64::MAX` instead of reaching infinity.
pub fn add_usd(a: f64, b: f64) -> f64 {
    finite(a + b)
}

/// `usd`, or `f64::MAX` where it overflowed (0 where it is not a number).
fn finite(usd: f64) -> f64 {
    if usd.is_nan() { 0.0 } else { usd.min(f64::MAX) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_tokens_times_price_per_million() {
        let price = Price {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cached_input_per_mtok: Some(0.3),
        };
        let cost = price.cost(1_000_000, 0, 100_000);
        assert!((cost - 4.5).abs() < 1e-12, "{cost}");
        let cached = price.cost(1_000_000, 500_000, 0);
        assert!((cached - 1.65).abs() < 1e-12, "{cached}");
        let uncached_rate = Price {
            cached_input_per_mtok: None,
            ..price
        };
        assert!((uncached_rate.cost(10, 10, 0) - 30e-6).abs() < 1e-15);
    }

    #[test]
    fn costs_stay_finite() {
        let dear = Price {
            input_per_mtok: f64::MAX,
            output_per_mtok: f64::MAX,
            cached_input_per_mtok: None,
        };
        let cost = dear.cost(u64::MAX, 0, u64::MAX);
        assert!(cost.is_finite(), "{cost}");
        assert_eq!(add_usd(cost, cost), f64::MAX);
        assert_eq!(add_usd(1.5, 2.0), 3.5);
    }
}
