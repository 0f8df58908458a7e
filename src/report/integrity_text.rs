//! How every report words an attempt's integrity record: its evidence as
//! lines (each forged canary, then each signal), and how many were left
//! out of the record.

use crate::protocol::{Integrity, Signal};

/// The record's evidence, one line each: forged canaries first, then the
/// signals kept (`kind subject: evidence (steps a-b)`).
pub(super) fn evidence(record: &Integrity) -> Vec<String> {
    record
        .forged
        .iter()
        .cloned()
        .chain(record.signals.iter().map(Signal::line))
        .collect()
}

/// Signals found but not kept in the record (it keeps the first 100).
pub(super) fn left_out(record: &Integrity) -> usize {
    usize::try_from(record.signal_count)
        .unwrap_or(usize::MAX)
        .saturating_sub(record.signals.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SignalKind;

    #[test]
    fn forged_canaries_come_first_then_the_signals() {
        let mut record = Integrity {
            forged: vec!["the canary t::x was reported passed".into()],
            ..Integrity::default()
        };
        record.add([Signal::new(
            SignalKind::HarnessInternals,
            "calc.py",
            "the patch adds `_pytest`",
        )]);
        record.signal_count = 3;
        assert_eq!(
            evidence(&record),
            [
                "the canary t::x was reported passed",
                "harness_internals calc.py: the patch adds `_pytest`"
            ]
        );
        assert_eq!(left_out(&record), 2);
    }
}
