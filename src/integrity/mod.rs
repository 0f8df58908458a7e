//! Integrity: what the runner finds out about an attempt that a fix has no
//! business doing, as tamper signals with their evidence
//! ([`crate::protocol::Signal`]), and what its canaries and twins show.
//!
//! - `guard.rs`: the workspace guard: non-editable files commands changed,
//!   created or deleted, checked before each verify and at the end of the agent
//!   phase against the pristine source, through `beneath/`; a verify-only job's
//!   workspace restored to the pristine source before each verify.
//! - `patch_scan.rs`: the patch's signals and which of its files acceptance
//!   keeps out (test infrastructure, harness internals); pure.
//! - `canary.rs`: judging the canaries of a run: on or off at the baseline,
//!   forged at acceptance; pure.
//! - `twins.rs`: judging its twins (copies of the hidden tests that must fail
//!   with a token): the baseline's calibration, forged and mismatched twins at
//!   acceptance; pure.
//!
//! What counts as a harness file, a test file, a build dir or a harness
//! internal is the language table's ([`crate::lang`]).
//!
//! Never does: decide an attempt's verdict (the runner does, from the
//! record), follow a symlink in a workspace (everything goes through
//! [`crate::beneath`]), or read the hidden tests for anything but their
//! names.

mod canary;
mod guard;
mod patch_scan;
mod twins;

pub(crate) use canary::{CanaryResult, acceptance_canaries, baseline_canaries};
pub(crate) use guard::WorkspaceGuard;
pub(crate) use patch_scan::{PatchFile, kept_out, named_exactly, patch_signals};
pub(crate) use twins::{TwinCase, TwinResult, acceptance_twins, baseline_twins, rerun_candidates};
