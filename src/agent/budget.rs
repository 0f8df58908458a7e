//! A spending cap shared by every worker of a batch (`--max-cost`): each
//! model call is checked against it before it starts and charged after it
//! returns, so the overshoot is at most the calls in flight when the cap
//! is reached.

use std::sync::Mutex;

use crate::protocol::Price;

/// USD spent against a cap.
#[derive(Debug)]
pub(crate) struct Budget {
    cap_usd: f64,
    spent_usd: Mutex<f64>,
}

impl Budget {
    /// A cap of `cap_usd`, `spent_usd` of it already spent (by earlier runs
    /// of the same batch, as the log says).
    pub(crate) fn new(cap_usd: f64, spent_usd: f64) -> Budget {
        Budget {
            cap_usd,
            spent_usd: Mutex::new(spent_usd.max(0.0)),
        }
    }

    pub(crate) fn cap_usd(&self) -> f64 {
        self.cap_usd
    }

    pub(crate) fn spent_usd(&self) -> f64 {
        *self.spent_usd.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the cap is reached: no new model call may start.
    pub(crate) fn exhausted(&self) -> bool {
        self.spent_usd() >= self.cap_usd
    }

    /// Charges one call of `input` (of which `cached`) and `output` tokens
    /// at `price`.
    pub(crate) fn charge(&self, price: &Price, input: u64, cached: u64, output: u64) {
        let mut spent = self.spent_usd.lock().unwrap_or_else(|p| p.into_inner());
        *spent = crate::protocol::add_usd(*spent, price.cost(input, cached, output));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_reached_by_charges_from_many_threads() {
        let price = Price {
            input_per_mtok: 1.0,
            output_per_mtok: 2.0,
            cached_input_per_mtok: None,
        };
        let budget = Budget::new(1.0, 0.25);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        // 1000 input + 500 output tokens: 0.002 USD.
                        budget.charge(&price, 1_000, 0, 500);
                    }
                });
            }
        });
        assert!(
            (budget.spent_usd() - 0.65).abs() < 1e-9,
            "{}",
            budget.spent_usd()
        );
        assert!(!budget.exhausted());
        budget.charge(&price, 1_000_000, 0, 0);
        assert!(budget.exhausted());
    }
}
