//! What a baseline and an acceptance run record per test: the baseline's
//! inventory (fail-to-pass, pass-to-pass, where the names came from) and
//! the acceptance verdict against it. How they are made from a run's
//! results is the verdict module's.

use serde::{Deserialize, Serialize};

/// Where an inventory's names come from when the baseline could not
/// collect (or build) the hidden tests on the pristine source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InventorySource {
    /// The oracle's tree listed them (a trusted fix of the job's author).
    Oracle,
    /// The test functions the hidden test files define, read without
    /// running them: each must be listed and pass, every case of it.
    HiddenFiles,
}

impl InventorySource {
    pub fn describe(self) -> &'static str {
        match self {
            InventorySource::Oracle => "the oracle",
            InventorySource::HiddenFiles => "the hidden files",
        }
    }
}

/// Which tests the agent must make pass, and which must keep passing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    /// Failed at baseline: fail-to-pass (F2P).
    pub fail_to_pass: Vec<String>,
    /// Passed at baseline: pass-to-pass (P2P).
    pub pass_to_pass: Vec<String>,
    /// Set when the baseline could not collect the hidden tests and the
    /// names came from elsewhere; absent when the baseline listed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<InventorySource>,
    /// Tests left out of both lists because `[acceptance] flaky` names
    /// them: verdicts never count them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
}

impl Inventory {
    /// Leaves out of both lists every test `flaky` names (by its exact
    /// name), keeping which were left out.
    pub fn leave_out(&mut self, flaky: &[String]) {
        if flaky.is_empty() {
            return;
        }
        let mut left = Vec::new();
        for list in [&mut self.fail_to_pass, &mut self.pass_to_pass] {
            list.retain(|name| {
                let out = flaky.contains(name);
                if out {
                    left.push(name.clone());
                }
                !out
            });
        }
        left.sort();
        self.flaky = left;
    }

    /// Every name, F2P first.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.fail_to_pass.iter().chain(&self.pass_to_pass)
    }

    /// Whether names are test functions whose cases a run reports
    /// ([`InventorySource::HiddenFiles`]) rather than exact test names.
    pub fn names_functions(&self) -> bool {
        self.from == Some(InventorySource::HiddenFiles)
    }
}

/// An acceptance run judged test by test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub f2p_passed: usize,
    pub f2p_total: usize,
    pub p2p_passed: usize,
    pub p2p_total: usize,
    /// Inventory tests reported, but not passed.
    pub failing: Vec<String>,
    /// Inventory tests not reported at all.
    pub missing: Vec<String>,
    /// Of `failing`, those that did not finish before their timeout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timed_out: Vec<String>,
}

impl Verdict {
    /// Every F2P test passed and every P2P test still passes, each by name.
    pub fn passed(&self) -> bool {
        self.failing.is_empty() && self.missing.is_empty()
    }
}

#[cfg(test)]
mod flaky_tests {
    use super::*;

    #[test]
    fn flaky_tests_leave_both_lists_and_are_kept_apart() {
        let mut inventory = Inventory {
            fail_to_pass: vec!["a".into(), "coin".into()],
            pass_to_pass: vec!["b".into(), "dice".into()],
            ..Inventory::default()
        };
        inventory.leave_out(&["dice".into(), "coin".into(), "absent".into()]);
        assert_eq!(inventory.fail_to_pass, ["a"]);
        assert_eq!(inventory.pass_to_pass, ["b"]);
        assert_eq!(inventory.flaky, ["coin", "dice"]);
        // Nothing named: nothing changes, nothing recorded.
        let mut same = inventory.clone();
        same.leave_out(&[]);
        assert_eq!(same, inventory);
    }
}
